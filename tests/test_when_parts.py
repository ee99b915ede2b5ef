"""Windows a question names by a part of a period, by hours or decades, or in other words for a
unit the calendar readers know (memsieve.text.when_parts, read by memsieve.text.when).

Each case is read against one reference time, a Wednesday; a window is compared by its first
and last day. None means the question names no window.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memsieve import GateConfig, Memory
from memsieve.text.when import read_when

from conftest import TableEmbedder, unit

NOW = datetime(2025, 8, 20, 15, 0, tzinfo=timezone.utc)  # a Wednesday


def _span(q: str, now: datetime = NOW) -> tuple[str, str] | None:
    w = read_when(q, now).window
    return None if w is None else (w.start.date().isoformat(), w.end.date().isoformat())


@pytest.mark.parametrize(("question", "span"), [
    # hours: from the start of the day they reach back to, up to now
    ("What did I buy in the last 48 hours?", ("2025-08-18", "2025-08-20")),
    ("Who did I call in the past 24 hrs?", ("2025-08-19", "2025-08-20")),
    # thirds of a month: days 1-10, 11-20, 21 to the end; a day before, a week after (told later)
    ("What did I do in early July?", ("2025-06-30", "2025-07-17")),
    ("Where did I eat in mid-July?", ("2025-07-10", "2025-07-27")),
    ("What did I read in late July?", ("2025-07-20", "2025-08-07")),
    ("What did I fix at the beginning of July 2024?", ("2024-06-30", "2024-07-17")),
    ("What did I cook at the end of last month?", ("2025-07-20", "2025-08-07")),
    ("What did I buy at the start of this month?", ("2025-07-31", "2025-08-17")),
    # without a year, the latest such part that has begun: late August has not, December is last year's
    ("What did I plant in late August?", ("2024-08-20", "2024-09-07")),
    ("Where did I travel in early December?", ("2024-11-30", "2024-12-17")),
    # thirds of a year, a week's slack
    ("What did I learn in early 2024?", ("2023-12-25", "2024-05-07")),
    ("What did I build at the end of last year?", ("2024-10-25", "2025-01-07")),
    # a week of a month
    ("Which country was I in during the second week of July?", ("2025-07-07", "2025-07-21")),
    ("What did I do in the first week of March 2023?", ("2023-02-28", "2023-03-14")),
    # other words for units already read
    ("What did I do this past Monday?", ("2025-08-17", "2025-08-19")),
    ("What did I watch the previous month?", _span("What did I watch last month?")),
    ("What did I eat the prior week?", _span("What did I eat last week?")),
    ("What did I buy 2 wks ago?", _span("What did I buy 2 weeks ago?")),
    ("Where did I live 3 yrs ago?", _span("Where did I live 3 years ago?")),
    # decades
    ("Where did I live a decade ago?", ("2014-07-01", "2016-12-31")),
    ("What music did I like in the 90s?", ("1990-01-01", "1999-12-31")),
    ("What did I study in the 2010s?", ("2010-01-01", "2019-12-31")),
    # a day of this month, else of the last
    ("What did I do on the 15th?", ("2025-08-14", "2025-08-16")),
    ("What did I do on the 25th?", ("2025-07-24", "2025-07-26")),
])
def test_a_part_of_a_period_is_its_window(question, span):
    assert span is not None
    assert _span(question) == span


@pytest.mark.parametrize("question", [
    "What do I usually pay at the end of the month?",   # a habit, not a past stretch
    "What is a good late-night snack?",
    "Which mid-range laptop should I get?",
    "My flat is on the 3rd floor; is that high?",
    "Did I win on the 2nd try?",
    "What early music do I like?",
    "How many hours did I work?",
])
def test_words_that_name_no_part_of_a_period_name_no_window(question):
    assert _span(question) is None


def test_a_week_or_weekend_of_a_month_and_a_holiday_after_last_order_nothing():
    first_week = read_when("What did I do in the first week of July?", NOW)
    assert first_week.order is None and first_week.window is not None
    assert read_when("What did I do the first weekend of August 2023?", NOW).order is None
    christmas = read_when("What did I get last Christmas?", NOW)
    assert christmas.order is None and christmas.window is not None
    assert christmas.window.holds(datetime(2024, 12, 25, 12, tzinfo=timezone.utc))
    assert read_when("Which race did I win in the beginning of May 2024?", NOW).order is None
    # "first", "in the beginning" and "last" still order where they date nothing
    assert read_when("What was the first car I owned?", NOW).order == "earliest"
    assert read_when("What was my job in the beginning?", NOW).order == "earliest"
    assert read_when("Who was the first of my friends to marry?", NOW).order == "earliest"
    assert read_when("What was the last concert I went to?", NOW).order == "latest"


def test_search_raises_the_memory_told_in_the_part_of_the_month_asked_about(tmp_path):
    early = "I went to a ceramics workshop with Mia."
    late = "I went to a weaving workshop with Mia."
    asked = "Which workshop did I go to with Mia in late July?"
    v = unit(1, 0.2)
    table = {early: v, late: v, asked: unit(1, 0)}
    mem = Memory(tmp_path / "m.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    mem.add(late, user_id="u", valid_from="2025-07-26T10:00:00")
    mem.add(early, user_id="u", valid_from="2025-07-03T10:00:00")
    plain = [h.text for h in mem.search(asked.replace(" in late July", ""), user_id="u", limit=2,
                                        reference_time=NOW.isoformat())]
    hits = [h.text for h in mem.search(asked, user_id="u", limit=2, reference_time=NOW.isoformat())]
    assert hits[0] == late
    early_q = asked.replace("late July", "early July")
    assert [h.text for h in mem.search(early_q, user_id="u", limit=2, reference_time=NOW.isoformat())][0] == early
    assert set(plain) == {early, late}
