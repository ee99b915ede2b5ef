"""A thing done, told on another day, is an event of its own: the gate does not fold it.

"Caroline attended a pride parade recently" told in August reads, to the novelty gate and the
information term, as a rewording of "Caroline attended an LGBTQ+ pride parade last week" told
in July, and was folded into it: a reader then saw one parade where there were two, and "how
many parades?" or "when did she go in August?" found only the July one. A reader sees the day
of the memory a text was folded into, never the text's own. When the text tells of a thing done
(memsieve.text.events) and the memory it would fold into was told on another day, the text is
stored and linked ``near`` the memory. The same pair told on one day is still folded (it may be
one event told twice), and so is a state told again on another day. Real ONNX embedder, real
SQLite.
"""

from __future__ import annotations

import dataclasses

import pytest

from memsieve import Memory
from memsieve.write.path import told_apart

_FILLER = ["Caroline is interested in counseling and mental health work.", "Caroline has a dog named Oscar.",
           "Melanie paints landscapes on weekends.", "Caroline loves reading fantasy novels.",
           "Melanie's kids are excited about summer break."]
_FIRST_DAY = "2023-07-03T09:00:00"


def _told_twice(path, first: str, later: str, *, later_on: str):
    """Store the filler and ``first`` (told on 3 July), then offer ``later`` told at ``later_on``."""
    mem = Memory(str(path))
    for text in _FILLER:
        mem.add(text, user_id="u", infer=False, valid_from="2023-06-01T10:00:00")
    (a,) = mem.add(first, user_id="u", infer=False, valid_from=_FIRST_DAY)
    (d,) = mem.add(later, user_id="u", infer=False, valid_from=later_on)
    return mem, a, d


_EVENTS = [
    ("Caroline attended an LGBTQ+ pride parade last week and felt a sense of belonging and happiness.",
     "Caroline attended a pride parade recently and felt inspired by the community's energy and support."),
    ("Nate made vegan ice cream last Friday and shared it with his vegan diet group.",
     "Nate recently taught vegan ice cream recipes on his cooking show and learned some new recipes."),
    ("I went to the gym this morning.", "This morning I went to the gym."),
    ("I ran a 5k race downtown.", "Downtown, I ran a 5k race."),
    ("We visited the art museum.", "We visited the museum of art."),
]


@pytest.mark.parametrize("first, later", _EVENTS)
def test_a_thing_done_told_on_one_day_is_folded(tmp_path, first, later):
    # the control: without another day, the gate folds these (else the test below proves nothing)
    mem, a, d = _told_twice(tmp_path / "m.db", first, later, later_on="2023-07-03T18:00:00")
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason
    mem.close()


@pytest.mark.parametrize("first, later", _EVENTS)
def test_a_thing_done_told_on_another_day_is_stored_as_another_event(tmp_path, first, later):
    mem, a, d = _told_twice(tmp_path / "m.db", first, later, later_on="2023-08-14T10:00:00")
    assert d.event == "ADD" and d.layer == "novelty", d.reason
    assert "told on 2023-08-14" in d.reason and "told on 2023-07-03" in d.reason, d.reason
    assert "an event of its own" in d.reason, d.reason
    # a neighbour, not a newer version: the first event is not superseded
    assert d.linked_to == a.memory_id and d.link_kind == "near"
    texts = [h.text for h in mem.search(later, user_id="u", limit=3)]
    assert later in texts and first in texts
    mem.close()


_INTO_STATES = [
    ("Audrey plays fetch with a ball or frisbee with her dogs and organizes doggie playdates in the park.",
     "Audrey took her dogs to the park and enjoys watching them run around and play without a leash."),
    ("Melanie loves pottery and finds it relaxing.", "Melanie made a bowl in pottery class and found it relaxing."),
]


@pytest.mark.parametrize("first, later", _INTO_STATES)
def test_a_thing_done_is_not_folded_into_a_state_told_on_another_day(tmp_path, first, later):
    mem, a, d = _told_twice(tmp_path / "one.db", first, later, later_on="2023-07-03T18:00:00")
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason  # the control: one day folds
    mem.close()
    mem, a, d = _told_twice(tmp_path / "two.db", first, later, later_on="2023-08-14T10:00:00")
    assert d.event == "ADD" and "an event of its own" in d.reason, d.reason
    assert d.linked_to == a.memory_id and d.link_kind == "near"
    mem.close()


