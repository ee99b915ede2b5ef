"""A query's "now": the time expressions of a question, read against a reference time.

"What did I buy two weeks ago?" asked on 2023-05-20 means a window around
2023-05-06; "the first car I owned" asks for the earliest of several versions;
"what is my current address" for the latest. ``read_when(query, now)`` finds
both: a window of dates the question points at (or None) and an order
(``"earliest"``, ``"latest"`` or None). The search uses them softly: memories
dated inside the window rank higher, never are the others dropped.

The same phrases serve the write path: ``time_phrases(text)`` spells the
relative dates a text states one way, so that the gate does not fold a text
dated "last weekend" into a memory that does not say when (docs/GATE.md).

English only, like the rest of ``memsieve.text``; every word list is in this
module. Each window is wide enough to hold the usual looseness of speech: "two
weeks ago" is 11 to 17 days back, "a month ago" 15 to 45.
"""

from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

#: Spelled-out counts a question uses with a unit ("three weeks ago").
COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
    "a few": 3, "few": 3, "several": 4,
}
#: Unit -> (its length in days, the half-width of the window around "N units ago", in days).
UNITS = {"day": (1, 1), "week": (7, 3), "month": (30, 15), "year": (365, 120)}
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name and name != "May"})
#: Words that ask for the earliest or the latest of several versions of a fact.
EARLIEST = ("first", "earliest", "initially", "originally", "at first", "in the beginning", "to begin with",
            "the oldest")
LATEST = ("most recent", "most recently", "latest", "last time", "currently", "current", "right now", "these days",
          "nowadays", "now", "still", "anymore", "any more", "the newest", "lately")

_COUNT = "|".join(sorted((re.escape(w) for w in COUNT_WORDS), key=len, reverse=True))
_AGO = re.compile(rf"\b(\d+|{_COUNT})\s+(day|week|month|year)s?\s+ago\b")
_PAST = re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(\d+|{_COUNT})\s+(day|week|month|year)s?\b")
_LAST_UNIT = re.compile(r"\b(last|this|past)\s+(week|month|year|weekend)\b")
_WEEKDAY = re.compile(r"\b(last|this|on)\s+(" + "|".join(WEEKDAYS) + r")\b")
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_OF_MONTH = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b(?:,?\s+(\d{{4}}))?")
_IN_MONTH = re.compile(rf"\b(?:in|during|since|of|last|this)\s+({_MONTH})\b(?:\s+(?:of\s+)?(\d{{4}}))?")
#: "tonight" and "this weekend" ask about what is to come ("a film to watch tonight"): no window.
_YESTERDAY = re.compile(r"\b(yesterday|last night|today|this morning|this evening)\b")
_RECENTLY = re.compile(r"\b(?<!most )(recently|the other day|lately)\b")  # "most recently" is an order
_ORDER_EARLIEST = re.compile(r"\b(" + "|".join(re.escape(w) for w in EARLIEST) + r")\b")
_ORDER_LATEST = re.compile(r"\b(" + "|".join(re.escape(w) for w in LATEST) + r")\b")


@dataclass(frozen=True)
class Window:
    """The dates a question points at, both ends inclusive, with the phrase that said so."""

    start: datetime
    end: datetime
    phrase: str

    def holds(self, when: datetime) -> bool:
        return self.start <= when <= self.end


@dataclass(frozen=True)
class When:
    """What a question says about time: a window (or None) and an order (or None)."""

    window: Window | None
    order: str | None  # "earliest" | "latest" | None


def _plain(text: str) -> str:
    """The text as every pattern here reads it: casefolded, typographic apostrophes plain, one
    space between words (questions, the write path's dating phrases and the read path's alike)."""
    return " ".join(text.casefold().replace("\u2019", "'").split())


