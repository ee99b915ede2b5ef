"""Versions of one fact: which memories are versions, and the newest first.

When a scope holds both "I drive a blue hatchback" and, later, "I sold the
hatchback and bought an electric car", a question about the car retrieves
both, often the older first: it is the closer paraphrase of the question. An
LLM judging which is current is worse at this than the plain rule
(arXiv:2606.01435: +10.8 points on fact consolidation by taking the maximum
timestamp after retrieval). So the rule is deterministic:

- memories are *versions of one fact* when the write path linked them
  (``updates``, ``supersedes``; a chain of links is one history) or when
  ``newer_version_reason`` says so of two retrieved memories of one speaker
  said at two moments (``version_pairs``); memories found alike join one
  group only when each is a version of every other (``version_groups``), so
  that a chat's turns, each like the next, do not chain into one "fact";
- within a group, the newest (by ``valid_from``, then ``created_at``, then
  insertion order) takes the best rank any member had, and the older members
  follow it directly, newest first, each marked ``superseded_by`` the newest.

``newer_version_reason`` is the one rule of "B is a newer version of A". Three
callers ask it, each handing in what it measures: the gate (is a candidate
close to its nearest memories their newer version: ``GateScore.says_more``),
the read path here (are two results versions) and consolidation (duplicates
or versions: ``PairVerdict``). The functions here see texts, times, links and
vectors, never the store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from memsieve import _core
from memsieve.text.lexicon import ENGLISH, Lexicon

#: Link kinds that say "this memory is a newer version of that one".
VERSION_LINKS = frozenset({"updates", "supersedes"})
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
    return _other(lexicon.identifying_values(a), set(_core.tokenize(a)),
                  lexicon.identifying_values(b), set(_core.tokenize(b)))


def _other(ids_a: frozenset[str], terms_a: set[str], ids_b: frozenset[str], terms_b: set[str]) -> bool:
    """Whether one noun names its thing by another number in each ("room 101" / "room 102").

    ``terms_a`` and ``terms_b`` are accepted for the callers' symmetry; a
    number the other text lacks elsewhere is a value, judged by the value rule.
    """
    return other_subject_of_ids(ids_a, ids_b)


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


def _within(e: VersionEvidence, *, cos: float, gap: float) -> bool:
    """Whether the measured cosine and relevance gap clear the bars (what is not measured does)."""
    return bool((e.cosine is None or e.cosine >= cos) and (e.relevance_gap is None or e.relevance_gap <= gap))


@dataclass(frozen=True)
class Version:
    """One retrieved memory as freshness sees it.

    Attributes:
        key: the memory's identity (its seq or id).
        valid_from: when the fact began to hold (ISO-8601), or None.
        created_at: when the store learned it (ISO-8601).
        order: insertion order within the store (a tie-breaker that never ties).
    """

    key: int
    valid_from: str | None
    created_at: str
    order: int

    def recency(self) -> tuple[str, str, int]:
        return (self.valid_from or self.created_at, self.created_at, self.order)


def version_pairs(ranked: Sequence[Version], *, texts: Mapping[int, str], vectors: Mapping[int, np.ndarray],
                  query: np.ndarray | None, version_cos: float,
                  lexicon: Lexicon = ENGLISH, roles: Mapping[int, str | None] | None = None) -> list[tuple[int, int]]:
    """The pairs of retrieved memories that are versions of one fact by what they say.

    Two versions of one fact answer the query about equally well, while a
    fact and another on the same person usually do not; so beside the
    similarity bar a pair must meet a relevance bar (``VersionBars``).

    Args:
        ranked: the retrieved memories, best first.
        texts: their texts by key.
        vectors: their (d,) float32 unit vectors by key; a memory without one
            is paired by its links only.
        query: the query's (d,) vector; None (keyword search) pairs nothing.
        version_cos: the similarity bar (``VersionBars.at_read``); 1.0 pairs
            nothing, leaving the linked versions alone.
        lexicon: the language the change cues and subjects are read in.
        roles: each memory's chat role (``memsieve.read.speaker.role_of``); two
            memories of different speakers, or of one ``valid_from``, are never paired.
    """
    known = [v for v in ranked if v.key in vectors]
    if len(known) < 2 or query is None or version_cos >= 1.0:
        return []
    m = np.ascontiguousarray(np.stack([vectors[v.key] for v in known]), dtype=np.float32)
    sims = m @ m.T
    rel = m @ query
    gap = np.abs(rel[:, None] - rel[None, :])
    bars = VersionBars.at_read(version_cos)
    cues = [lexicon.cues(texts[v.key]) for v in known]
    slots = [slot_terms(texts[v.key], lexicon) for v in known]
    terms = [set(_core.tokenize(texts[v.key])) for v in known]
    named = [lexicon.identifying_values(texts[v.key]) for v in known]
    # Only a pair within the looser of the two bars can be versions: the rule tells which are.
    near = np.triu((sims >= min(bars.version_cos, bars.changed_cos))
                   & (gap <= max(bars.relevance_gap, bars.changed_gap)), k=1)
    pairs = []
    said_by = roles or {}
    for i, j in np.argwhere(near):
        new, old = (i, j) if known[i].recency() > known[j].recency() else (j, i)
        if not may_be_versions(known[i], known[j], said_by):
            continue
        evidence = VersionEvidence(said=cues[new] - cues[old], unsaid=cues[old] - cues[new],
                                   shares_slot=bool(slots[new] & slots[old]), cosine=sims[i, j],
                                   relevance_gap=gap[i, j],
                                   other_subject=_other(named[new], terms[new], named[old], terms[old]))
        if newer_version_reason(evidence, bars=bars) is not None:
            pairs.append((known[i].key, known[j].key))
    return pairs


def may_be_versions(a: Version, b: Version, roles: Mapping[int, str | None]) -> bool:
    """Whether two retrieved memories may be versions of one fact by what they say: said by one
    speaker, at two moments. An assistant's answer is no version of what the user said (nor the
    reverse), and two memories given one ``valid_from`` (one session's turns, written together)
    hold at the same time: neither is the newer. A correction within one moment is the write
    path's to link."""
    if roles.get(a.key) != roles.get(b.key):
        return False
    return a.valid_from is None or a.valid_from != b.valid_from


def slot_terms(text: str, lexicon: Lexicon = ENGLISH) -> set[str]:
    """A memory's content terms other than the person it is about (``Lexicon.subject_terms``)."""
    return set(_core.tokenize(text)) - lexicon.subject_terms(text)


def version_groups(keys: Sequence[int], pairs: Sequence[tuple[int, int]],
                   similar: Sequence[tuple[int, int]] = ()) -> dict[int, int]:
    """Each key's group representative: ``pairs`` grouped transitively, ``similar`` only as cliques.

    A chain of links the write path made (``updates``, ``supersedes``) is one
    fact's history, however long: those group transitively (union-find). Two
    memories that ``version_pairs`` finds alike are versions of each other, not
    of everything each is alike to: in a chat, turn A is close to B and B to C
    while A and C are about other things, and one group of all three would put
    C (the newest) at A's rank. So a group joins another through ``similar``
    only when every member of one is a version of every member of the other
    (linked or alike), the groups taken best ranked first.

    A group's representative is its smallest key, so the groups do not
    depend on the order of ``pairs`` or ``similar``.

    Args:
        keys: the retrieved memories, best first.
        pairs: (a, b) pairs linked as versions of one fact; keys outside
            ``keys`` are ignored.
        similar: (a, b) pairs that are versions by what they say.
    """
    parent = {k: k for k in keys}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for a, b in pairs:
        if a in parent and b in parent:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for k in keys:
        groups.setdefault(find(k), []).append(k)
    near = {frozenset(p) for p in similar if p[0] in parent and p[1] in parent and p[0] != p[1]}
    if near:
        linked = near | {frozenset(p) for p in pairs if p[0] in parent and p[1] in parent}
        joined: list[list[int]] = []
        for members in groups.values():  # best ranked first: dicts keep insertion order
            for into in joined:
                if (any(frozenset((a, b)) in near for a in into for b in members)
                        and all(frozenset((a, b)) in linked for a in into for b in members)):
                    into.extend(members)
                    break
            else:
                joined.append(list(members))
        groups = {min(m): m for m in joined}
    return {k: rep for rep, members in groups.items() for k in members}


def freshen(ranked: Sequence[Version], pairs: Sequence[tuple[int, int]], *,
            similar: Sequence[tuple[int, int]] = (),
            oldest_first: bool = False, lead: frozenset[int] = frozenset()) -> list[tuple[Version, int | None]]:
    """Reorder a ranking so that the newest version of each fact comes first.

    Args:
        ranked: the retrieved memories, best first.
        pairs: pairs of keys linked as versions of one fact (grouped transitively).
        similar: pairs that ``version_pairs`` finds alike (grouped only as cliques:
            ``version_groups``).
        oldest_first: list each group oldest first instead (a query that asks
            for the earliest: memsieve.read.when); ``superseded_by`` still
            names the newest.
        lead: keys that lead their group, in the same order among
            themselves (memories dated inside a query's time window).

    Returns:
        (version, superseded_by) best first: ``superseded_by`` is the key of
        the group's newest member for every older member, None otherwise.
        Groups keep the position of their best-ranked member; a group's
        members are listed together, newest first.
    """
    group_of = version_groups([v.key for v in ranked], pairs, similar)
    members: dict[int, list[Version]] = {}
    first_seen: list[int] = []
    for v in ranked:
        g = group_of[v.key]
        if g not in members:
            members[g] = []
            first_seen.append(g)
        members[g].append(v)
    out: list[tuple[Version, int | None]] = []
    for g in first_seen:
        group = sorted(members[g], key=Version.recency, reverse=True)
        newest = group[0].key
        listed = group[::-1] if oldest_first else group
        if lead:
            listed = [v for v in listed if v.key in lead] + [v for v in listed if v.key not in lead]
        out.extend((v, None if v.key == newest else newest) for v in listed)
    return out
