"""A query's "now": the read pipeline's time stage.

A question read against a reference time (``Memory.search(reference_time=...)``;
None: the call's time) says two things (``memsieve.text.when.read_when``):

- a **window** ("two weeks ago", "last month", "in March", "yesterday"): the
  memories whose ``valid_from`` falls inside rank higher. A boost, never a
  filter: the ranking lists are read ``WINDOW_REACH`` times deeper than usual,
  and each memory dated inside the window, in the usual ranking or only in the
  deeper one, gains ``WINDOW_BOOST`` of the spread of the usual ranking's
  scores. Memories only the deeper lists reach follow the usual ranking, scored
  at its floor, so without an in-window memory the results are exactly the
  usual ones. A question about the window alone ("what happened yesterday?":
  no content word but the window's and the lexicon's ``happening_words``)
  raises them by ``WINDOW_ALONE_BOOST``, above the whole spread, so they
  lead. A memory that tells of an event inside the window ("I planted
  tomatoes today", "I cleaned my sneakers last month": its own dating words
  read against its own date, ``memsieve.text.when_told.events_dated``) gains
  ``WINDOW_BOOST + EVENT_BOOST``, wherever its own date lies: it says what happened
  then, where one merely dated inside may say anything. An assistant's words
  date no event (its "today" is when it wrote, not when anything happened);
- an **order** ("first", "originally" / "most recent", "currently"): among the
  versions of one fact (memsieve.read.versions) ``"earliest"`` lists the oldest
  first; ``"latest"`` keeps freshness's newest first, as does no order word.

Without a reference time the window is read against the call's time, and a
window relative to it ("last month", "in June") is used only when the
retrieved memories reach within ``IMPLICIT_NOW_DAYS`` of it: a
store whose newest memory is older than that (a conversation of years ago,
replayed) is asked about its own time, not about today, and there "last month"
means nothing the store can answer. A window that names its year ("in
October 2023", "on May 3, 2023") needs no "now" and is always used. A caller
who knows the question's time passes it. The constants were chosen on LongMemEval dev (docs/NOW.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterator, Literal

import memsieve._core as _core
from memsieve.read.rank import lift_by
from memsieve.text.when import EARLIEST, LATEST, Window, read_when
from memsieve.text.when_spans import tells_of

Hits = list[tuple[int, float]]  # (seq, score), best first
Order = Literal["earliest", "latest"]

#: The dense and keyword lists are read this many times deeper when a question has a window.
WINDOW_REACH = 3
#: An in-window memory's score gains this share of the usual ranking's score spread (top minus floor).
WINDOW_BOOST = 0.8
#: ... and a memory that tells of an event it dates inside the window ("I planted tomatoes today",
#: "I cleaned my sneakers last month": ``events_dated``, read against the memory's own date) gains
#: this much more: it says what happened then, where one merely dated inside may say anything.
EVENT_BOOST = 0.2
#: A question that asks about its window alone ("what happened yesterday?", ``Lexicon.asks_only_when``)
#: raises the memories dated inside by this share instead: more than the whole spread, so they lead.
WINDOW_ALONE_BOOST = 1.05
#: Without a reference time, a window is used only if some retrieved memory is dated within this many days of now.
IMPLICIT_NOW_DAYS = 180

_YEAR = re.compile(r"\b\d{4}\b")
_ON: ContextVar[bool] = ContextVar("memsieve_read_when_on", default=True)


@contextmanager
def stage_off() -> Iterator[None]:
    """Within this block, searches (in this thread or task) run without the time stage, as before it existed.

    For side-by-side evaluations (``memsieve eval longmemeval --before-now``); not for applications.
    """
    token = _ON.set(False)
    try:
        yield
    finally:
        _ON.reset(token)


@dataclass(frozen=True)
class Focus:
    """What a query says about time, read against its reference time.

    Attributes:
        window: the dates it points at, or None.
        order: ``"earliest"``, ``"latest"`` or None.
        now: the reference time, timezone-aware.
        implicit: whether ``now`` is the call's time (no reference time was passed).
    """

    window: Window | None
    order: Order | None
    now: datetime
    implicit: bool

    def reaches(self) -> int:
        """How many times deeper the ranking lists are read: ``WINDOW_REACH`` with a window, else 1."""
        return WINDOW_REACH if self.window is not None else 1


def focus(query: str, reference_time: str | None, *, clock: datetime | None = None) -> Focus | None:
    """The query's time focus, or None when the stage is off or the query says nothing about time.

    Args:
        query: the query's text.
        reference_time: the query's "now" as an ISO-8601 string (``memsieve.inputs.iso_time``),
            or None for the call's time. Its calendar words ("today", "this year", "in June")
            are read in the string's own UTC offset (none: UTC).
        clock: the call's time (tests); None: ``datetime.now(timezone.utc)``.
    """
    if not _ON.get():
        return None
    implicit = reference_time is None
    now = (clock or datetime.now(timezone.utc)) if reference_time is None else aware(reference_time)
    when = read_when(query, now)
    if when.window is None and when.order is None:
        return None
    return Focus(window=when.window, order=when.order, now=now, implicit=implicit)  # type: ignore[arg-type]


#: The index terms of the order words ("first", "most recent", "last"): what a question with an
#: order asks about is what it says besides them.
ORDER_TERMS = frozenset(_core.tokenize(" ".join((*EARLIEST, *LATEST, "last"))))


def topic_terms(query: str, f: Focus) -> frozenset[str]:
    """The index terms of ``query`` besides its order words and its window's phrase: what it asks about
    ("the last thing I bought": "thing", "bought")."""
    said = set(_core.tokenize(query)) - ORDER_TERMS
    if f.window is not None:
        said -= set(_core.tokenize(f.window.phrase))
    return frozenset(said)


def aware(iso: str) -> datetime:
    """The ISO time, in its own offset; a time without one is UTC."""
    dt = datetime.fromisoformat(iso)
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def promote(pool: Hits, head: int, dates: Mapping[int, str | None], f: Focus, *,
            texts: Mapping[int, str] | None = None,
            roles: Mapping[int, str | None] | None = None, alone: bool = False) -> tuple[Hits, frozenset[int]]:
    """The pool reordered with the in-window memories raised (see the module's docstring).

    Args:
        pool: the usual ranking's first ``head`` entries, then the memories only the deeper
            lists reach; best first.
        head: how many of ``pool`` are the usual ranking.
        dates: each pooled memory's ``valid_from`` (or, lacking one, ``created_at``), ISO-8601.
        f: the query's focus.
        texts: each pooled memory's text, read for the events it dates (None: none read).
        roles: each pooled memory's chat role; an assistant's words date no event of the
            user's ("today" in an answer is when it was written, not when anything happened).
        alone: the question asks about its window and nothing else ("what did I do last
            week?"): the in-window memories gain ``WINDOW_ALONE_BOOST``, so they lead.

    Returns:
        (pool best first, the in-window memories raised): the pool unchanged and no memory
        when none is dated inside the window nor tells of an event inside it, or when the
        reference time is implicit, the window does not name its year and every pooled memory
        is older than ``IMPLICIT_NOW_DAYS`` before it. A memory dated inside gains
        ``WINDOW_BOOST`` of the spread; one that tells of an event inside (dated inside or
        not) gains ``WINDOW_BOOST + EVENT_BOOST``. The raised ones also lead their fact's
        versions (``versions.freshen``'s ``lead``): the question asks what held then.
    """
    w = f.window
    if w is None or not pool:
        return pool, frozenset()
    when = {s: aware(d) for s, _ in pool if (d := dates.get(s))}
    relative = not _YEAR.search(w.phrase)
    if f.implicit and relative and (not when or max(when.values()) < f.now - timedelta(days=IMPLICIT_NOW_DAYS)):
        return pool, frozenset()
    dated = frozenset(s for s, t in when.items() if w.holds(t))
    told = _told_inside(w, when, texts or {}, roles or {})
    if not dated and not told:
        return pool, frozenset()
    raised = dated | told
    boost = WINDOW_ALONE_BOOST if alone else WINDOW_BOOST
    return lift_by(pool, head, lambda s: boost + EVENT_BOOST if s in told
                   else boost if s in dated else 0.0), raised


def _told_inside(w: Window, when: Mapping[int, datetime], texts: Mapping[int, str],
                 roles: Mapping[int, str | None]) -> frozenset[int]:
    """The memories whose text dates an event in ``w`` (windows overlapping), read against their own date."""
    return frozenset(s for s, said_at in when.items()
                     if (text := texts.get(s)) and roles.get(s) != "assistant" and tells_of(text, said_at, w))
