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
  follow it directly, newest first, each marked ``superseded_by`` the newest;
- two events found alike ("I went to a jazz concert" / "I went to a rock
  concert": memsieve.text.events) are *siblings*, not versions: both stay
  true, neither is marked superseded, and they are put in order of time only
  for a question with an order word ("the most recent concert"), with the
  other events that question asks about (``ordered_events``).

``newer_version_reason`` (memsieve.gate.versions) is the one rule of "B is a
newer version of A"; this module asks it of two results. The functions here
see texts, times, links and vectors, never the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

import memsieve._core as _core
from memsieve.gate.versions import (DEFAULT_VERSION_COS, VersionBars, VersionEvidence, newer_version_reason,
                                    other_subject_of_ids, slot_terms)
from memsieve.text.lexicon import ENGLISH, Lexicon

__all__ = ["DEFAULT_VERSION_COS", "Alike", "Version", "alike_pairs", "freshen", "may_be_versions",
           "is_event", "ordered_events", "version_groups", "version_pairs"]


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
    return alike_pairs(ranked, texts=texts, vectors=vectors, query=query, version_cos=version_cos,
                       lexicon=lexicon, roles=roles).versions


class Alike(NamedTuple):
    """The pairs of retrieved memories found alike: ``versions`` of one fact, and ``siblings``,
    two events of one kind (memsieve.text.events), both true, neither the newer version."""

    versions: list[tuple[int, int]]
    siblings: list[tuple[int, int]]


def alike_pairs(ranked: Sequence[Version], *, texts: Mapping[int, str], vectors: Mapping[int, np.ndarray],
                query: np.ndarray | None, version_cos: float, lexicon: Lexicon = ENGLISH,
                roles: Mapping[int, str | None] | None = None, events: dict[int, bool] | None = None) -> Alike:
    """``version_pairs``, with the pairs that tell of two events apart as ``siblings``.

    "I went to a jazz concert" and, later, "I went to a rock concert" meet the version rule,
    but the second does not replace the first: they are siblings, which freshness never marks
    superseded and lists in order of time only when the query asks for one ("the most recent
    concert", "my first race"). Arguments as for ``version_pairs``, and ``events``: which keys tell
    of an event, as far as read, filled in as more are read (a search shares one among its stages).
    """
    known = [v for v in ranked if v.key in vectors]
    if len(known) < 2 or query is None or version_cos >= 1.0:
        return Alike([], [])
    m = np.ascontiguousarray(np.stack([vectors[v.key] for v in known]), dtype=np.float32)
    sims = m @ m.T
    rel = m @ query
    gap = np.abs(rel[:, None] - rel[None, :])
    bars = VersionBars.at_read(version_cos)
    cues = [lexicon.cues(texts[v.key]) for v in known]
    slots = [slot_terms(texts[v.key], lexicon) for v in known]
    named = [lexicon.identifying_values(texts[v.key]) for v in known]
    # Only a pair within the looser of the two bars can be versions: the rule tells which are.
    near = np.triu((sims >= min(bars.version_cos, bars.changed_cos))
                   & (gap <= max(bars.relevance_gap, bars.changed_gap)), k=1)
    pairs: list[tuple[int, int]] = []
    siblings: list[tuple[int, int]] = []
    events = {} if events is None else events
    said_by = roles or {}
    for i, j in np.argwhere(near):
        new, old = (i, j) if known[i].recency() > known[j].recency() else (j, i)
        if not may_be_versions(known[i], known[j], said_by):
            continue
        evidence = VersionEvidence(said=cues[new] - cues[old], unsaid=cues[old] - cues[new],
                                   shares_slot=bool(slots[new] & slots[old]), cosine=sims[i, j],
                                   relevance_gap=gap[i, j],
                                   other_subject=other_subject_of_ids(named[new], named[old]))
        if newer_version_reason(evidence, bars=bars) is not None:
            pair = (known[i].key, known[j].key)
            both = all(is_event(events, k, texts, lexicon) for k in pair)
            (siblings if both else pairs).append(pair)
    return Alike(pairs, siblings)


def ordered_events(ranked: Sequence[int], *, texts: Mapping[int, str], topic: frozenset[str],
                   lexicon: Lexicon = ENGLISH, roles: Mapping[int, str | None] | None = None,
                   events: dict[int, bool] | None = None) -> list[tuple[int, int]]:
    """The sibling pairs of the events a question with an order word asks to be put in time.

    "The last thing I bought" and "who did I visit most recently" ask about events that are
    not alike enough to be found alike ("I bought a standing desk", "I bought headphones"),
    yet the question wants them in order. The best-ranked event that says a word of the
    question's ``topic`` leads; every event of its speaker that says each topic word the leader
    says joins it ("bought"; for "the first concert I went to", "concert" and "went": "I went
    hiking" does not join). Every two of them are siblings.

    Args:
        ranked: the retrieved memories' keys, best first.
        texts: their texts.
        topic: the question's index terms besides its order and time words (``when.topic_terms``).
        lexicon: reads which texts tell of an event.
        roles: each memory's chat role; only the leader's speaker's events join.
        events: which keys tell of an event, as far as read (``alike_pairs``).
    """
    said_by = roles or {}
    memo = {} if events is None else events
    told = [k for k in ranked if is_event(memo, k, texts, lexicon)]
    terms = {k: frozenset(_core.tokenize(texts[k])) for k in told}
    leader = next((k for k in told if terms[k] & topic), None)
    if leader is None:
        return []
    needed = terms[leader] & topic
    group = [k for k in told if needed <= terms[k] and said_by.get(k) == said_by.get(leader)]
    return [(a, b) for i, a in enumerate(group) for b in group[i + 1:]]


def is_event(memo: dict[int, bool], key: int, texts: Mapping[int, str], lexicon: Lexicon) -> bool:
    """Whether memory ``key`` tells of an event (``Lexicon.tells_of_event``), read once into ``memo``."""
    if key not in memo:
        memo[key] = lexicon.tells_of_event(texts[key])
    return memo[key]


def may_be_versions(a: Version, b: Version, roles: Mapping[int, str | None]) -> bool:
    """Whether two retrieved memories may be versions of one fact by what they say: said by one
    speaker, at two moments. An assistant's answer is no version of what the user said (nor the
    reverse), and two memories given one ``valid_from`` (one session's turns, written together)
    hold at the same time: neither is the newer. A correction within one moment is the write
    path's to link."""
    if roles.get(a.key) != roles.get(b.key):
        return False
    return a.valid_from is None or a.valid_from != b.valid_from


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
            oldest_first: bool = False, lead: frozenset[int] = frozenset(),
            siblings: Sequence[tuple[int, int]] = (),
            sibling_order: Literal["earliest", "latest"] | None = None) -> list[tuple[Version, int | None]]:
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
        siblings: pairs of events of one kind (``alike_pairs``): never marked
            superseded; with ``sibling_order``, a set of siblings alike to one
            another (a clique) is listed together at its best rank, oldest
            first for ``"earliest"`` and newest first for ``"latest"``. Only
            memories that are versions of nothing here are ordered so.

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
    if siblings and sibling_order is not None:
        out = _order_siblings(out, [members[g][0].key for g in first_seen if len(members[g]) == 1], siblings,
                              newest_first=sibling_order == "latest", lead=lead)
    return out


def _order_siblings(out: list[tuple[Version, int | None]], alone: list[int], siblings: Sequence[tuple[int, int]], *,
                    newest_first: bool, lead: frozenset[int]) -> list[tuple[Version, int | None]]:
    """``out`` with each clique of siblings among the ``alone`` keys listed together in order of time."""
    clique = version_groups(alone, [], [p for p in siblings if p[0] != p[1]])
    together: dict[int, list[Version]] = {}
    for v, _ in out:
        if v.key in clique:
            together.setdefault(clique[v.key], []).append(v)
    done: set[int] = set()
    ordered: list[tuple[Version, int | None]] = []
    for v, newer in out:
        rep = clique.get(v.key)
        if rep is None or len(together[rep]) == 1:
            ordered.append((v, newer))
            continue
        if rep in done:
            continue
        done.add(rep)
        timed = sorted(together[rep], key=Version.recency, reverse=newest_first)
        timed = [t for t in timed if t.key in lead] + [t for t in timed if t.key not in lead]
        ordered.extend((t, None) for t in timed)
    return ordered