def _count(word: str) -> int:
    return int(word) if word.isdigit() else COUNT_WORDS[word]


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _around(now: datetime, back_days: float, half_days: float, phrase: str) -> Window:
    centre = _day(now) - timedelta(days=back_days)
    return Window(centre - timedelta(days=half_days), centre + timedelta(days=half_days, hours=23, minutes=59),
                  phrase)


def _month_window(year: int, month: int, phrase: str, tz: timezone | None) -> Window:
    last = calendar.monthrange(year, month)[1]
    return Window(datetime(year, month, 1, tzinfo=tz), datetime(year, month, last, 23, 59, tzinfo=tz), phrase)


def _past_year(now: datetime, month: int, day: int = 1) -> int:
    """The year of the most recent (month, day) on or before ``now``: questions ask about the past."""
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def _unit_window(now: datetime, which: str, unit: str, phrase: str) -> Window:
    """"last/this/past week|month|year": calendar units, a week's slack at the edges of the last one."""
    tz, today = now.tzinfo, _day(now)
    if which == "past":  # "the past month": the trailing one
        return Window(today - timedelta(days=UNITS[unit][0] + 1), now, phrase)
    if unit == "week":
        start = today - timedelta(days=today.weekday())  # this week's Monday
        if which == "this":
            return Window(start, now, phrase)
        return Window(start - timedelta(days=9), start + timedelta(days=1), phrase)
    if unit == "month":
        first = today.replace(day=1)
        if which == "this":
            return Window(first, now, phrase)
        prev = (first - timedelta(days=1)).replace(day=1)
        return Window(prev - timedelta(days=7), first + timedelta(days=7), phrase)
    if which == "this":
        return Window(datetime(now.year, 1, 1, tzinfo=tz), now, phrase)
    return Window(datetime(now.year - 1, 1, 1, tzinfo=tz) - timedelta(days=14),
                  datetime(now.year, 1, 14, 23, 59, tzinfo=tz), phrase)


def _window(q: str, now: datetime) -> Window | None:
    """The first window ``q`` names, read against ``now``; None when it names none, or one
    outside the calendar ("5,000 years ago", "the past 9999 years" from year 1)."""
    try:
        return _first_window(q, now)
    except (OverflowError, ValueError):  # a date before year 1 or after 9999
        return None


def _first_window(q: str, now: datetime) -> Window | None:
    tz = now.tzinfo
    if m := _AGO.search(q):
        n, (length, half) = _count(m.group(1)), UNITS[m.group(2)]
        return _around(now, n * length, max(half, 0.25 * n * length if m.group(2) != "day" else half), m.group(0))
    if m := _PAST.search(q):
        n, (length, _) = _count(m.group(1)), UNITS[m.group(2)]
        return Window(_day(now) - timedelta(days=n * length + 1), now, m.group(0))
    if m := _YESTERDAY.search(q):
        back = 1 if m.group(1) in ("yesterday", "last night") else 0
        return _around(now, back, 1, m.group(0))
    if m := _WEEKDAY.search(q):
        target = WEEKDAYS[m.group(2)]
        back = (now.weekday() - target) % 7 or (7 if m.group(1) == "last" else 0)
        return _around(now, back, 1, m.group(0))
    if m := _LAST_UNIT.search(q):
        which, unit = m.groups()
        if unit == "weekend" and which != "this":  # "this weekend": to come, or just past; neither is said
            back = (now.weekday() - 5) % 7 or 7
            return Window(_day(now) - timedelta(days=back + 1), _day(now) - timedelta(days=back - 2), m.group(0))
        if unit != "weekend":
            return _unit_window(now, which, unit, m.group(0))
    if m := _DAY_OF_MONTH.search(q):
        month, day = MONTHS[m.group(1)], int(m.group(2))
        year = int(m.group(3)) if m.group(3) else _past_year(now, month, day)
        if 1 <= day <= calendar.monthrange(year, month)[1]:
            return _around(datetime(year, month, day, tzinfo=tz), 0, 1, m.group(0))
    if m := _DAY_MONTH.search(q):
        day, month = int(m.group(1)), MONTHS[m.group(2)]
        year = int(m.group(3)) if m.group(3) else _past_year(now, month, day)
        if 1 <= day <= calendar.monthrange(year, month)[1]:
            return _around(datetime(year, month, day, tzinfo=tz), 0, 1, m.group(0))
    if m := _IN_MONTH.search(q):
        month = MONTHS[m.group(1)]
        year = int(m.group(2)) if m.group(2) else _past_year(now, month)
        return _month_window(year, month, m.group(0), tz)
    if m := _RECENTLY.search(q):
        return Window(_day(now) - timedelta(days=30), now, m.group(0))
    return None


