"""Parts of a month or a year, hours and decades: the windows a question names by a part of a period.

``memsieve.text.when`` reads a question's window; the spans here are the ones a
user names by where in a period something fell, or by a unit the calendar
readers do not count in:

- "early / mid / late March", "the beginning / middle / end of March": a third
  of the month (days 1-10, 11-20, 21 to its end). Without a year, the latest
  such part that has begun by the question's time. "the end of last month",
  "the start of this month" read the month the words name;
- "early / mid / late 2023", "the beginning / end of last year": a third of the
  year (January-April, May-August, September-December);
- "the first / second / third / fourth / last week of March": that week's days;
- "the last 48 hours", "the past 24 hours": from the start of the day the hours
  reach back to, up to now (memories are mostly dated by day);
- "a decade ago", "two decades ago": ten years a decade, with a year and a half
  of slack each side; "the 90s", "the 1990s": the whole decade.

Every span has a day's slack before it, as a day named in a question has
(``memsieve.text.when._around``); a part of a month and a week of it reach a week
past their end (``TOLD_AFTER``), since a memory is dated when it was told. The
functions return the two ends; ``memsieve.text.when`` makes the window. Patterns
live in ``memsieve.text.when_words``.
"""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta

from memsieve.text.when_words import MONTHS, count_of

Span = tuple[datetime, datetime]

#: Which third of a month (first day, last day; 0 is the month's last) each word names.
_THIRDS = {"early": (1, 10), "beginning": (1, 10), "start": (1, 10), "mid": (11, 20), "middle": (11, 20),
           "late": (21, 0), "end": (21, 0)}
#: Which third of a year (first month, last month) each word names.
_YEAR_THIRDS = {"early": (1, 4), "beginning": (1, 2), "start": (1, 2), "mid": (5, 8), "middle": (5, 8),
                "late": (9, 12), "end": (11, 12)}
_WEEKS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": 0}
_SLACK = timedelta(days=1)
#: A part of a month or a week of it reaches this far past its last day: a memory is dated when it
#: was told, and what happened in "the second week of November" is often told in the third.
TOLD_AFTER = timedelta(days=7)
_DAY_END = timedelta(days=1, microseconds=-1)


def _days(year: int, month: int, first: int, last: int, now: datetime, *, after: timedelta = _SLACK) -> Span:
    """Days ``first`` to ``last`` (0: the month's last) of a month, a day's slack before and ``after``
    after."""
    last = last or calendar.monthrange(year, month)[1]
    start = datetime(year, month, first, tzinfo=now.tzinfo)
    end = datetime(year, month, last, tzinfo=now.tzinfo)
    return start - _SLACK, end + _DAY_END + after


def _month_back(now: datetime, back: int) -> tuple[int, int]:
    """(year, month) ``back`` months before ``now``'s."""
    n = now.year * 12 + now.month - 1 - back
    return n // 12, n % 12 + 1


def part_of_month_span(part: str, month_word: str | None, year: str | None, which: str | None,
                       now: datetime) -> Span | None:
    """The third of a month ``part`` names ("early", "mid", "the end of"), of the month named
    (``month_word``, with ``year`` or the latest such part begun by ``now``) or of ``which`` month
    ("last", "this"); None when the part is to come."""
    first, last = _THIRDS[part]
    if month_word is None:
        y, mo = _month_back(now, 1 if which == "last" else 0)
    else:
        mo = MONTHS[month_word]
        y = int(year) if year else now.year
        if not year and datetime(y, mo, first, tzinfo=now.tzinfo) > now:
            y -= 1  # the latest such part that has begun: "early December" asked in March
    if datetime(y, mo, first, tzinfo=now.tzinfo) > now:
        return None
    start, end = _days(y, mo, first, last, now, after=TOLD_AFTER)
    return start, min(end, max(now, start))


def part_of_year_span(part: str, year: int, now: datetime) -> Span | None:
    """The third of ``year`` that ``part`` names, with a week's slack; None when it is to come."""
    first, last = _YEAR_THIRDS[part]
    start = datetime(year, first, 1, tzinfo=now.tzinfo)
    if start > now:
        return None
    end = datetime(year, last, calendar.monthrange(year, last)[1], tzinfo=now.tzinfo) + _DAY_END
    week = timedelta(days=7)
    return start - week, min(end + week, max(now, start))


def week_of_month_span(ordinal: str, month_word: str, year: str | None, now: datetime) -> Span | None:
    """The days of "the second week of March" (8 to 14; the last week: the month's last seven days)."""
    mo = MONTHS[month_word]
    n = _WEEKS[ordinal]
    y = int(year) if year else now.year
    if not year and datetime(y, mo, 1, tzinfo=now.tzinfo) > now:
        y -= 1
    days = calendar.monthrange(y, mo)[1]
    first, last = (days - 6, days) if n == 0 else (7 * n - 6, min(7 * n, days))
    if datetime(y, mo, first, tzinfo=now.tzinfo) > now:
        return None
    start, end = _days(y, mo, first, last, now, after=TOLD_AFTER)
    return start, min(end, max(now, start))


def hours_span(count: str, now: datetime) -> Span:
    """"the last 48 hours": from the start of the day the hours reach back to, up to now."""
    back = now - timedelta(hours=count_of(count))
    return back.replace(hour=0, minute=0, second=0, microsecond=0), now


def decades_ago_span(count: str, now: datetime) -> Span:
    """"a decade ago": ten years a decade back, a year and a half either side."""
    n = count_of(count)
    centre = now.year - 10 * n
    return (datetime(centre - 1, 7, 1, tzinfo=now.tzinfo),
            datetime(centre + 1, 12, 31, 23, 59, 59, 999999, tzinfo=now.tzinfo))


def decade_span(century: str | None, tens: str, now: datetime) -> Span | None:
    """"the 90s", "the 1990s", "the 2010s": the decade's ten years; None for one to come."""
    if century is None:  # "the 90s": the latest such decade begun
        start = (now.year // 100) * 100 + int(tens) * 10
        if start > now.year:
            start -= 100
    else:
        start = int(century) * 100 + int(tens) * 10
    if start > now.year:
        return None
    return (datetime(start, 1, 1, tzinfo=now.tzinfo),
            datetime(start + 9, 12, 31, 23, 59, 59, 999999, tzinfo=now.tzinfo))


def day_of_this_month_span(day: int, now: datetime) -> Span | None:
    """"on the 15th": the latest 15th on or before ``now`` (this month's, else last month's)."""
    y, mo = now.year, now.month
    if day > now.day:
        y, mo = _month_back(now, 1)
    if day > calendar.monthrange(y, mo)[1]:
        return None
    return _days(y, mo, day, day, now)
