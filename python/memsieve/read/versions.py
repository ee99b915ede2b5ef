"""Freshness at read: among versions of one fact, the newest takes the group's best rank.

When a scope holds both "I drive a blue hatchback" and, later, "I sold the
hatchback and bought an electric car", a question about the car retrieves
both, often the older first: it is the closer paraphrase of the question. An
LLM judging which is current is worse at this than the plain rule
(arXiv:2606.01435: +10.8 points on fact consolidation by taking the maximum
timestamp after retrieval). So the rule is deterministic:

- memories are *versions of one fact* when the write path linked them
  (``updates``, ``supersedes``) or when they are near-duplicates of each other
  (cosine at or above a threshold);
- within a group, the newest (by ``valid_from``, then ``created_at``, then
  insertion order) takes the best rank any member had, and the older members
  follow it directly, newest first, each marked ``superseded_by`` the newest.

The functions here are pure: they see ranks, times, links and similarities,
never the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Link kinds that say "this memory is a newer version of that one".
VERSION_LINKS = frozenset({"updates", "supersedes"})


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


def version_groups(keys: Sequence[int], pairs: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Each key's group representative, grouping every pair transitively (union-find).

    Args:
        keys: the retrieved memories.
        pairs: (a, b) pairs known to be versions of one fact; keys outside
            ``keys`` are ignored.
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
    return {k: find(k) for k in keys}


def freshen(ranked: Sequence[Version], pairs: Sequence[tuple[int, int]]) -> list[tuple[Version, int | None]]:
    """Reorder a ranking so that the newest version of each fact comes first.

    Args:
        ranked: the retrieved memories, best first.
        pairs: pairs of keys that are versions of one fact (linked, or
            near-duplicates).

    Returns:
        (version, superseded_by) best first: ``superseded_by`` is the key of
        the group's newest member for every older member, None otherwise.
        Groups keep the position of their best-ranked member; a group's
        members are listed together, newest first.
    """
    group_of = version_groups([v.key for v in ranked], pairs)
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
        out.append((group[0], None))
        out.extend((v, newest) for v in group[1:])
    return out
