"""A query's "now" against hostile questions: words that are no dates, order words inside nouns,
trailing spans, dates in other spellings, "since", the asker's UTC offset, long texts, bad tzinfos."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import InvalidInputError, MemsieveError
from memsieve.inputs import iso_time
from memsieve.read.when import focus
from memsieve.text import when_spans
from memsieve.text.when import read_when
from memsieve.text.when_told import events_dated, time_phrases

from conftest import TableEmbedder, unit

UTC = timezone.utc
NOW = datetime(2025, 8, 20, 15, 0, tzinfo=UTC)  # a Wednesday, in a common year


def _span(q: str, now: datetime = NOW) -> tuple[str, str] | None:
    w = read_when(q, now).window
    return None if w is None else (w.start.date().isoformat(), w.end.date().isoformat())


# ---- 1. ordinary words are no months -------------------------------------------------------

@pytest.mark.parametrize("q", [
    "This may seem odd, but which instrument do I play?",
    "This May seem odd, but which instrument do I play?",
    "It's in May's garage, what colour is her bike?",
    "Which mug did I forget in Aug's kitchen?",
    "What did we order in Jun Ming's noodle bar?",
    "Which hostel did I book in Oct Hill village?",
    "Can a scout march 12 kilometers in a day?",
    "I think 2 may be enough chairs, how many do I own?",
    "Is the dog of April's neighbour friendly?",
])
def test_words_that_only_look_like_months_open_no_window(q):
    assert read_when(q, NOW).window is None


@pytest.mark.parametrize("q, span", [
    ("What did I plant in May?", ("2025-05-01", "2025-05-31")),
    ("What did I plant in may and june?", ("2025-05-01", "2025-05-31")),
    ("In Jan, what did I buy?", ("2025-01-01", "2025-01-31")),
    ("What happened on Jun 3?", ("2025-06-02", "2025-06-04")),
    ("Where was I on the 4th of may?", ("2025-05-03", "2025-05-05")),
])
def test_months_that_are_said_still_open_their_window(q, span):
    assert _span(q) == span


# ---- 2. "first" inside a noun; the present wins -------------------------------------------

@pytest.mark.parametrize("q, order", [
    ("Which first-class stamps do I have?", None),
    ("What is my first language?", None),
    ("Who lives on the first floor of my building?", None),
    ("First of all, what is my cat called?", None),
    ("Which drawer holds the first aid supplies at the moment?", "latest"),
    ("I first met Rosa in Lisbon; where does she live these days?", "latest"),
    ("Where did I originally study, and what do I do currently?", "latest"),
    ("What was the first concert I went to?", "earliest"),
    ("When was the first time I baked bread?", "earliest"),
    ("What was my earliest job, and which was the most recent?", "earliest"),
])
def test_first_inside_a_noun_orders_nothing_and_the_present_wins(q, order):
    assert read_when(q, NOW).order == order


KIT_OLD = "I keep the first aid pouch in the garage cabinet."
KIT_NEW = "I moved the first aid pouch to the glovebox of my car."
KIT_Q = "Where is the first aid pouch kept now?"


def test_the_current_version_leads_when_first_is_part_of_a_noun(tmp_path):
    table = {KIT_OLD: unit(1, 0.05), KIT_NEW: unit(1, 0.3), KIT_Q: unit(1, 0)}
    m = Memory(tmp_path / "kit.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add(KIT_OLD, user_id="u", valid_from="2022-04-02")
    m.add(KIT_NEW, user_id="u", valid_from="2025-05-18")
    hits = m.search(KIT_Q, user_id="u", mode="dense", limit=2, reference_time="2025-08-20")
    assert hits[0].text == KIT_NEW
    m.close()


# ---- 3. trailing spans against calendar ones -----------------------------------------------

@pytest.mark.parametrize("q", ["What did I read during the last month?", "Which films did I see within the last month?",
                               "How much did I run for the last month?"])
def test_the_last_month_is_the_trailing_one(q):
    w = read_when(q, NOW).window
    assert w is not None and w.holds(datetime(2025, 8, 10, tzinfo=UTC)) and w.holds(datetime(2025, 7, 25, tzinfo=UTC))
    assert not w.holds(datetime(2025, 7, 5, tzinfo=UTC)) and w.end == NOW


def test_the_last_year_and_week_are_trailing_bare_ones_calendar():
    trailing = read_when("Which countries did I visit throughout the last year?", NOW).window
    assert trailing is not None and trailing.holds(datetime(2025, 3, 1, tzinfo=UTC))
    assert trailing.holds(datetime(2024, 9, 1, tzinfo=UTC)) and not trailing.holds(datetime(2024, 3, 1, tzinfo=UTC))
    calendar_year = read_when("Which countries did I visit last year?", NOW).window
    assert calendar_year is not None and calendar_year.holds(datetime(2024, 3, 1, tzinfo=UTC))
    assert not calendar_year.holds(datetime(2025, 3, 1, tzinfo=UTC))
    week = read_when("What did I cook in the last week?", NOW).window
    assert week is not None and week.holds(NOW - timedelta(days=1)) and week.end == NOW
    assert _span("What did I cook the last 10 days?") == ("2025-08-09", "2025-08-20")
    # "the last week of July" is July's last seven days (a day's slack), not a trailing week
    assert _span("What did I do the last week of July?") == ("2025-07-24", "2025-08-07")


# ---- 4. dates in other spellings -----------------------------------------------------------

@pytest.mark.parametrize("q, span", [
    ("What gifts did I get for my graduation in 2021?", ("2021-01-01", "2021-12-31")),
    ("Where did I live throughout 2020?", ("2020-01-01", "2020-12-31")),
    ("What happened on 2023-11-05?", ("2023-11-04", "2023-11-06")),
    ("What happened on 11/5/2023?", ("2023-11-04", "2023-11-06")),  # month first
    ("What happened on 23/4/2022?", ("2022-04-22", "2022-04-24")),  # only day-first can be read
    ("What happened on 11/5?", ("2024-11-04", "2024-11-06")),
    ("Which play did I see October 2022?", ("2022-10-01", "2022-10-31")),
    ("What did I bake on oct. 7?", ("2024-10-06", "2024-10-08")),
    ("What did I bake on Sept 9?", ("2024-09-08", "2024-09-10")),
    ("Who called last thurs?", ("2025-08-13", "2025-08-15")),
    ("What did I buy a month and a half ago?", None),  # checked below
    ("What did I eat the day before yesterday?", ("2025-08-17", "2025-08-19")),
    ("What did I do on 29 February?", ("2024-02-28", "2024-03-01")),  # 2025 has none: 2024's
    ("What did I do on 2/29?", ("2024-02-28", "2024-03-01")),
])
def test_dates_in_other_spellings(q, span):
    if span is None:
        w = read_when(q, NOW).window
        assert w is not None and w.holds(NOW - timedelta(days=45)) and not w.holds(NOW - timedelta(days=28))
        return
    assert _span(q) == span


def test_halves_are_not_whole_units():
    half = read_when("What did I start half a month ago?", NOW).window
    assert half is not None and half.holds(NOW - timedelta(days=15)) and not half.holds(NOW - timedelta(days=30))
    more = read_when("Where did I go one and a half years ago?", NOW).window
    assert more is not None and more.holds(NOW - timedelta(days=548)) and not more.holds(NOW - timedelta(days=365))
    assert "1.5 week ago" in time_phrases("We met a week and a half ago.")
    assert "1 year ago" not in time_phrases("We met half a year ago.")


def test_numbers_that_are_no_dates_open_no_window():
    for q in ("How do I make 3/4 of the dough?", "What's in locker 2024?", "I did it in 2000 steps, how many now?"):
        assert read_when(q, NOW).window is None


# ---- 5. since ------------------------------------------------------------------------------

@pytest.mark.parametrize("q, start", [
    ("What instruments have I tried since March?", "2025-03-01"),
    ("What have I bought since last week?", "2025-08-09"),
    ("Which books have I read since 2022?", "2022-01-01"),
    ("What have I cooked ever since June 3?", "2025-06-02"),
])
def test_since_runs_from_that_time_up_to_now(q, start):
    w = read_when(q, NOW).window
    assert w is not None and w.start.date().isoformat() == start and w.end == NOW
    assert w.holds(NOW - timedelta(days=1))


# ---- 6. the asker's offset -----------------------------------------------------------------

def test_calendar_words_are_read_in_the_reference_times_offset():
    ref = iso_time(datetime(2023, 12, 31, 21, 30, tzinfo=timezone(timedelta(hours=-5))), where="reference_time",
                   keep_offset=True)
    assert ref == "2023-12-31T21:30:00-05:00"
    year = focus("Which concerts did I attend this year?", ref)
    assert year is not None and year.window is not None
    assert year.window.holds(datetime(2023, 6, 1, tzinfo=UTC))
    today = focus("What did I eat today?", ref)
    assert today is not None and today.window is not None
    assert today.window.holds(datetime(2023, 12, 31, 12, tzinfo=timezone(timedelta(hours=-5))))
    east = focus("What did I buy this month?", iso_time("2022-07-01T06:00:00+10:00", where="reference_time"))
    assert east is not None and east.window is not None
    assert east.window.holds(datetime(2022, 7, 1, 1, tzinfo=timezone(timedelta(hours=10))))
    # stored times stay in UTC
    assert iso_time("2022-07-01T06:00:00+10:00", where="valid_from") == "2022-06-30T20:00:00+00:00"


def test_search_reads_this_year_in_the_askers_offset(tmp_path):
    old, new = "I saw a jazz quartet at the Blue Note club.", "We watched the symphony orchestra at the city hall."
    q = "Which concert did I go to this year?"
    far = "My sister collects stamps."
    table = {old: unit(1, 0.2), new: unit(1, 0, 0.6), far: unit(0, 0, 0, 1), q: unit(1, 0)}
    m = Memory(tmp_path / "tz.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add(old, user_id="u", valid_from="2022-11-05T19:00:00-05:00")
    m.add(new, user_id="u", valid_from="2023-03-04T19:00:00-05:00")
    m.add(far, user_id="u", valid_from="2021-01-04T19:00:00-05:00")
    assert m.search(q, user_id="u", mode="dense", limit=3)[0].text == old  # the closer one, without a window
    # 21:30 on 31 December in UTC-5 is 2024 in UTC: "this year" is still 2023 for the asker
    hits = m.search(q, user_id="u", mode="dense", limit=3, reference_time="2023-12-31T21:30:00-05:00")
    assert hits[0].text == new
    m.close()


# ---- 7. long texts: what each text dates is remembered -------------------------------------

def test_the_events_of_a_text_are_read_once_and_remembered(monkeypatch):
    when_spans.clear()
    text = " ".join(f"On august {d} I walked the dog, last week I cycled." for d in range(1, 29)) * 30
    said = datetime(2025, 9, 1, tzinfo=UTC)
    w = read_when("What did I do on August 12?", NOW).window
    assert w is not None and when_spans.tells_of(text, said, w)
    calls = []
    monkeypatch.setattr(when_spans, "events_dated", lambda *a: calls.append(a) or ())
    assert when_spans.tells_of(text, said, w)  # remembered: not read again
    far = read_when("What did I do in 2019?", NOW).window
    assert far is not None and not when_spans.tells_of(text, said, far)
    assert calls == []
    assert len(events_dated(text, said)) == len(set(events_dated(text, said)))  # one window per distinct phrase


def test_the_memory_of_texts_is_bounded():
    lru = when_spans._Lru(max_entries=3, max_weight=5)
    spans = ((NOW,), (NOW,))
    for i in range(10):
        lru.put((bytes([i]), ""), spans)
    assert len(lru) == 3
    lru.put((b"big", ""), ((NOW,) * 6, (NOW,) * 6))  # heavier than the whole cache: not kept
    assert lru.get((b"big", "")) is None and len(lru) == 3


# ---- 8. a tzinfo that fails ----------------------------------------------------------------

class _Raising(tzinfo):
    def utcoffset(self, dt):
        raise LookupError("no such zone")


class _Wordy(tzinfo):
    def utcoffset(self, dt):
        return "+02:00"


class _Huge(tzinfo):
    def utcoffset(self, dt):
        return timedelta(hours=30)


@pytest.mark.parametrize("zone", [_Raising(), _Wordy(), _Huge()])
def test_a_tzinfo_that_fails_is_a_memsieve_error(tmp_path, zone):
    bad = datetime(2024, 2, 3, 12, tzinfo=zone)
    for where in ("reference_time", "as_of", "valid_from"):
        with pytest.raises(InvalidInputError) as err:
            iso_time(bad, where=where)
        msg = str(err.value)
        assert isinstance(err.value, MemsieveError) and msg.startswith(where) and msg[0].islower()
        assert "utcoffset" in msg and "zoneinfo" in msg
    m = Memory(tmp_path / "tz.db", embedder=TableEmbedder())
    with pytest.raises(InvalidInputError):
        m.search("What did I do yesterday?", user_id="u", reference_time=bad)
    m.close()
