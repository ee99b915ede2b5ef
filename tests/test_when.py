"""memsieve.text.when: a question's time window and order, read against a reference time."""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.text.when import COUNT_WORDS, read_when
from memsieve.text.when_told import events_dated

NOWS = st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2040, 12, 31))
WORDS = {v: k for k, v in COUNT_WORDS.items() if " " not in k and k not in ("a", "an", "few", "several")}


@settings(max_examples=200, deadline=None)
@given(now=NOWS, n=st.integers(1, 12), unit=st.sampled_from(["day", "week", "month", "year"]),
       spelled=st.booleans())
def test_n_units_ago_holds_that_day_and_ends_before_now(now, n, unit, spelled):
    count = WORDS[n] if spelled and n in WORDS else str(n)
    plural = "s" if n > 1 else ""
    when = read_when(f"What did I do {count} {unit}{plural} ago?", now)
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
    assert when.window is not None and when.window.start <= when.window.end
    assert when.window.holds(now - timedelta(days=days))
    assert when.window.end <= now.replace(hour=23, minute=59) + timedelta(days=1)
    if unit != "day" or n > 1:
        assert not when.window.holds(now + timedelta(days=2))


@settings(max_examples=200, deadline=None)
@given(now=NOWS, weekday=st.sampled_from(list(calendar.day_name)))
def test_last_weekday_is_the_one_before_now(now, weekday):
    when = read_when(f"Where did I go last {weekday}?", now)
    target = list(calendar.day_name).index(weekday)
    back = (now.weekday() - target) % 7 or 7
    day = (now - timedelta(days=back)).replace(hour=12)
    assert day.weekday() == target and when.window is not None and when.window.holds(day)
    assert when.window.end < now.replace(hour=0, minute=0) + timedelta(days=1)


@settings(max_examples=200, deadline=None)
@given(now=NOWS, month=st.integers(1, 12))
def test_a_month_name_means_its_latest_past_occurrence(now, month):
    name = calendar.month_name[month]
    when = read_when(f"What did I buy in {name}?", now)
    assert when.window is not None
    mid = when.window.start + (when.window.end - when.window.start) / 2
    assert mid.month == month
    assert when.window.start <= now  # never a month still to come
    assert now - when.window.start < timedelta(days=366)


@pytest.mark.parametrize("query, order", [
    ("What was the first car I owned?", "earliest"),
    ("Where did I originally plan to go?", "earliest"),
    ("Where do I currently work?", "latest"),
    ("What is my most recent purchase?", "latest"),
    ("How many plants do I have now?", "latest"),
    ("What is my favourite colour?", None),
    # "last" asks for the latest where it dates nothing ...
    ("What was the last concert I went to?", "latest"),
    ("When did I last see my dentist?", "latest"),
    ("Who did I call last?", "latest"),
    # ... and is a window, a period or no order at all elsewhere
    ("What did I cook last week?", None),
    ("Where did I go last Saturday?", None),
    ("What did I plant last spring?", None),
    ("How did Tim recover from his injury last season?", None),
    ("What did I buy in the last 10 days?", None),
    ("What is my last name?", None),
    ("I finished the puzzle at last, which one was it?", None),
    ("What did I do the weekend before last?", None),
    # "the first thing I did" orders; "first thing in the morning" does not
    ("What was the first thing I bought this year?", "earliest"),
    ("What do I do first thing in the morning?", None),
])
def test_order_words(query, order):
    assert read_when(query, datetime(2023, 5, 20)).order == order


@pytest.mark.parametrize("query, start, end", [
    ("What did I cook yesterday?", "2023-05-18", "2023-05-20"),
    ("Which film did I see last month?", "2023-03-25", "2023-05-08"),
    ("What did I read this month?", "2023-05-01", "2023-05-20"),
    ("What happened on March 5th, 2022?", "2022-03-04", "2022-03-06"),
    ("What did I do on 7 June?", "2022-06-06", "2022-06-08"),  # June 2023 is still to come
    ("Which class did I take in the past 3 weeks?", "2023-04-28", "2023-05-20"),
    # one unit before "last ...": 20 May 2023 is a Saturday
    ("What did I do the weekend before last?", "2023-05-05", "2023-05-08"),
    ("What did I cook the week before last?", "2023-04-29", "2023-05-09"),
    ("Which film did I see the month before last?", "2023-02-22", "2023-04-08"),
    ("Where did I travel the year before last?", "2020-12-18", "2022-01-14"),
    # the last weekend, in a question about the past
    ("What did I do over the weekend?", "2023-05-12", "2023-05-15"),
    ("Who did I meet on the weekend?", "2023-05-12", "2023-05-15"),
])
def test_windows_of_common_phrasings(query, start, end):
    w = read_when(query, datetime(2023, 5, 20, 10, 0)).window
    assert w is not None
    assert (w.start.date().isoformat(), w.end.date().isoformat()) == (start, end)


