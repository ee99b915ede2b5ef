"""Seasons, quarters and fortnights open a window (memsieve.text.when_periods)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.text.when import read_when

NOW = datetime(2023, 10, 12, 9, 0, tzinfo=timezone.utc)  # a Thursday in autumn


def _days(question: str, now: datetime = NOW) -> tuple[str, str] | None:
    w = read_when(question, now).window
    return None if w is None else (w.start.date().isoformat(), w.end.date().isoformat())


@pytest.mark.parametrize("question, span", [
    # the latest summer that has ended, with two weeks' slack each side, cut at now
    ("Which lake did we swim in last summer?", ("2023-05-18", "2023-09-14")),
    ("What did I grow this summer?", ("2023-05-18", "2023-09-14")),
    ("Where did I travel in the spring?", ("2023-02-15", "2023-06-14")),
    # under way: up to now
    ("What have I baked in the fall?", ("2023-08-18", "2023-10-12")),
    ("What did I read in summer 2021?", ("2021-05-18", "2021-09-14")),
    # the winter of 2022 is the one its January is in
    ("Which boots did I wear during the winter of 2022?", ("2021-11-17", "2022-03-14")),
    ("I went skiing last winter, where was it?", ("2022-11-17", "2023-03-14")),
    ("What did I order a fortnight ago?", ("2023-09-23", "2023-10-03")),
    ("Who did I meet over the last fortnight?", ("2023-09-27", "2023-10-12")),
    ("How many books did I finish in Q3?", ("2023-06-24", "2023-10-07")),
    ("What were my sales in the first quarter of 2022?", ("2021-12-25", "2022-04-07")),
    ("Which clients did I sign last quarter?", ("2023-06-24", "2023-10-07")),
    ("What are my goals this quarter?", ("2023-09-24", "2023-10-12")),
])
def test_a_period_named_by_a_word_opens_its_window(question, span):
    assert _days(question) == span


@pytest.mark.parametrize("question", [
    "What should I plant this spring?",  # to come: months after last spring ended
    "Can you cut a quarter of the pie for me?",
    "Did I tell you about my fall on the ice?",
    "Which spring water brand do I buy?",
])
def test_words_that_only_look_like_a_period_open_none(question):
    assert _days(question) is None


def test_a_season_under_way_last_is_the_one_before():
    july = datetime(2024, 7, 20, tzinfo=timezone(timedelta(hours=-7)))
    assert _days("What did I grill last summer?", july) == ("2023-05-18", "2023-09-14")
    assert _days("What have I grilled this summer?", july) == ("2024-05-18", "2024-07-20")
    # the winter under way in January began the December before
    january = datetime(2024, 1, 10, tzinfo=timezone.utc)
    assert _days("Where did I ski this winter?", january) == ("2023-11-17", "2024-01-10")


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31)),
       st.sampled_from(["last", "this", "in the", "during the", "over the"]),
       st.sampled_from(["spring", "summer", "autumn", "fall", "winter"]))
def test_a_season_window_is_past_and_about_three_months(moment, which, season):
    now = moment.replace(tzinfo=timezone.utc)
    w = read_when(f"what did I do {which} {season}?", now).window
    if w is None:
        assert which == "this"
        return
    assert w.start <= now and w.end <= max(now, w.start)
    assert timedelta(days=14) <= w.end - w.start <= timedelta(days=92 + 28)
