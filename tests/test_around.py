"""Events before or after another: "what did I buy before the standing desk?" (memsieve.read.around).

The question names no date; the date is the other event's. The events it asks about on the asked
side of that event come first, the nearest in time first, and nothing else moves.
"""

from __future__ import annotations

import pytest

from memsieve import Memory
from memsieve.read.around import around, set_off
from memsieve.text.lexicon import ENGLISH


@pytest.mark.parametrize("query, way, anchor, topic", [
    ("What did I buy before the standing desk?", "before", [{"stand", "stood"}, {"desk"}],
     {"buy", "bought", "order", "purchas"}),
    ("Where did I go right after I bought the headphones?", "after",
     [{"buy", "bought", "order", "purchas"}, {"headphon"}],
     {"go", "went", "gone", "visit", "travel", "fli", "flew", "flown", "drive", "drove", "driven", "trip", "head"}),
    # whom the question asks about is no topic: every turn of "Melanie: ..." says her name
    ("What did Melanie realize after the charity race?", "after", [{"chariti"}, {"race"}], {"realiz"}),
])
def test_what_a_question_sets_its_events_off_from(query, way, anchor, topic):
    s = set_off(query, ENGLISH)
    assert s is not None and (s.way, s.anchor, s.topic) == (way, tuple(map(frozenset, anchor)), frozenset(topic))


@pytest.mark.parametrize("query", [
    "What do I usually do before bed?",  # a habit, not the past
    "How many days after the concert did I go to Kyoto?",  # needs both events, not an order
    "What did I do before that?",  # nothing to set off from
    "What did I buy before?",
    "Before the desk?",
])
def test_questions_that_set_nothing_off(query):
    assert set_off(query, ENGLISH) is None


TEXTS = {1: "I bought a standing desk.", 2: "I bought a road bike.", 3: "I bought headphones.",
         4: "I went to Kyoto.", 5: "I bought a lamp.", 6: "I love my desk."}
DATES = {1: "2024-03-10T10:00:00", 2: "2024-01-05T10:00:00", 3: "2024-05-20T10:00:00",
         4: "2024-02-01T10:00:00", 5: "2024-02-20T10:00:00+00:00", 6: "2024-06-01T10:00:00"}


def test_the_events_on_the_asked_side_come_first_the_nearest_first():
    before = set_off("What did I buy before the standing desk?", ENGLISH)
    after = set_off("What did I buy after the standing desk?", ENGLISH)
    ranked = [1, 6, 3, 2, 4, 5]
    assert around(ranked, texts=TEXTS, dates=DATES, asked=before, lexicon=ENGLISH) == [5, 2, 1, 6, 3, 4]
    assert around(ranked, texts=TEXTS, dates=DATES, asked=after, lexicon=ENGLISH) == [3, 1, 6, 2, 4, 5]
    # another speaker's events stay where they were
    roles = {k: "user" for k in TEXTS} | {5: "assistant"}
    assert around(ranked, texts=TEXTS, dates=DATES, asked=before, lexicon=ENGLISH, roles=roles)[:2] == [2, 1]


def test_without_the_other_event_or_a_dated_one_nothing_moves():
    asked = set_off("What did I buy before the trip to Lisbon?", ENGLISH)
    ranked = [1, 6, 3, 2, 4, 5]
    assert around(ranked, texts=TEXTS, dates=DATES, asked=asked, lexicon=ENGLISH) == ranked
    desk = set_off("What did I buy before the standing desk?", ENGLISH)
    assert around(ranked, texts=TEXTS, dates={**DATES, 1: None}, asked=desk, lexicon=ENGLISH) == ranked
    assert around([], texts=TEXTS, dates=DATES, asked=desk, lexicon=ENGLISH) == []


TOLD = [("2024-01-05T10:00:00", "I bought a new road bike, a Trek Domane."),
        ("2024-02-10T10:00:00", "I went to Lisbon for a long weekend."),
        ("2024-03-10T10:00:00", "I bought a standing desk for my office."),
        ("2024-03-20T10:00:00", "I went to a Taylor Swift concert in Chicago."),
        ("2024-04-10T10:00:00", "I went to Kyoto with my sister."),
        ("2024-05-20T10:00:00", "I bought noise-cancelling headphones."),
        ("2024-06-01T10:00:00", "I went to Denver for a conference."),
        ("2024-06-02T10:00:00", "I usually read a chapter before bed.")]


@pytest.fixture()
def told(tmp_path, embedder):
    m = Memory(tmp_path / "told.db", embedder=embedder)
    for when, text in TOLD:
        m.add(text, user_id="u", valid_from=when)
    yield m
    m.close()


@pytest.mark.parametrize("query, first", [
    ("What did I buy before the standing desk?", "I bought a new road bike, a Trek Domane."),
    ("What did I buy after the standing desk?", "I bought noise-cancelling headphones."),
    ("Where did I go after the Taylor Swift concert?", "I went to Kyoto with my sister."),
    ("Where did I go right after I bought the headphones?", "I went to Denver for a conference."),
    ("What did I buy before my trip to Kyoto?", "I bought a standing desk for my office."),
    ("Which trip came after the Taylor Swift concert?", "I went to Kyoto with my sister."),
])
def test_a_search_puts_the_events_before_or_after_another_first(told, query, first):
    hits = told.search(query, user_id="u", limit=3, reference_time="2024-07-01T00:00:00")
    assert hits[0].text == first, [h.text for h in hits]


def test_a_habit_before_something_is_ranked_as_usual(told):
    hits = told.search("What do I do before bed?", user_id="u", limit=3)
    assert hits[0].text == "I usually read a chapter before bed."


def test_without_the_other_event_a_search_returns_the_usual_results(tmp_path, embedder, monkeypatch):
    # a chat scope, where the speaker stage raises the user's turns over as many results as asked
    import memsieve.read.search as search

    m = Memory(tmp_path / "chat.db", embedder=embedder)
    for when, text in TOLD:
        m.add([{"role": "user", "content": text}, {"role": "assistant", "content": "Shopping before a trip is a good idea."}],
              user_id="u", valid_from=when)
    query = "What did I buy before my trip to Reykjavik?"  # no memory says Reykjavik
    assert search.set_off(query, m.lexicon) is not None
    read = [h.id for h in m.search(query, user_id="u", limit=4)]
    monkeypatch.setattr(search, "set_off", lambda *a, **k: None)
    assert [h.id for h in m.search(query, user_id="u", limit=4)] == read
    m.close()


def test_at_most_three_events_are_put_first_the_nearest():
    texts = {k: f"I bought item number {k}." for k in range(1, 9)} | {9: "I bought a standing desk."}
    dates = {k: f"2024-0{k}-01T10:00:00" for k in range(1, 9)} | {9: "2024-09-15T10:00:00"}
    asked = set_off("What did I buy before the standing desk?", ENGLISH)
    ranked = [9, 1, 2, 3, 4, 5, 6, 7, 8]
    assert around(ranked, texts=texts, dates=dates, asked=asked, lexicon=ENGLISH) == [8, 7, 6, 9, 1, 2, 3, 4, 5]