def test_no_time_words_no_window_and_time_zones_are_kept():
    assert read_when("What is my dog's name?", datetime(2023, 5, 20)).window is None
    now = datetime(2023, 5, 20, 10, 0, tzinfo=timezone.utc)
    w = read_when("What did I do two days ago?", now).window
    assert w is not None and w.start.tzinfo is timezone.utc and w.holds(now - timedelta(days=2))
    # impossible dates are no window, not an error
    assert read_when("What happened on February 30?", datetime(2023, 5, 20)).window is None


@pytest.mark.parametrize("query", [
    "What do we eat at Thanksgiving?",
    "Can you recommend a show or movie for me to watch tonight?",
    "What should I serve for dinner this weekend?",
    # a habit or a plan on "the weekend" names none
    "What do I usually do on the weekend?",
    "What should I do over the weekend?",
])
def test_what_is_to_come_has_no_window(query):
    assert read_when(query, datetime(2023, 5, 30, 12, 0)).window is None


def test_last_weekend_is_the_one_before_now():
    w = read_when("Where did I hike last weekend?", datetime(2023, 5, 31, 12, 0)).window  # a Wednesday
    assert w is not None and w.holds(datetime(2023, 5, 27, 12)) and w.holds(datetime(2023, 5, 28, 12))


@settings(max_examples=200, deadline=None)
@given(now=st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
       n=st.integers(0, 10**7), unit=st.sampled_from(["day", "week", "month", "year"]),
       form=st.sampled_from(["{n} {u}s ago", "the past {n} {u}s", "last {u}", "on March {d}", "yesterday",
                                         "the {u} before last", "over the weekend",
                                         "the {u} before March {d}", "{n} {u}s after 1 January 0001",
                                         "{n} hours ago", "{n} weekends ago", "{n} nights ago"]))
def test_a_window_beyond_the_calendar_is_no_window_never_an_error(now, n, unit, form):
    # "5,000 years ago" from 2023, "yesterday" on 1 January of year 1: no date to point at.
    q = "What did I do " + form.format(n=n, u=unit, d=1 + n % 31) + "?"
    when = read_when(q, now.replace(tzinfo=timezone.utc))
    assert when.window is None or when.window.start <= when.window.end


def test_events_dated_reads_each_phrase_against_when_the_text_was_said():
    said = datetime(2023, 4, 21, 15, 0, tzinfo=timezone.utc)
    text = ("I planted tomato saplings today. Two weeks ago I repotted the basil, "
            "and last month I cleaned my sneakers; my sister visited on March 3rd.")
    got = {w.phrase: w for w in events_dated(text, said)}
    assert set(got) == {"today", "two weeks ago", "last month", "march 3rd"}
    assert got["today"].holds(said)
    assert got["two weeks ago"].holds(said - timedelta(days=14))
    assert got["last month"].holds(datetime(2023, 3, 15, tzinfo=timezone.utc))
    assert not got["last month"].holds(said)
    assert got["march 3rd"].holds(datetime(2023, 3, 3, 12, tzinfo=timezone.utc))


@pytest.mark.parametrize("text", [
    "I've been running for the past six months.",  # a span up to now, not one event
    "I'm going hiking this weekend.",  # to come
    "Recently I have been baking a lot.",
    "Plan it for this month.",
    "Nothing here says when.",
])
def test_spans_and_plans_date_no_event(text):
    assert events_dated(text, datetime(2023, 4, 21, tzinfo=timezone.utc)) == ()


def test_events_dated_of_a_date_beyond_the_calendar_is_empty():
    early = datetime(3, 1, 1, tzinfo=timezone.utc)
    assert [w.phrase for w in events_dated("That was 9000 years ago, and yesterday.", early)] == ["yesterday"]
    assert events_dated("It happened 100000 years ago.", datetime(2023, 1, 1, tzinfo=timezone.utc)) == ()


@pytest.mark.parametrize("q", ["Which streaming service did I start using most recently?",
                               "Where did I travel most recently?"])
def test_most_recently_asks_for_the_latest_not_for_the_last_month(q):
    # "recently" alone is the past month; "most recently" ranks versions, whenever the newest was.
    when = read_when(q, datetime(2023, 5, 1, tzinfo=timezone.utc))
    assert when.window is None and when.order == "latest"
    assert read_when("What did I buy recently?", datetime(2023, 5, 1, tzinfo=timezone.utc)).window is not None


