"""What a user says comes back as said: a data-fidelity review's findings, each a class of loss.

- a value told by its sign ("-5" / "5", "O+" / "O-", "C++" / "C#"), which the index drops;
- a filler word put in place of a content word ("the right side" / "the left side", "I like jazz" /
  "I hate jazz"), which the alignment passed over as a filler;
- a message's role overwritten by a metadata key of the same name;
- the last minute of a month or a year outside a window that names it.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from memsieve import InvalidInputError, Memory
from memsieve.text.when import read_when


@pytest.fixture
def m(tmp_path, embedder):
    with Memory(tmp_path / "f.db", embedder=embedder) as memory:
        yield memory


CHANGES = [
    ("It was -5 degrees outside this morning.", "It was 5 degrees outside this morning."),
    ("My blood type is O+.", "My blood type is O-."),
    ("I got a B+ in organic chemistry.", "I got a B- in organic chemistry."),
    ("I mostly write C++ at work.", "I mostly write C# at work."),
    ("The pharmacy is on the left side of Main Street.", "The pharmacy is on the right side of Main Street."),
    ("I think the test was wrong.", "I think the test was right."),
    ("I hate jazz.", "I like jazz."),
    ("I'm a little nervous about the interview.", "I'm pretty nervous about the interview."),
]

RESTATEMENTS = [
    ("I really like jazz.", "I like jazz."),
    ("Yeah, I love hiking in the Alps.", "I love hiking in the Alps."),
    ("I'm very tired after work.", "I'm really tired after work."),
    ("My blood type is O+.", "my blood type is O+"),
]


@pytest.mark.parametrize("before, after", CHANGES)
def test_a_change_told_by_a_sign_or_a_filler_is_stored(m, before, after):
    m.add(before, user_id="ana")
    (d,) = m.add(after, user_id="ana")
    assert d.event == "ADD", d.reason
    assert after in {h.text for h in m.search(after, user_id="ana", limit=5)}


@pytest.mark.parametrize("before, after", RESTATEMENTS)
def test_a_filler_added_or_traded_for_a_filler_still_folds(m, before, after):
    m.add(before, user_id="ana")
    (d,) = m.add(after, user_id="ana")
    assert d.event == "NOOP", d.reason


def test_a_messages_role_and_a_metadata_role_that_clash_are_refused_before_anything_is_written(m):
    with pytest.raises(InvalidInputError, match=r"message 0: the message's role 'user' and metadata\['role'\]"):
        m.add([{"role": "user", "content": "I manage the Lisbon office."}], user_id="ana",
              metadata={"role": "manager"})
    with pytest.raises(InvalidInputError, match=r"item 1: the message's role 'assistant'"):
        m.add_many(["I swim.", {"content": "Noted.", "role": "assistant", "metadata": {"role": "coach"}}],
                   user_id="ana")
    assert m.get_all(user_id="ana") == []
    # the same role said twice is no clash
    (d,) = m.add([{"role": "user", "content": "I manage the Lisbon office."}], user_id="ana",
                 metadata={"role": "user"})
    assert m.get(d.memory_id).metadata["role"] == "user"


@pytest.mark.parametrize("question, last", [
    ("what did I do in March 2024", "2024-03-31T23:59:59.999999+00:00"),
    ("what did I do in 2023", "2023-12-31T23:59:59.999999+00:00"),
    ("what did I do last month", "2024-03-31T23:59:59.999999+00:00"),
])
def test_a_window_holds_its_last_second(question, last):
    window = read_when(question, datetime.fromisoformat("2024-04-15T12:00:00+00:00")).window
    assert window is not None and window.holds(datetime.fromisoformat(last))
    assert window.holds(datetime.fromisoformat(last.replace("59.999999", "30")))
