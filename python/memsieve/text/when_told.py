"""What a text says about when the things it tells happened, read by the write and read paths.

A question's time words are read in ``memsieve.text.when``; a text's own are read here, with
the same patterns and windows:

- ``time_phrases(text)`` spells the relative dates a text states one way, so that the gate does
  not fold a text dated "last weekend" into a memory that does not say when (docs/GATE.md);
- ``event_phrases`` and ``events_dated`` find the phrases that date an event a text tells of
  ("I planted tomatoes today") and their windows, read against when the text was said;
- ``dates_past`` says whether a text puts what it tells in the past by such a phrase ("last
  month", "two days ago", "yesterday"): "I read Dune last month" is a thing done, where "I read
  every night" is a habit (memsieve.text.events).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Iterator

from memsieve.text.when import Window, ago_amount, count_of, plain, spelled, window_of
from memsieve.text.when_words import (AGO, AHEAD, DAY_MONTH, DAY_OF_MONTH, ISO_DATE, LAST_UNIT, MONTH_YEAR, PAST,
                                      WEEKDAY, WEEKDAY_SHORT, YEAR, YESTERDAY, counts_units, month_is_said)

__all__ = ["dates_past", "event_phrases", "events_dated", "names_its_date", "time_phrases"]


#: The phrases by which a text dates what it tells, for ``events_dated``: a day or a stretch of the
#: past, read against when the text was said. A span up to now ("the past six months", "in the last
#: month", "recently", "this year") dates no one event, and "this weekend", "tomorrow" are to come.
_EVENT = (AGO, YESTERDAY, WEEKDAY, WEEKDAY_SHORT, LAST_UNIT, ISO_DATE, DAY_OF_MONTH, DAY_MONTH)


def _event_matches(t: str, patterns: tuple[re.Pattern[str], ...] = _EVENT) -> Iterator[re.Match[str]]:
    for pattern in patterns:
        for m in pattern.finditer(t):
            if pattern is LAST_UNIT:  # "last month", not "this month" nor "in the last month" (a span)
                if m.group(1) != "last" or (m.group(2) != "weekend" and t.endswith("the ", 0, m.start())):
                    continue
            elif pattern is DAY_OF_MONTH:  # "march 5 miles"
                if not m.group(3) and not m.group(4) and counts_units(t, m.end()):
                    continue
            elif pattern is DAY_MONTH:  # "2 may be enough"
                if not (m.group(2) or m.group(3) or m.group(5)) and not month_is_said(t, m.group(4), m.end(4)):
                    continue
            yield m


#: The phrases that name a day of the calendar, whenever the text is told.
_CALENDAR = (ISO_DATE, DAY_OF_MONTH, DAY_MONTH)


@functools.lru_cache(maxsize=1024)
def names_its_date(text: str) -> bool:
    """Whether ``text`` names on the calendar when what it tells happened: a date ("on 5 May",
    "May 5th, 2023", "2023-05-05"), a month of a year ("in March 2021") or a year ("in 2019").
    Told again word for word on another day, such a text tells of that same day or year.

    >>> names_its_date("We moved to Lisbon in 2019."), names_its_date("I ran a 5k on May 5th.")
    (True, True)
    >>> names_its_date("I went to the gym this morning."), names_its_date("I ran 5 miles in 40 minutes.")
    (False, False)
    """
    t = plain(text)
    return bool(YEAR.search(t) or MONTH_YEAR.search(t)) or next(_event_matches(t, _CALENDAR), None) is not None


def event_phrases(text: str) -> tuple[str, ...]:
    """The distinct dating phrases of ``text`` (see ``events_dated``), in the order the patterns find them."""
    return tuple(dict.fromkeys(m.group(0) for m in _event_matches(plain(text))))


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
        One window per distinct dating phrase, in the order the patterns find them; empty
        when the text dates nothing (or only outside the calendar). The read path asks
        ``memsieve.text.when_spans.tells_of``, which remembers them per text.
    """
    return tuple(w for phrase in event_phrases(text) if (w := window_of(phrase, said_at)) is not None)


#: The phrases that date what a text says relative to when it was said, past or to come, for
#: ``time_phrases``.
#: Weekdays, months and days of the month are number terms to the tokenizer already ("22 October"
#: and "October 22" hold the same ones), and "recently" dates nothing a reader could compute with.
_DATING = (AGO, PAST, YESTERDAY, LAST_UNIT, AHEAD)


@functools.lru_cache(maxsize=1024)
def time_phrases(text: str) -> frozenset[str]:
    """The phrases that say when something happened, spelled one way ("two months ago" is
    ``"2 month ago"``), so that two texts dating a thing alike share them.

    A text folded into a memory that lacks one of them would lose when it happened: the reader
    sees the memory's own date.

    >>> sorted(time_phrases("I joined a webinar two months ago, and the gym last weekend."))
    ['2 month ago', 'last weekend']
    >>> sorted(time_phrases("The track day is tomorrow; the race is in three weeks, not next month."))
    ['next month', 'tomorrow']
    """
    t = plain(text)
    found = set()
    for pattern in _DATING:
        for m in pattern.finditer(t):
            if pattern is AGO:
                n, unit = ago_amount(m)
                found.add(f"{spelled(n)} {unit} ago")
            elif pattern is PAST:
                found.add(f"past {count_of(m.group(1))} {m.group(2)}")
            else:
                found.add(m.group(0))
    return frozenset(found)


@functools.lru_cache(maxsize=1024)
def dates_past(text: str) -> bool:
    """Whether ``text`` dates what it tells in the past by a phrase relative to when it was said:
    "two days ago", "yesterday", "last night", "last month", "this morning", "today".

    A day or date named alone ("on Friday", "March 3") may be to come, and a span up to now ("this
    year", "the past month") may hold a habit: neither counts.

    >>> dates_past("I read Dune last month.")
    True
    >>> dates_past("I read every night before bed.")
    False
    """
    t = plain(text)
    if AGO.search(t) or YESTERDAY.search(t):
        return True
    return any(m.group(1) == "last" and not t.endswith("the ", 0, m.start()) for m in LAST_UNIT.finditer(t))
