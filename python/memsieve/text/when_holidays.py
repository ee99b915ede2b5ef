"""Holidays a question dates by: "last Christmas", "this Thanksgiving", "Easter 2023".

The calendar is the United States' (``HOLIDAYS``): fixed days (Christmas, Halloween, the
Fourth of July), weekdays counted in a month (Thanksgiving is November's fourth Thursday,
Memorial Day May's last Monday) and Easter (the Gregorian computus). A holiday dates a
question only with a word or a year that says which one, as a season does: "last
Christmas" is the latest before today, "this Christmas" this year's once it has come (asked
before it, it is to come and names no window), "Christmas 2022" and "the Easter of 2023"
that year's. A bare holiday ("what do we eat at Thanksgiving?") asks about a habit, not a
day, and names none. ``memsieve.text.when`` makes the window: the day, with a day's slack.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

#: Each holiday: (month, day) for a fixed day; ("nth", month, weekday, n) for the n-th weekday
#: (Monday 0) of a month, n = -1 for the last; "easter" for Western Easter Sunday.
HOLIDAYS: dict[str, object] = {
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
    "new year's eve": (12, 31), "new year's day": (1, 1), "halloween": (10, 31),
    "valentine's day": (2, 14), "valentine's": (2, 14), "st. patrick's day": (3, 17), "st patrick's day": (3, 17),
    "independence day": (7, 4), "the fourth of july": (7, 4), "fourth of july": (7, 4), "july 4th": (7, 4),
    "thanksgiving": ("nth", 11, 3, 4), "memorial day": ("nth", 5, 0, -1), "labor day": ("nth", 9, 0, 1),
    "mother's day": ("nth", 5, 6, 2), "father's day": ("nth", 6, 6, 3), "easter": "easter",
    "easter sunday": "easter",
}
_NAMES = "|".join(re.escape(h) for h in sorted(HOLIDAYS, key=len, reverse=True))
#: "last christmas", "this thanksgiving", "the past easter", "christmas 2022", "the easter of 2023".
HOLIDAY = re.compile(rf"\b(?:(last|this|past)\s+)?({_NAMES})(?![\w'])(?:\s+(?:of\s+)?(\d{{4}})\b)?")
#: "this christmas" names the one just past up to this many days after it; later, the next one.
THIS_HOLIDAY_PAST_DAYS = 120


def easter(year: int) -> date:
    """Western Easter Sunday of ``year`` (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 19 * ell) // 433
    month = (h + ell - 7 * m + 90) // 25
    return date(year, month, (h + ell - 7 * m + 33 * month + 19) % 32)


def holiday_on(name: str, year: int) -> date:
    """The day of the holiday ``name`` (a key of ``HOLIDAYS``) in ``year``."""
    rule = HOLIDAYS[name]
    if rule == "easter":
        return easter(year)
    if isinstance(rule, tuple) and rule[0] == "nth":
        _, month, weekday, n = rule
        if n > 0:
            first = date(year, month, 1)
            return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
        last = (date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)) - timedelta(days=1)
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    month, day = rule  # type: ignore[misc]
    return date(year, month, day)


def holiday_day(m: re.Match[str], now: datetime, *, asked_in_past: bool = False) -> date | None:
    """The day a ``HOLIDAY`` match names, read against ``now``; None when it names none (a bare
    holiday, or "this" one still to come). A bare holiday in a question about the past ("what did
    I do on New Year's Eve?", ``asked_in_past``) is the last one; elsewhere ("what do we eat at
    Thanksgiving?") it names none."""
    which, name, year = m.groups()
    if year is not None:
        return holiday_on(name, int(year))
    if which is None and not asked_in_past:
        return None
    today = now.date()
    this_year = holiday_on(name, today.year)
    if which == "this":
        if this_year > today:
            return None
        return this_year if (today - this_year).days <= THIS_HOLIDAY_PAST_DAYS else None
    return this_year if this_year < today else holiday_on(name, today.year - 1)
