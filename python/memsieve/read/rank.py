"""Ranking: the memories a search may return, ordered by meaning, by words or both.

A restricted search (filters, ``as_of``) first loads its ``Candidates``, so
that only the memories it may return compete in either ranking; an
unrestricted one ranks over the scope's cached gate state (exact scan or
hnswlib index, and the scope's bm25 index).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

import memsieve._core as _core
from memsieve.read.fold_keys import FoldKeys, best_of
from memsieve.read.fusion import Fusion
from memsieve.scope import Scope
from memsieve.store.base import PartsRow

if TYPE_CHECKING:
    from memsieve.gate.cache import ScopeGates

Hits = list[tuple[int, float]]  # (seq, score), best first


def lift(pool: Hits, head: int, chosen: Callable[[int], bool], boost: float) -> Hits:
    """The pool with each chosen memory's score raised by ``boost`` of the usual ranking's spread, best first.

    The spread is the top score minus the floor of the usual ranking (the
    pool's first ``head`` entries); memories keep their order among equals.
    Shared by the time and speaker stages (memsieve.read.when, memsieve.read.speaker).
    """
    return lift_by(pool, head, lambda s: boost if chosen(s) else 0.0)


def lift_by(pool: Hits, head: int, gain: Callable[[int], float]) -> Hits:
    """``lift`` with a boost of its own for each memory: ``gain(seq)`` of the spread (0: unraised)."""
    usual = pool[:max(1, min(head, len(pool)))]
    spread = usual[0][1] - usual[-1][1]
    # With every usual score equal there is no spread: the raise scales with
    # the pool's largest score instead. A spread of nearly nothing (a tiny
    # top over a zero floor, subnormal scores) would make the raise vanish
    # below one ulp of the scores it is added to; a floor of a millionth of
    # that largest score (and of 1e-6) keeps it visible, and leaves any real
    # ranking's spread (cosines, fused z-scores: 0.01 and up) as it is.
    scale = max((abs(x) for _, x in pool if math.isfinite(x)), default=0.0)
    floor = max(scale * 1e-6, 1e-6)
    if not math.isfinite(spread) or spread <= 0.0:
        spread = max(scale, floor)
    elif spread < floor:
        spread = floor
    scored = [(s, x + gain(s) * spread, i) for i, (s, x) in enumerate(pool)]
    scored.sort(key=lambda t: (-t[1], t[2]))
    return [(s, x) for s, x, _ in scored]


class Candidates:
    """The memories a restricted search may return: seqs (n,) int64, matrix (n, d) float32, texts,
    and the part rows (``PartsRow``: passages, sentence keys) each of those texts had; for a
    point-in-time search, a memory edited since has the parts its version kept (none if that
    version was recorded before versions kept parts)."""

    def __init__(self, seqs: np.ndarray, matrix: np.ndarray, texts: list[str], as_of: str | None,
                 parts: PartsRow | None = None, filters: dict[str, Any] | None = None) -> None:
        self.seqs = seqs
        self.matrix = matrix
        self.texts = texts
        self.as_of = as_of
        self.parts = parts
        self.filters = filters or {}

    @classmethod
    def load(cls, store: Any, scope: Scope, *, filters: dict[str, Any], as_of: str | None) -> "Candidates":
        found = store.candidates(scope, as_of=as_of)
        keep = [i for i, m in enumerate(found.metadata) if matches_filters(m, filters)]
        if not keep:
            return cls(np.empty(0, np.int64), np.empty((0, 0), np.float32), [], as_of, filters=filters)
        seqs, matrix = np.ascontiguousarray(found.seqs[keep]), np.ascontiguousarray(found.matrix[keep])
        versions = found.versions[keep]
        dim = matrix.shape[1]
        parts = store.parts_of(seqs[versions < 0].tolist(), dim)
        if (versions >= 0).any():
            older = store.version_parts_of(versions[versions >= 0].tolist(), dim)
            parts = PartsRow(seqs=np.concatenate([parts.seqs, older.seqs]),
                             parts=np.concatenate([parts.parts, older.parts]),
                             matrix=np.ascontiguousarray(np.concatenate([parts.matrix, older.matrix])))
        return cls(seqs, matrix, [found.texts[i] for i in keep], as_of, parts, filters=filters)

    def __len__(self) -> int:
        return len(self.seqs)

    def vectors(self, seqs: list[int]) -> dict[int, np.ndarray]:
        """The (d,) rows of those of ``seqs`` that are candidates, by seq."""
        row = {int(s): i for i, s in enumerate(self.seqs)}
        return {s: self.matrix[row[s]] for s in seqs if s in row}


def matches_filters(metadata: dict[str, Any], filters: dict[str, Any]) -> bool:
    """Whether ``metadata`` holds every key of ``filters`` with an equal value (``json_equal``)."""
    return all(k in metadata and json_equal(metadata[k], v) for k, v in filters.items())


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON has it: ``true`` is not ``1`` (Python's ``True == 1`` is), at any depth;
    ``1`` and ``1.0`` are one number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


class Ranker:
    """Ranks a scope's memories for one query, in one of three modes.

    Args:
        gates: the scopes' cached gate state, for unrestricted searches.
        fusion: how ``hybrid`` combines the dense and keyword rankings.
        folds: the keyword side of the texts folded into memories (memsieve.read.fold_keys); None
            ranks memories by their own words alone.
    """

    def __init__(self, gates: "ScopeGates", *, fusion: Fusion, folds: FoldKeys | None = None) -> None:
        self._gates = gates
        self._fusion = fusion
        self._folds = folds

    def rank(self, scope: Scope, query: str, *, vector: np.ndarray | None, mode: str, depth: int,
             view: Candidates | None) -> Hits:
        """The best ``depth`` memories for ``query`` (its (d,) ``vector`` unless keyword mode).

        Args:
            scope: the scope searched.
            query: the query's text.
            vector: the query's embedding (None in keyword mode).
            mode: ``"dense"``, ``"keyword"`` or ``"hybrid"``.
            depth: how many to return.
            view: the candidates of a restricted search; None for the whole scope.
        """
        if mode == "keyword":
            return self.keyword(scope, query, depth, view)
        assert vector is not None, "dense and hybrid ranking need the query's vector"
        if mode == "dense":
            return self.dense(scope, vector, depth, view)
        wide = max(self._fusion.depth, depth)
        dense = self.dense(scope, vector, wide, view)
        keyword = self.keyword(scope, query, wide, view)
        return self._fusion.fuse(dense, keyword)[:depth]

    def pool(self, scope: Scope, query: str, *, vector: np.ndarray | None, mode: str, depth: int,
             view: Candidates | None, reach: int) -> tuple[Hits, int]:
        """The usual ranking read in full, then what lists ``reach`` times deeper add (for ``when.promote``).

        Returns (pool, head): the pool's first ``head`` entries are the usual
        ranking before its cut to ``depth`` (in hybrid every fused memory, in
        dense and keyword mode the first ``max(fusion depth, depth)``), scored as
        usual; the rest are the memories only the deeper lists reach, best
        first, each scored at the usual ranking's floor in hybrid (their own
        scores in dense and keyword mode, which lie below it). So
        ``pool[:depth]`` is ``rank(...)``'s answer.
        """
        wide = max(self._fusion.depth, depth)
        if mode == "keyword":
            hits = self.keyword(scope, query, wide * reach, view)
            return hits, min(wide, len(hits))
        assert vector is not None, "dense and hybrid ranking need the query's vector"
        if mode == "dense":
            hits = self.dense(scope, vector, wide * reach, view)
            return hits, min(wide, len(hits))
        dense = self.dense(scope, vector, wide * reach, view)
        keyword = self.keyword(scope, query, wide * reach, view)
        usual = self._fusion.fuse(dense[:wide], keyword[:wide])
        if not usual:
            return usual, 0
        seen = {s for s, _ in usual}
        floor = usual[-1][1]
        deeper = [(s, floor) for s, _ in self._fusion.fuse(dense, keyword) if s not in seen]
        return usual + deeper, len(usual)

    def dense(self, scope: Scope, q: np.ndarray, limit: int, view: Candidates | None) -> Hits:
        """By cosine to the query's vector."""
        if view is None:
            gate = self._gates.for_read(scope, dim=q.shape[0])
            if gate is None or len(gate) == 0:
                return []
            seqs, cos = gate.found(q, limit)
            return [(int(s), float(c)) for s, c in zip(seqs, cos)]
        sims = _core.similarities(view.matrix, q)
        if view.parts is not None and len(view.parts.seqs):
            # A memory scores its best part (a long one's passages, a short one's sentence keys).
            row = {int(s): i for i, s in enumerate(view.seqs)}
            for seq, c in zip(view.parts.seqs.tolist(), _core.similarities(view.parts.matrix, q).tolist()):
                i = row[seq]
                if c > sims[i]:
                    sims[i] = c
        top = np.argsort(-sims, kind="stable")[:limit]
        return [(int(view.seqs[i]), float(sims[i])) for i in top]

    def keyword(self, scope: Scope, query: str, limit: int, view: Candidates | None) -> Hits:
        """By bm25 score of the query's text: a memory's own, or its folded texts' if better."""
        gate = None
        if view is not None and view.as_of is not None:
            # The scope's index holds today's texts; a point-in-time search ranks
            # the texts that held then, with the statistics of that set.
            then = _core.KeywordIndex()
            then.add_many(view.seqs, view.texts)
            seqs, scores = then.search(query, limit)
            own = [(int(q), float(x)) for q, x in zip(seqs, scores)]
        else:
            gate = self._gates.for_read(scope)
            if gate is None:
                return []
            # Filters apply inside the ranking: only the allowed memories compete.
            own = gate.keyword_search(query, limit, allow=None if view is None else view.seqs)
        if self._folds is None:
            return own
        if view is None:
            assert gate is not None  # read above: an unrestricted search has no as_of
            folded = self._folds.hits(scope, query, limit, holds=gate.holds)
        else:
            allowed = set(view.seqs.tolist())
            folded = self._folds.hits(scope, query, limit, holds=allowed.__contains__, as_of=view.as_of,
                                      matches=(lambda m: matches_filters(m, view.filters)) if view.filters else None)
        return best_of(own, folded, limit)
