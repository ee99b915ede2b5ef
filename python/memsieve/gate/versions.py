"""The rule of "B is a newer version of A", and the bars it is judged by.

When a scope holds both "I drive a blue hatchback" and, later, "I sold the
hatchback and bought an electric car", the second is a newer version of the
first. ``newer_version_reason`` is the one rule that says so. Three callers ask
it, each handing in what it measures: the gate (is a candidate close to its
nearest memories their newer version: ``GateScore.says_more``), the read path
(are two results versions: ``memsieve.read.versions``) and consolidation
(duplicates or versions: ``PairVerdict``). It lives here, below all three, and
sees measurements and texts only, never the store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

import memsieve._core as _core
from memsieve.text.lexicon import ENGLISH, Lexicon

#: Among the results asked for, memories at least this close are taken as versions of
#: one fact and the newest goes first. Reordering within the results never drops one,
#: so a low bar costs no recall (docs/UPDATES.md has the sweep).
DEFAULT_VERSION_COS = 0.4
#: ... and they must answer the query about equally well: cosines to it within this
#: gap. On the updates dev set 0.25 keeps 86% of versions newest-first (0.3: 90%,
#: 0.2: 83%); at 0.3 a fact about one person was outranked by a newer, unrelated
#: fact about her, which 0.25 prevents in the tests.
VERSION_RELEVANCE_GAP = 0.25
#: A newer memory that says a change (memsieve.text.cues) and shares a content term
#: with an older one is its version at a lower bar: a correction or a later event is
#: often worded apart from the fact it changes, and answers the question less
#: directly ("I quit Fenwick Insurance" for "where do I work?").
CHANGED_COS_OFFSET = 0.1  # below version_cos: 0.3 at the default
CHANGED_RELEVANCE_GAP = 0.4
#: A said change lets the older memory leave search (``older_may_leave``) only when it
#: is about what the older says: the older's plain words carry less than this against
#: the newer. "I quit Fenwick Insurance" ends "I work at Fenwick Insurance" (0.4 of the
#: older's words unsaid); a "not" in a fact that shares a word or two with an older one
#: ends nothing. On the LoCoMo dev facts, every merge by a change cue at 0.5 or above
#: hid a detail the newer does not hold (docs/CONSOLIDATION.md).
CHANGED_INFO = 0.5

#: Why a memory is a newer version of another (see ``newer_version_reason``).
VersionReason = Literal["information", "value", "change", "close"]


@dataclass(frozen=True, kw_only=True)
class VersionEvidence:
    """What is known of a later memory against an earlier one.

    A caller fills in what it measures; what it leaves at the default takes
    no part in the rule.

    Attributes:
        said: the change cues (a Lexicon's) the later says and the earlier does not.
        unsaid: the change cues the earlier says and the later does not.
        information: the later's information term against the earlier, in [0, 1] (nan: not measured).
        new_values: the number, date and name terms the later holds and the earlier lacks.
        shares_slot: whether both hold a content term other than the person they are about
            (``slot_terms``; None: not measured).
        cosine: their cosine (None: not measured, as at write, where the gate's band is the
            similarity bar, and in consolidation, where its ``min_sim`` is).
        relevance_gap: how far apart their cosines to the query are (None: no query).
        other_subject: each names its subject by a number or name the other lacks
            (``other_subject``): "Room 101 has the printer" / "Room 102 has the printer"
            are two facts, both true, and neither is a version of the other.
    """

    said: frozenset[str] = frozenset()
    unsaid: frozenset[str] = frozenset()
    information: float = math.nan
    new_values: tuple[str, ...] = ()
    shares_slot: bool | None = None
    cosine: float | None = None
    relevance_gap: float | None = None
    other_subject: bool = False


@dataclass(frozen=True, kw_only=True)
class VersionBars:
    """The bars a newer version's evidence must clear; each caller keeps its own numbers.

    Attributes:
        info_tau: information at or above this is new content (``GateConfig.info_tau``;
            nan: never, as at read, which measures none).
        version_cos: two memories at least this close are versions when they also answer
            the query alike and share a content term or differ in a change.
        relevance_gap: ... answering alike: their cosines to the query at most this far apart.
        changed_cos: a said change's similarity bar (``version_cos - CHANGED_COS_OFFSET``).
        changed_gap: a said change's relevance bar.
        changed_info: a said change lets the older leave search when the older's plain
            words carry less than this against the newer (``older_may_leave``).
    """

    info_tau: float = math.nan
    version_cos: float = DEFAULT_VERSION_COS
    relevance_gap: float = VERSION_RELEVANCE_GAP
    changed_cos: float = DEFAULT_VERSION_COS - CHANGED_COS_OFFSET
    changed_gap: float = CHANGED_RELEVANCE_GAP
    changed_info: float = CHANGED_INFO

    @classmethod
    def at_read(cls, version_cos: float) -> "VersionBars":
        """The read path's bars for a ``Searcher``'s ``version_cos``."""
        return cls(version_cos=version_cos, changed_cos=version_cos - CHANGED_COS_OFFSET)


def newer_version_reason(evidence: VersionEvidence, *, bars: VersionBars) -> VersionReason | None:
    """Why the later memory is a newer version of the earlier, or None when nothing says so.

    Nothing says so when the two are about different things
    (``other_subject``). Otherwise the clauses, the first met named:

    - ``"information"``: it carries information the earlier lacks
      (``information >= info_tau``; the gate and consolidation measure it);
    - ``"value"``: it holds a number, date or name the earlier lacks
      (consolidation: a changed value is a correction);
    - ``"change"``: it says a change the earlier does not, about a content
      term they share and within the change bars, wherever those are measured
      (the gate against its nearest memories; the read path);
    - ``"close"``: they are close in meaning, answer the query alike, and
      share a content term or differ in a change (the read path only: it
      alone measures a query).

    Args:
        evidence: what the caller measured of the pair, the later first.
        bars: the caller's bars.
    """
    e = evidence
    if e.other_subject:
        return None
    if e.information >= bars.info_tau:
        return "information"
    if e.new_values:
        return "value"
    if e.said and e.shares_slot is not False and _within(e, cos=bars.changed_cos, gap=bars.changed_gap):
        return "change"
    if (e.cosine is not None and e.relevance_gap is not None
            and _within(e, cos=bars.version_cos, gap=bars.relevance_gap)
            and (e.shares_slot or e.said or e.unsaid)):
        return "close"
    return None


def older_may_leave(newer: VersionEvidence, older: VersionEvidence, *, bars: VersionBars) -> bool:
    """Whether the older of two memories may leave search for the newer: nothing true is lost.

    Either the newer says a change the older does not (a correction, an
    ending) about what the older says (the older's plain words carry less
    than ``changed_info`` against it), or the older says nothing the newer lacks but the values the
    newer replaced: its plain words' information against the newer
    (``older.information``) is below ``info_tau``, and any number, date or
    name only it holds (``older.new_values``) faces one the newer holds in
    its place ("code 4471" / "code 4472"). Two memories about different
    things (``other_subject``) both stay.

    Args:
        newer: the newer's evidence against the older.
        older: the older's against the newer (``information`` over its plain words).
        bars: the caller's bars.
    """
    if newer.other_subject or older.other_subject:
        return False
    if newer_version_reason(newer, bars=bars) == "change" and older.information < bars.changed_info:
        return True
    replaced = not older.new_values or bool(newer.new_values)
    return bool(older.information < bars.info_tau) and replaced and not older.said


def other_subject(a: str, b: str, lexicon: Lexicon = ENGLISH) -> bool:
    """Whether each text names its subject by a number or name the other lacks (``Lexicon.identifying_values``)."""
    return other_subject_of_ids(lexicon.identifying_values(a), lexicon.identifying_values(b))


def other_subject_of_ids(ids_a: frozenset[str], ids_b: frozenset[str]) -> bool:
    """Whether the same noun carries another number in ``ids_a`` than in ``ids_b`` (``"noun number"`` keys)."""
    numbers_a: dict[str, set[str]] = {}
    for key in ids_a:
        noun, _, number = key.partition(" ")
        numbers_a.setdefault(noun, set()).add(number)
    for key in ids_b:
        noun, _, number = key.partition(" ")
        if noun in numbers_a and number not in numbers_a[noun]:
            return True
    return False


def slot_terms(text: str, lexicon: Lexicon = ENGLISH) -> set[str]:
    """A memory's content terms other than the person it is about (``Lexicon.subject_terms``)."""
    return set(_core.tokenize(text)) - lexicon.subject_terms(text)


def _within(e: VersionEvidence, *, cos: float, gap: float) -> bool:
    """Whether the measured cosine and relevance gap clear the bars (what is not measured does)."""
    return bool((e.cosine is None or e.cosine >= cos) and (e.relevance_gap is None or e.relevance_gap <= gap))