#: The phrases by which a text dates what it tells, for ``events_dated``: a day or a stretch of the
#: past, read against when the text was said. A span up to now ("the past six months", "recently",
#: "this year") dates no one event, and "this weekend", "tomorrow" are to come.
_EVENT = (_AGO, _YESTERDAY, _WEEKDAY, _LAST_UNIT, _DAY_OF_MONTH, _DAY_MONTH)


@functools.lru_cache(maxsize=4096)
def _event_phrases(text: str) -> tuple[str, ...]:
    t = _plain(text)
    return tuple(m.group(0) for pattern in _EVENT for m in pattern.finditer(t)
                 if pattern is not _LAST_UNIT or m.group(1) == "last")


def events_dated(text: str, said_at: datetime) -> tuple[Window, ...]:
    """The windows of the events a text dates, read against when it was said.

    "I just planted tomatoes today" said on 21 April dates an event on 21 April;
    "I cleaned my sneakers last month" said on 24 May, one in April (with the
    slack ``read_when`` gives the phrase in a question). A question about "last
    month" asked in May is about both, whatever day each was said on.

    Args:
        text: what was said.
        said_at: when (timezone-aware).

    Returns:
        One window per dating phrase, in the order the patterns find them; empty
        when the text dates nothing (or only outside the calendar).
    """
    return tuple(w for phrase in _event_phrases(text) if (w := _window(phrase, said_at)) is not None)


#: The phrases that date what a text says relative to when it was said, for ``time_phrases``.
#: Weekdays, months and days of the month are number terms to the tokenizer already ("22 October"
#: and "October 22" hold the same ones), and "recently" dates nothing a reader could compute with.
_DATING = (_AGO, _PAST, _YESTERDAY, _LAST_UNIT)


@functools.lru_cache(maxsize=1024)
def time_phrases(text: str) -> frozenset[str]:
    """The phrases that say when something happened, spelled one way ("two months ago" is
    ``"2 month ago"``), so that two texts dating a thing alike share them.

    A text folded into a memory that lacks one of them would lose when it happened: the reader
    sees the memory's own date.

    >>> sorted(time_phrases("I joined a webinar two months ago, and the gym last weekend."))
    ['2 month ago', 'last weekend']
    """
    t = _plain(text)
    found = set()
    for pattern in _DATING:
        for m in pattern.finditer(t):
            if pattern is _AGO:
                found.add(f"{_count(m.group(1))} {m.group(2)} ago")
            elif pattern is _PAST:
                found.add(f"past {_count(m.group(1))} {m.group(2)}")
            else:
                found.add(m.group(0))
    return frozenset(found)


def read_when(query: str, now: datetime) -> When:
    """The window and order ``query`` asks for, read against ``now``.

    Args:
        query: the question.
        now: its reference time (the question's date, or the call's time).

    Returns:
        A When; both parts None when the question says nothing about time.
    """
    q = _plain(query)
    window = _window(q, now)
    earliest, latest = _ORDER_EARLIEST.search(q), _ORDER_LATEST.search(q)
    order = None
    if earliest and not latest:
        order = "earliest"
    elif latest and not earliest:
        order = "latest"
    elif earliest and latest:  # "the first time ... most recently": the first word said wins
        order = "earliest" if earliest.start() < latest.start() else "latest"
    return When(window=window, order=order)
