"""Render search results for a prompt: one line per memory, prefixed with its date.

A turn that says "yesterday" is only answerable when the reader also sees when
it was said, and that date lives in ``valid_from``, not in the text. So the
reader gets ``[2023-05-08] Caroline: I went to the support group yesterday.``
(``date_format="iso"``) or ``[8 May 2023] Caroline: ...`` (``"long"``: the day
without a leading zero and the English month, the form a conversation writes its
own dates in, "1:56 pm on 8 May, 2023"; the default, because it spells the
day and month as answers about time do). This is the one rendering: ``Memory`` and the evaluation both use it, so what
is scored is what an agent is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Literal

from memsieve.errors import ConfigError, is_choice, short_repr
from memsieve.text.english import MONTHS

Order = Literal["relevance", "time"]
ORDERS: tuple[str, ...] = ("relevance", "time")
DateFormat = Literal["iso", "long"]
DATE_FORMATS: tuple[str, ...] = ("iso", "long")
#: The format lines get unless the caller asks for another (docs/EVALUATION.md: chosen on LoCoMo dev).
DEFAULT_DATE_FORMAT: DateFormat = "long"


def result_date(result: Any, *, date_format: DateFormat = DEFAULT_DATE_FORMAT) -> str | None:
    """The calendar date of a result's ``valid_from``, or None when it has none.

    Args:
        result: anything with a ``valid_from`` attribute holding an ISO-8601
            string (``SearchResult``, ``MemoryItem``) or None.
        date_format: ``"iso"`` gives ``2023-05-08``; ``"long"`` gives ``8 May 2023``.

    Returns:
        The date as written in ``valid_from`` (its own offset, not converted),
        or, for a result that kept the offset its time was given in
        (``valid_from_local``), the date in that offset: the day it was said
        where it was said. None if ``valid_from`` is missing or not ISO-8601.

    Raises:
        ConfigError: ``date_format`` is not one of ``"iso"``, ``"long"``.
    """
    check_date_format(date_format)
    raw = getattr(result, "valid_from_local", None) or getattr(result, "valid_from", None)
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        day = datetime.fromisoformat(raw.strip()).date()
    except ValueError:
        return None
    return day.isoformat() if date_format == "iso" else f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def check_date_format(date_format: Any) -> str:
    """``date_format`` itself if it is a known format.

    Raises:
        ConfigError: it is not one of :data:`DATE_FORMATS`.
    """
    if not is_choice(date_format, DATE_FORMATS):
        raise ConfigError(f"date_format must be one of {', '.join(DATE_FORMATS)}, got {short_repr(date_format)}; "
                          f"use 'iso' ([2023-05-08]) or 'long' ([8 May 2023])")
    return date_format


def render_line(result: Any, *, dated: bool = True, date_format: DateFormat = DEFAULT_DATE_FORMAT,
                folded: bool = True) -> str:
    """One result as one line: ``[8 May 2023] text``, or just the text when undated.

    Line breaks inside the text become spaces, so a result never spans lines. A result's
    ``folded`` texts (what texts folded into it say that it does not) follow it on its line:
    ``[8 May 2023] I've tried three ... (told again on 27 June 2023: I've tried four ...)``.

    Args:
        result: anything with ``text`` and ``valid_from`` attributes.
        dated: prefix the date of ``valid_from`` (results without one get no prefix).
        date_format: ``"iso"`` (``[2023-05-08]``) or ``"long"`` (``[8 May 2023]``).
        folded: show the result's ``folded`` texts after it.

    Raises:
        ConfigError: an unknown ``date_format``.
    """
    text = _one_line(result.text)
    date = result_date(result, date_format=date_format) if dated else None
    line = f"[{date}] {text}" if date else text
    for fold in (getattr(result, "folded", ()) or ()) if folded else ():
        # What a text folded into this memory said that it does not (memsieve.read.folded).
        when = result_date(fold, date_format=date_format) if dated else None
        line += f" (told again{f' on {when}' if when else ''}: {_one_line(fold.text)})"
    return line


def _one_line(text: Any) -> str:
    return " ".join(str(text).splitlines()).strip()


def render_results(results: Sequence[Any], *, order: Order = "relevance", dated: bool = True,
                   date_format: DateFormat = DEFAULT_DATE_FORMAT, folded: bool = True) -> str:
    """Results as prompt text, one line each (see :func:`render_line`).

    Args:
        results: search results, best first (``Memory.search``'s order).
        order: ``"relevance"`` keeps the given order; ``"time"`` sorts by
            ``valid_from``, oldest first (ties keep relevance order), with
            undated results after the dated ones, in relevance order.
        dated: prefix each line with its date.
        date_format: ``"iso"`` (``[2023-05-08]``) or ``"long"`` (``[8 May 2023]``).
        folded: show each result's ``folded`` texts after it (``render_line``).

    Returns:
        The lines joined by ``"\\n"``; ``""`` for no results.

    Raises:
        ConfigError: ``order`` is not one of ``"relevance"``, ``"time"``, or
            ``date_format`` is unknown.
    """
    check_date_format(date_format)
    if not is_choice(order, ORDERS):
        raise ConfigError(f"order must be one of {', '.join(ORDERS)}, got {short_repr(order)}; "
                          f"use 'relevance' (best first) or 'time' (oldest first)")
    order = str.__str__(order)
    items = list(results)
    if order == "time":
        stamps = [_instant(r) for r in items]
        dated_ones = sorted((i for i in range(len(items)) if stamps[i] is not None),
                            key=lambda i: (stamps[i], i))
        undated = [i for i in range(len(items)) if stamps[i] is None]
        items = [items[i] for i in dated_ones + undated]
    return "\n".join(render_line(r, dated=dated, date_format=date_format, folded=folded) for r in items)


def _instant(result: Any) -> datetime | None:
    """``valid_from`` as an aware datetime (a naive time is read as UTC), for sorting."""
    raw = getattr(result, "valid_from", None)
    if not isinstance(raw, str):
        return None
    try:
        moment = datetime.fromisoformat(raw.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
