"""Seasons, quarters and fortnights: the stretches of a year that a question names by a word.

``memsieve.text.when`` reads a question's window; the periods here are longer
than a day and shorter than a year, and each has a "which one" to settle:

- a season is the northern hemisphere's meteorological one (spring from March,
  summer from June, autumn from September, winter from December through
  February, counted as the year of its January). "last summer" is the latest
  that has ended; "this summer" the one under way (up to now) or, once over,
  this year's; "in / during / over the summer" the latest that has begun.
  "this summer" asked in April is to come, and names no window;
- a quarter is a calendar quarter: "Q3" or "the third quarter" without a year
  is the latest that has begun, "last quarter" the one before the current one,
  "this quarter" the current one up to now;
- "last / this / past fortnight" is the trailing fortnight.

Each span has a slack at its edges (``SEASON_SLACK_DAYS``, ``QUARTER_SLACK_DAYS``):
people round a season's and a quarter's edges. The functions return the span's
two ends; ``memsieve.text.when`` makes the window.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from memsieve.text.when_words import SEASONS

#: Days of slack at each edge of a season ...
SEASON_SLACK_DAYS = 14
#: ... and of a quarter.
QUARTER_SLACK_DAYS = 7
#: "this summer" names the summer just over up to this many days after it ended; later, the next one.
THIS_SEASON_PAST_DAYS = 120

_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

Span = tuple[datetime, datetime]


def _months(first: datetime, months: int) -> datetime:
    """The first instant ``months`` months after ``first`` (a month's first day)."""
    n = first.month - 1 + months
    return first.replace(year=first.year + n // 12, month=n % 12 + 1)


def _season_start(year: int, name: str, now: datetime) -> datetime:
    """When the season ``name`` of ``year`` begins (winter: the December before ``year``'s January)."""
    month = SEASONS[name]
    return datetime(year - 1 if month == 12 else year, month, 1, tzinfo=now.tzinfo)


def _edges(start: datetime, end: datetime, slack: int, now: datetime) -> Span:
    """The span with its slack, never reaching past ``now`` for a period that has ended by then."""
    return start - timedelta(days=slack), min(end + timedelta(days=slack), max(end, now))


def _latest_start(name: str, now: datetime) -> datetime:
    """When the latest season ``name`` that has begun by ``now`` began."""
    year = now.year + 1
    while (start := _season_start(year, name, now)) > now:
        year -= 1
    return start


def season_span(m: re.Match[str], now: datetime) -> Span | None:
    """The span a ``when_words.SEASON`` match names, read against ``now``; None when it is to come."""
    which, name, year, bare, bare_year = m.groups()
    name, which, year = name or bare, which or "in", year or bare_year
    if year is not None:
        start = _season_start(int(year), name, now)
        return _edges(start, _months(start, 3) - timedelta(microseconds=1), SEASON_SLACK_DAYS, now)
    start = _latest_start(name, now)
    end = _months(start, 3)
    if which == "last" and now < end:  # under way: "last summer" is the one before
        start = start.replace(year=start.year - 1)
        end = _months(start, 3)
    elif which == "this" and now - end > timedelta(days=THIS_SEASON_PAST_DAYS):
        return None  # "this summer" asked in April: to come
    return _edges(start, min(end - timedelta(microseconds=1), now), SEASON_SLACK_DAYS, now)


def quarter_span(m: re.Match[str], now: datetime) -> Span | None:
    """The span a ``when_words.QUARTER`` match names, read against ``now``."""
    digit, ordinal, which, year = m.groups()
    current = datetime(now.year, 3 * ((now.month - 1) // 3) + 1, 1, tzinfo=now.tzinfo)
    if which is not None and year is None:
        if which == "this":
            return _edges(current, now, QUARTER_SLACK_DAYS, now)
        start = _months(current, -3)
        return _edges(start, current - timedelta(microseconds=1), QUARTER_SLACK_DAYS, now)
    number = int(digit) if digit else _ORDINALS.get(ordinal or "", 4)  # "last quarter of 2023": the fourth
    start = datetime(int(year) if year else now.year, 3 * (number - 1) + 1, 1, tzinfo=now.tzinfo)
    if year is None and start > now:
        start = start.replace(year=start.year - 1)
    end = _months(start, 3) - timedelta(microseconds=1)
    if start <= now < end:
        end = now
    return _edges(start, end, QUARTER_SLACK_DAYS, now)
