"""Render search results for a prompt: one line per memory, prefixed with its date.

A turn that says "yesterday" is only answerable when the reader also sees when
it was said, and that date lives in ``valid_from``, not in the text. So the
reader gets ``[2023-05-08] Caroline: I went to the support group yesterday.``.
This is the one rendering: ``Memory`` and the evaluation both use it, so what
is scored is what an agent is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Literal

from memsieve.errors import ConfigError

Order = Literal["relevance", "time"]
ORDERS: tuple[str, ...] = ("relevance", "time")


def result_date(result: Any) -> str | None:
    """The ``YYYY-MM-DD`` of a result's ``valid_from``, or None when it has none.

    Args:
        result: anything with a ``valid_from`` attribute holding an ISO-8601
            string (``SearchResult``, ``MemoryItem``) or None.

    Returns:
        The calendar date as written in ``valid_from`` (its own offset, not
        converted), or None if ``valid_from`` is missing or not ISO-8601.
    """
    raw = getattr(result, "valid_from", None)
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        return datetime.fromisoformat(raw.strip()).date().isoformat()
    except ValueError:
        return None


def render_line(result: Any, *, dated: bool = True) -> str:
    """One result as one line: ``[YYYY-MM-DD] text``, or just the text when undated.

    Line breaks inside the text become spaces, so a result never spans lines.

    Args:
        result: anything with ``text`` and ``valid_from`` attributes.
        dated: prefix the date of ``valid_from`` (results without one get no prefix).
    """
    text = " ".join(str(result.text).splitlines()).strip()
    date = result_date(result) if dated else None
    return f"[{date}] {text}" if date else text


def render_results(results: Sequence[Any], *, order: Order = "relevance", dated: bool = True) -> str:
    """Results as prompt text, one line each (see :func:`render_line`).

    Args:
        results: search results, best first (``Memory.search``'s order).
        order: ``"relevance"`` keeps the given order; ``"time"`` sorts by
            ``valid_from``, oldest first (ties keep relevance order), with
            undated results after the dated ones, in relevance order.
        dated: prefix each line with its ``[YYYY-MM-DD]``.

    Returns:
        The lines joined by ``"\\n"``; ``""`` for no results.

    Raises:
        ConfigError: ``order`` is not one of ``"relevance"``, ``"time"``.
    """
    if order not in ORDERS:
        raise ConfigError(f"order must be one of {', '.join(ORDERS)}, got {order!r}; "
                          f"use 'relevance' (best first) or 'time' (oldest first)")
    items = list(results)
    if order == "time":
        stamps = [_instant(r) for r in items]
        dated_ones = sorted((i for i in range(len(items)) if stamps[i] is not None),
                            key=lambda i: (stamps[i], i))
        undated = [i for i in range(len(items)) if stamps[i] is None]
        items = [items[i] for i in dated_ones + undated]
    return "\n".join(render_line(r, dated=dated) for r in items)


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