@pytest.mark.parametrize("first, later", [
    ("I love hiking in the mountains.", "I love hiking in mountains!"),
])
def test_a_state_told_again_on_another_day_is_still_folded(tmp_path, first, later):
    mem, a, d = _told_twice(tmp_path / "m.db", first, later, later_on="2023-08-14T10:00:00")
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason
    mem.close()


_LONG = ("This morning I went to the gym, then I swam laps in the pool with my sister and we had "
         "breakfast at a diner.")


def test_the_band_does_not_fold_a_thing_done_on_another_day_either(tmp_path):
    # one day: the band's fold takes it, as its nearest memory says every word of it
    mem, a, d = _told_twice(tmp_path / "one.db", _LONG, "I swam laps in the pool.", later_on="2023-07-03T18:00:00")
    assert (d.event, d.layer, d.memory_id) == ("NOOP", "band", a.memory_id), d.reason
    mem.close()
    mem, a, d = _told_twice(tmp_path / "two.db", _LONG, "I swam laps in the pool.", later_on="2023-08-14T10:00:00")
    assert (d.event, d.layer) == ("ADD", "band"), d.reason
    assert "an event of its own" in d.reason and "2023-08-14" in d.reason, d.reason
    assert d.link_kind == "near" and d.linked_to == a.memory_id
    mem.close()


def test_a_day_is_the_one_the_caller_gave_in_its_own_offset(tmp_path):
    mem = Memory(str(tmp_path / "m.db"))
    (a,) = mem.add("I went to the gym.", user_id="u", infer=False, valid_from="2023-07-03T23:30:00-05:00")
    item = mem.get(a.memory_id, user_id="u")
    # 23:30 at -05:00 is 4 July in UTC and 3 July where it was told
    assert told_apart("2023-07-03T08:00:00-05:00", item) is None
    assert told_apart("2023-07-04T08:00:00-05:00", item) == ("2023-07-04", "2023-07-03")
    # without a valid_from, the day a memory was written
    undated = dataclasses.replace(item, valid_from=None, valid_from_offset=None,
                                  created_at="2023-09-01T12:00:00+00:00")
    assert told_apart("2023-09-01T20:00:00+00:00", undated) is None
    assert told_apart("2023-09-02T08:00:00+00:00", undated) == ("2023-09-02", "2023-09-01")
    mem.close()


def test_texts_added_without_a_date_are_told_on_the_day_they_are_written(tmp_path):
    # the same day (now) for both: the pair folds as before
    mem = Memory(str(tmp_path / "m.db"))
    for text in _FILLER:
        mem.add(text, user_id="u", infer=False)
    (a,) = mem.add("I went to the gym this morning.", user_id="u", infer=False)
    (d,) = mem.add("This morning I went to the gym.", user_id="u", infer=False)
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason
    mem.close()


def test_a_chat_turn_of_the_same_speaker_on_another_day_is_kept_too(tmp_path):
    mem = Memory(str(tmp_path / "m.db"))
    items = [{"content": t, "role": "user", "valid_from": "2023-06-01T10:00:00"} for t in _FILLER]
    items.append({"content": "I went to the gym this morning.", "role": "user", "valid_from": _FIRST_DAY})
    items.append({"content": "This morning I went to the gym.", "role": "user", "valid_from": "2023-07-10T08:00:00"})
    decisions = [d for ds in mem.add_many(items, user_id="u") for d in ds]
    last = decisions[-1]
    assert last.event == "ADD" and "an event of its own" in last.reason, last.reason
    assert len(mem.search("gym", user_id="u", limit=5, mode="keyword")) == 2
    mem.close()


@pytest.mark.parametrize("first, later", _EVENTS[2:])
def test_consolidation_does_not_merge_things_done_on_different_days(tmp_path, first, later):
    from memsieve import GateConfig

    def merges(later_on: str) -> int:
        # every text stored (profile "none"), so that consolidation, not the gate, meets the pair
        with Memory(str(tmp_path / f"{later_on[:10]}.db"), gate=GateConfig(profile="none")) as mem:
            for text in _FILLER:
                mem.add(text, user_id="u", infer=False, valid_from="2023-06-01T10:00:00")
            mem.add(first, user_id="u", infer=False, valid_from=_FIRST_DAY)
            mem.add(later, user_id="u", infer=False, valid_from=later_on)
            report = mem.consolidate(user_id="u")
            assert mem.stats(user_id="u")["active_memories"] == 7 - len(report.merges)
            return len(report.merges)

    assert merges("2023-07-03T18:00:00") == 1  # told on one day: duplicates, merged
    assert merges("2023-08-14T10:00:00") == 0  # two visits, two memories