@pytest.mark.parametrize("query, start, end", [
    ("What did I do last Christmas?", "2023-12-24", "2023-12-26"),
    ("Where did I go last new year's eve?", "2023-12-30", "2024-01-01"),
    ("What did I dress up as last Halloween?", "2023-10-30", "2023-11-01"),
    ("What did we cook last Thanksgiving?", "2023-11-22", "2023-11-24"),  # November's fourth Thursday
    ("What did I do last Easter?", "2023-04-08", "2023-04-10"),  # 2024's (31 March) is to come on 1 March
    ("Where was I on Christmas 2022?", "2022-12-24", "2022-12-26"),
    ("What did I get on Valentine's Day 2023?", "2023-02-13", "2023-02-15"),
])
def test_a_holiday_with_a_word_or_a_year_that_says_which_one(query, start, end):
    w = read_when(query, datetime(2024, 3, 1)).window
    assert w is not None and (w.start.date().isoformat(), w.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize("query", [
    "What do we usually eat at Thanksgiving?",  # a habit, not a day
    "What am I cooking this Thanksgiving?",  # to come
    "Which movie do I watch during Christmas?",
])
def test_a_bare_holiday_or_one_to_come_names_no_window(query):
    assert read_when(query, datetime(2024, 3, 1)).window is None


def test_easter_and_the_counted_holidays_fall_on_their_days():
    from datetime import date

    from memsieve.text.when_holidays import easter, holiday_on

    assert [easter(y) for y in (2000, 2019, 2024, 2025)] == [date(2000, 4, 23), date(2019, 4, 21), date(2024, 3, 31),
                                                              date(2025, 4, 20)]
    assert holiday_on("memorial day", 2024) == date(2024, 5, 27)  # the last Monday of May
    assert holiday_on("labor day", 2024) == date(2024, 9, 2)
    assert holiday_on("mother's day", 2024) == date(2024, 5, 12)
    assert holiday_on("thanksgiving", 2024) == date(2024, 11, 28)


@pytest.mark.parametrize("query, start, end", [
    # 3 August 2023 is a Thursday: the seven days before it, and the date itself (a day's slack)
    ("What did John do the week before August 3, 2023?", "2023-07-26", "2023-08-04"),
    ("What puppy did she get two weeks before August 11, 2023?", "2023-07-25", "2023-08-12"),
    # 25 October 2022 is a Tuesday; 24 July 2023 and 28 October 2023 are a Monday and a Saturday
    ("What was shown on the Sunday before October 25, 2022?", "2022-10-22", "2022-10-26"),
    ("What did they do on the Monday before July 24, 2023?", "2023-07-16", "2023-07-25"),
    ("What did they plan for the Saturday after October 28, 2023?", "2023-10-27", "2023-11-05"),
    ("What did Maria do last weekend before April 10, 2023?", "2023-04-07", "2023-04-11"),
    ("What did I do the day after March 3, 2023?", "2023-03-02", "2023-03-05"),
])
def test_a_day_set_off_from_a_date_runs_from_that_day_to_the_date(query, start, end):
    w = read_when(query, datetime(2024, 1, 1, 12, 0)).window
    assert w is not None
    assert (w.start.date().isoformat(), w.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize("query", ["What did I do last weekend before the party?", "What did I do last weekend?"])
def test_a_set_off_without_a_date_leaves_the_window_as_it_was(query):
    w = read_when(query, datetime(2023, 5, 31, 12, 0)).window  # a Wednesday
    assert w is not None and w.holds(datetime(2023, 5, 27, 12)) and not w.holds(datetime(2023, 5, 20, 12))



@pytest.mark.parametrize("query, start, end", [
    # 28 June 2024 is a Friday, asked at noon
    ("What did I eat two nights ago?", "2024-06-25", "2024-06-27"),
    ("What did I do 3 hours ago?", "2024-06-27", "2024-06-29"),
    ("What did I do 48 hours ago?", "2024-06-25", "2024-06-27"),
    ("What did I buy three weekends ago?", "2024-06-07", "2024-06-10"),
    ("What have I done since Monday?", "2024-06-24", "2024-06-28"),
    ("What did I do this afternoon?", "2024-06-28", "2024-06-28"),
    ("Who did I meet the other week?", "2024-06-04", "2024-06-24"),
    # a bare holiday in a question about the past is the last one
    ("What did I do on New Year's Eve?", "2023-12-30", "2024-01-01"),
])
def test_windows_a_question_alone_names(query, start, end):
    w = read_when(query, datetime(2024, 6, 28, 12, 0)).window
    assert w is not None
    assert (w.start.date().isoformat(), w.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize("text", ["I got home 3 hours ago.", "We ate there two nights ago.", "I've been busy since Monday."])
def test_the_question_only_phrasings_date_no_event_a_text_tells(text):
    # a text's dates are read by the phrasings the gate and the events share (time_phrases, events_dated)
    assert events_dated(text, datetime(2024, 6, 28, 12, 0, tzinfo=timezone.utc)) == ()
