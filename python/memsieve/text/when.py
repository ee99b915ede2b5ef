"""A query's "now": the time expressions of a question, read against a reference time.

"What did I buy two weeks ago?" asked on 2023-05-20 means a window around
2023-05-06; "the first car I owned" asks for the earliest of several versions;
"what is my current address" for the latest. ``read_when(query, now)`` finds
both: a window of dates the question points at (or None) and an order
(``"earliest"``, ``"latest"`` or None). The search uses them softly: memories
dated inside the window rank higher, never are the others dropped.

The same readers serve what a text says about its own time
(``memsieve.text.when_told``): the phrases that date what it tells, and their
windows read against when it was said.

English only, like the rest of ``memsieve.text``; every word list is in
``memsieve.text.when_words``. Each window is wide enough to hold the usual
looseness of speech: "two weeks ago" is 11 to 17 days back, "a month ago" 15 to 45.
Calendar words ("today", "this year", "in June") are read in ``now``'s own offset.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memsieve.text.when_parts import (day_of_this_month_span, decade_span, decades_ago_span, hours_span,
                                      part_of_month_span, part_of_year_span, week_of_month_span)
from memsieve.text.when_periods import quarter_span, season_span
from memsieve.text.when_holidays import HOLIDAY, holiday_day
from memsieve.text.when_words import (ABBR_AGO, ABBR_UNITS, AGO, AGO_MORE, ASKED_IN_PAST, BEFORE_LAST, COUNT_WORDS,
                                      DAY_MONTH, DAY_OF_MONTH, DAY_OF_THIS_MONTH, DECADE, DECADES_AGO, EARLIEST, HOURS,
                                      ISO_DATE, IN_MONTH, LAST_UNIT, LATEST, MONTH_YEAR, MONTHS, NOT_ORDER_FIRST,
                                      NUMERIC_DATE, ORDER_EARLIEST, ORDER_LAST, ORDER_LATEST, ORDER_PRESENT,
                                      OTHER_WEEK, OVER_WEEKEND, PART_OF_MONTH, PART_OF_YEAR, PAST, PREVIOUS_UNIT,
                                      QUARTER, RECENTLY, RELATIVE_TO_DATE, SEASON, SINCE_WEEKDAY, THIS_AFTERNOON,
                                      THIS_PAST_WEEKDAY, TRAILING, UNITS, WEEK_OF_MONTH, WEEKDAY, WEEKDAY_ABBR,
                                      WEEKDAY_SHORT, WEEKDAYS, YEAR, YESTERDAY, count_of, counts_units,
                                      month_is_said)

__all__ = ["COUNT_WORDS", "EARLIEST", "LATEST", "MONTHS", "UNITS", "WEEKDAYS", "When", "Window", "ago_amount",
           "count_of", "plain", "read_when", "spelled", "window_of"]


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


def plain(text: str) -> str:
    """The text as every pattern here reads it: casefolded, typographic apostrophes plain, one
    space between words (questions, the write path's dating phrases and the read path's alike)."""
    return " ".join(text.casefold().replace("\u2019", "'").split())


def ago_amount(m: re.Match[str]) -> tuple[int | float, str]:
    """How many units an ``AGO`` match says ("a week and a half": 1.5 week), and the unit."""
    if m.group(1):  # "half a year"
        return 0.5, m.group(4)
    word = m.group(2)
    n: int | float = float(word) if "." in word else count_of(word)
    if m.group(3) or m.group(5):  # "one and a half years", "a week and a half"
        n += 0.5
    return n, m.group(4)


def spelled(n: int | float) -> str:
    return str(int(n)) if n == int(n) else f"{n:g}"


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _around(now: datetime, back_days: float, half_days: float, phrase: str) -> Window:
    centre = _day(now) - timedelta(days=back_days)
    return Window(_shifted(centre, -timedelta(days=half_days)),
                  _shifted(centre, timedelta(days=half_days + 1, microseconds=-1)), phrase)


def _shifted(t: datetime, by: timedelta) -> datetime:
    """``t + by``, clipped to the calendar: a day's slack at 9999-12-31 or 0001-01-01 is no reason to
    read no window at all."""
    try:
        return t + by
    except OverflowError:
        edge = datetime.max if by > timedelta(0) else datetime.min
        return edge.replace(tzinfo=t.tzinfo, second=0, microsecond=0)


def _month_window(year: int, month: int, phrase: str, now: datetime) -> Window:
    last = calendar.monthrange(year, month)[1]
    tz = now.tzinfo
    return Window(datetime(year, month, 1, tzinfo=tz), datetime(year, month, last, 23, 59, 59, 999999, tzinfo=tz),
                  phrase)


def _past_year(now: datetime, month: int, day: int = 1) -> int:
    """The year of the most recent (month, day) on or before ``now``: questions ask about the past."""
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def _on_day(year: int | None, month: int, day: int, now: datetime, phrase: str) -> Window | None:
    """The window of one day (a day's slack each side); without a year, its latest past occurrence
    ("Feb 29" asked in a common year: the latest leap year's). None for a day the month lacks."""
    if not 1 <= month <= 12:
        return None
    if year is None:
        year = _past_year(now, month, day)
        while (month, day) == (2, 29) and year > 1 and not calendar.isleap(year):
            year -= 1
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return _around(datetime(year, month, day, tzinfo=now.tzinfo), 0, 1, phrase)


def _unit_window(now: datetime, which: str, unit: str, phrase: str) -> Window:
    """"last/this/past week|month|year": calendar units, a week's slack at the edges of the last one."""
    tz, today = now.tzinfo, _day(now)
    if which == "past" or unit == "fortnight":  # "the past month", "last fortnight": the trailing one
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
                  datetime(now.year, 1, 14, 23, 59, 59, 999999, tzinfo=tz), phrase)


# ---- one reader per pattern: (match, the whole text, now) -> its window, or None when the
# words around the match say it is no date ("march 5 miles", "Jan's car", "the last year of school").

Reader = Callable[[re.Match[str], str, datetime], "Window | None"]


def _ago(m: re.Match[str], q: str, now: datetime) -> Window | None:
    n, unit = ago_amount(m)
    return _ago_window(now, n, unit, m.group(0))


def _abbr_ago(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _ago_window(now, count_of(m.group(1)), ABBR_UNITS[m.group(2)], m.group(0))


def _ago_window(now: datetime, n: int | float, unit: str, phrase: str) -> Window:
    length, slack = UNITS[unit]
    back = n * length if isinstance(n, int) else round(n * length)
    # "half a year ago": half the slack of "a year ago"; N units: a quarter of the way back, at least the slack
    half: float = slack if unit == "day" else max(slack * (n if 0 < n < 1 else 1), 0.25 * back)
    return _around(now, back, half, phrase)


def _past(m: re.Match[str], q: str, now: datetime) -> Window | None:
    n, length = count_of(m.group(1)), UNITS[m.group(2)][0]
    return Window(_day(now) - timedelta(days=n * length + 1), now, m.group(0))


def _trailing(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _unit_window(now, "past", m.group(1), m.group(0))


def _yesterday(m: re.Match[str], q: str, now: datetime) -> Window | None:
    back = {"day before yesterday": 2, "yesterday": 1, "last night": 1}.get(m.group(1), 0)
    return _around(now, back, 1, m.group(0))


def _weekday(m: re.Match[str], q: str, now: datetime) -> Window | None:
    target = WEEKDAYS.get(m.group(2), WEEKDAY_ABBR.get(m.group(2), 0))
    back = (now.weekday() - target) % 7 or (7 if m.group(1) == "last" else 0)
    return _around(now, back, 1, m.group(0))


_SET_OFF = re.compile(r"\s+(?:before|after)\s+\S")


def _last_unit(m: re.Match[str], q: str, now: datetime) -> Window | None:
    which, unit = m.groups()
    if unit == "weekend" and which == "this":  # "this weekend": to come, or just past; neither is said
        return None
    if _SET_OFF.match(q, m.end()) and _first_window(q[m.end():], now) is not None:
        return None  # "last weekend before April 10": dated by its date
    if unit != "weekend" and which == "last" and q.endswith("the ", 0, m.start()):
        return None  # "the last year of school"; trailing ones read before
    return _last_unit_window(now, unit, m.group(0), which=which)


def _last_unit_window(now: datetime, unit: str, phrase: str, *, which: str = "last") -> Window:
    """"last weekend" (Friday to Monday around the Saturday before ``now``), or ``_unit_window``'s."""
    if unit == "weekend":
        back = (now.weekday() - 5) % 7 or 7
        return Window(_day(now) - timedelta(days=back + 1), _day(now) - timedelta(days=back - 2), phrase)
    return _unit_window(now, which, unit, phrase)


def _before_last(m: re.Match[str], q: str, now: datetime) -> Window | None:
    unit = m.group(1)
    if unit in ("week", "weekend"):
        then = now - timedelta(days=7)
    elif unit == "month":
        then = now.replace(day=1) - timedelta(days=1)  # the last day of last month
    else:
        then = now.replace(year=now.year - 1, day=min(now.day, 28))
    return _last_unit_window(then, unit, m.group(0))


def _ago_more(m: re.Match[str], q: str, now: datetime) -> Window | None:
    n, unit = count_of(m.group(1)) if "." not in m.group(1) else float(m.group(1)), m.group(2)
    if unit == "weekend":  # "three weekends ago": the last weekend, two more weeks back
        return _last_unit_window(now - timedelta(days=7 * (max(n, 1) - 1)), "weekend", m.group(0))
    days = n if unit == "night" else n / 24 if unit == "hour" else n / 1440
    return _around(now, round(days), 1, m.group(0))


def _since_weekday(m: re.Match[str], q: str, now: datetime) -> Window | None:
    back = (now.weekday() - WEEKDAYS[m.group(1)]) % 7 or 7
    return Window(_day(now) - timedelta(days=back), now, m.group(0))


def _today(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return Window(_day(now), now, m.group(0))


def _other_week(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return Window(_day(now) - timedelta(days=24), _day(now) - timedelta(days=4), m.group(0))


def _over_weekend(m: re.Match[str], q: str, now: datetime) -> Window | None:
    if ASKED_IN_PAST.search(q) is None:  # "what do I usually do on the weekend?"
        return None
    return _last_unit_window(now, "weekend", m.group(0))


def _iso_date(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _on_day(int(m.group(1)), int(m.group(2)), int(m.group(3)), now, m.group(0))


def _numeric_date(m: re.Match[str], q: str, now: datetime) -> Window | None:
    said, a, b, y = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    if y is None and said is None:  # "3/4 cup": a fraction, unless "on 3/4"
        return None
    month, day = (a, b) if a <= 12 else (b, a)  # month first, as in the US; "29/2" can only be day first
    year = None if y is None else int(y) if len(y) == 4 else 2000 + int(y)
    if year is not None and len(y or "") == 2 and year > now.year:
        year -= 100
    return _on_day(year, month, day, now, m.group(0))


def _day_of_month(m: re.Match[str], q: str, now: datetime) -> Window | None:
    word, day, suffix, year = m.groups()
    if not suffix and not year and counts_units(q, m.end()):  # "march 5 miles", "may 3 times"
        return None
    return _on_day(int(year) if year else None, MONTHS[word], int(day), now, m.group(0))


def _day_month(m: re.Match[str], q: str, now: datetime) -> Window | None:
    day, suffix, of, word, year = m.groups()
    if not (suffix or of or year) and not month_is_said(q, word, m.end(4)):  # "2 may be enough"
        return None
    return _on_day(int(year) if year else None, MONTHS[word], int(day), now, m.group(0))


def _in_month(m: re.Match[str], q: str, now: datetime) -> Window | None:
    word, year = m.groups()
    if not year and not month_is_said(q, word, m.end(1)):  # "this may sound", "Jan's car", "Mar del Plata"
        return None
    if q.endswith("the ", 0, m.start()) and m.group(0).startswith(("last ", "this ")):  # "the last march I joined"
        return None
    month = MONTHS[word]
    return _month_window(int(year) if year else _past_year(now, month), month, m.group(0), now)


def _month_year(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _month_window(int(m.group(2)), MONTHS[m.group(1)], m.group(0), now)


def _year(m: re.Match[str], q: str, now: datetime) -> Window | None:
    if counts_units(q, m.end()):  # "in 2000 steps"
        return None
    year, tz = int(m.group(1)), now.tzinfo
    return Window(datetime(year, 1, 1, tzinfo=tz), datetime(year, 12, 31, 23, 59, 59, 999999, tzinfo=tz),
                  m.group(0))


def _season(m: re.Match[str], q: str, now: datetime) -> Window | None:
    span = season_span(m, now)
    return None if span is None else Window(span[0], span[1], m.group(0))


def _quarter(m: re.Match[str], q: str, now: datetime) -> Window | None:
    span = quarter_span(m, now)
    return None if span is None else Window(span[0], span[1], m.group(0))


def _holiday(m: re.Match[str], q: str, now: datetime) -> Window | None:
    day = holiday_day(m, now, asked_in_past=ASKED_IN_PAST.search(q) is not None)
    if day is None:
        return None
    return _around(datetime(day.year, day.month, day.day, tzinfo=now.tzinfo), 0, 1, m.group(0))


def _recently(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return Window(_day(now) - timedelta(days=30), now, m.group(0))


def _spanned(span: tuple[datetime, datetime] | None, phrase: str) -> Window | None:
    return None if span is None else Window(span[0], span[1], phrase)


def _part_of_month(m: re.Match[str], q: str, now: datetime) -> Window | None:
    short, long, word, year, which = m.groups()
    if word is not None and not year and not month_is_said(q, word, m.end(3)):  # "early may be best"
        return None
    if which == "the" and ASKED_IN_PAST.search(q) is None:  # "what do I pay at the end of the month?"
        return None
    return _spanned(part_of_month_span(short or long, word, year, None if which == "the" else which, now), m.group(0))


def _part_of_year(m: re.Match[str], q: str, now: datetime) -> Window | None:
    short, long, year, which = m.groups()
    if which == "the" and ASKED_IN_PAST.search(q) is None:
        return None
    said = int(year) if year else now.year - (1 if which == "last" else 0)
    return _spanned(part_of_year_span(short or long, said, now), m.group(0))


def _week_of_month(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _spanned(week_of_month_span(m.group(1), m.group(2), m.group(3), now), m.group(0))


def _hours(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _spanned(hours_span(m.group(1), now), m.group(0))


def _decades_ago(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _spanned(decades_ago_span(m.group(1), now), m.group(0))


def _decade(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _spanned(decade_span(m.group(1), m.group(2), now), m.group(0))


def _this_past_weekday(m: re.Match[str], q: str, now: datetime) -> Window | None:
    back = (now.weekday() - WEEKDAYS[m.group(1)]) % 7 or 7
    return _around(now, back, 1, m.group(0))


def _previous_unit(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _last_unit_window(now, m.group(1), m.group(0))


def _day_of_this_month(m: re.Match[str], q: str, now: datetime) -> Window | None:
    return _spanned(day_of_this_month_span(int(m.group(1)), now), m.group(0))


#: The patterns a question's window is looked for with, in this order: the first pattern with a
#: match that is a date wins, wherever in the question it lies.
_READERS: tuple[tuple[re.Pattern[str], Reader], ...] = (
    # First: "the end of last month", "the first week of May" hold a window the later patterns would
    # read whole ("last month", "of may").
    (PART_OF_MONTH, _part_of_month), (PART_OF_YEAR, _part_of_year), (WEEK_OF_MONTH, _week_of_month),
    (HOURS, _hours), (THIS_PAST_WEEKDAY, _this_past_weekday),
    (AGO, _ago), (PAST, _past), (TRAILING, _trailing), (YESTERDAY, _yesterday), (WEEKDAY, _weekday),
    (WEEKDAY_SHORT, _weekday), (BEFORE_LAST, _before_last), (LAST_UNIT, _last_unit), (ISO_DATE, _iso_date),
    (NUMERIC_DATE, _numeric_date), (DAY_OF_MONTH, _day_of_month), (DAY_MONTH, _day_month), (IN_MONTH, _in_month),
    (MONTH_YEAR, _month_year), (SEASON, _season), (QUARTER, _quarter), (HOLIDAY, _holiday), (YEAR, _year),
    (RECENTLY, _recently),
    # Last: "the weekend before 4 October" is dated by its date.
    (OVER_WEEKEND, _over_weekend), (AGO_MORE, _ago_more), (SINCE_WEEKDAY, _since_weekday),
    (THIS_AFTERNOON, _today), (OTHER_WEEK, _other_week), (ABBR_AGO, _abbr_ago), (DECADES_AGO, _decades_ago),
    (DECADE, _decade), (PREVIOUS_UNIT, _previous_unit), (DAY_OF_THIS_MONTH, _day_of_this_month))


def window_of(q: str, now: datetime) -> Window | None:
    """The first window ``q`` (plain text, ``plain``) names, read against ``now``; None when it names none, or one
    outside the calendar ("5,000 years ago", "the past 9999 years" from year 1).

    "since <a time>" ("since January", "since last month", "since 2023") runs from that time's
    start up to now."""
    try:  # a date before year 1 or after 9999 is no window
        found = _first_window(q, now)
        if found is None:
            return None
        w, start = found
        if (set_off := _relative_to(w, q, start)) is not None:
            # The date is most often when the thing was told ("I took the pups hiking last weekend",
            # said on 4 October): the window runs from the day set off to the date itself.
            w = Window(min(w.start, set_off.start), max(w.end, set_off.end), set_off.phrase)
    except (OverflowError, ValueError):
        return None
    since = w.phrase.startswith("since ") or q.endswith("since ", 0, start)
    if since and w.start <= now:
        return Window(w.start, now, w.phrase if w.phrase.startswith("since ") else "since " + w.phrase)
    return w


def _relative_to(w: Window, q: str, start: int) -> Window | None:
    """The window that the words just before a one-day window's phrase set off from its day: "the
    week before August 3" (27 July to 2 August), "two weeks before August 11", "the Sunday before
    October 25", "the Saturday after October 28"; None when they say none of these."""
    m = RELATIVE_TO_DATE.search(q, 0, start)
    if m is None or w.end - w.start > timedelta(days=3):
        return None
    count, unit, span, weekend, way = m.groups()
    day = _day(w.start + (w.end - w.start) / 2)
    sign = -1 if way == "before" else 1
    phrase = m.group(0) + w.phrase
    if unit is not None:
        length, slack = UNITS[unit]
        return _around(day, -sign * count_of(count) * length, slack, phrase)
    span = span or weekend
    if span == "day":
        return _around(day, -sign, 1, phrase)
    if span == "week":  # the seven days before (after) it, a day's slack
        first = day - timedelta(days=8) if sign < 0 else day
        return Window(first, first + timedelta(days=9, microseconds=-1), phrase)
    target = 5 if span == "weekend" else WEEKDAYS[span]
    apart = ((day.weekday() - target) if sign < 0 else (target - day.weekday())) % 7 or 7
    on = day + timedelta(days=sign * apart)
    if span == "weekend":  # Friday to Monday around its Saturday
        return Window(on - timedelta(days=1), on + timedelta(days=3, microseconds=-1), phrase)
    return _around(on, 0, 1, phrase)


def _first_window(q: str, now: datetime) -> tuple[Window, int] | None:
    for pattern, read in _READERS:
        for m in pattern.finditer(q):
            if (w := read(m, q, now)) is not None:
                return w, m.start()
    return None


def read_when(query: str, now: datetime) -> When:
    """The window and order ``query`` asks for, read against ``now``.

    Args:
        query: the question.
        now: its reference time (the question's date, or the call's time), in the asker's
            offset: "today", "this month" and "in June" are read in it.

    Returns:
        A When; both parts None when the question says nothing about time.
    """
    q = plain(query)
    window = window_of(q, now)
    # "first aid", "first name", "first of all" order nothing: blanked, positions kept
    earliest = ORDER_EARLIEST.search(NOT_ORDER_FIRST.sub(lambda m: " " * len(m.group(0)), q))
    latest = ORDER_LATEST.search(q) or ORDER_LAST.search(q)
    order = None
    if earliest and not latest:
        order = "earliest"
    elif latest and not earliest:
        order = "latest"
    elif earliest and latest:  # "now", "currently" ask about the present; else the first word said wins
        present = ORDER_PRESENT.search(q) is not None
        order = "latest" if present or latest.start() < earliest.start() else "earliest"
    return When(window=window, order=order)
