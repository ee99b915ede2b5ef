"""Reading: dense, keyword and hybrid search within one scope."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from memsieve import _core
from memsieve.errors import ConfigError
from memsieve.records import SearchResult
from memsieve.scope import Scope

if TYPE_CHECKING:
    from memsieve.gate import ScopeGate
    from memsieve.memory import Memory

SearchMode = Literal["dense", "keyword", "hybrid", "auto"]
_MODES = ("dense", "keyword", "hybrid")
_WORD = re.compile(r"\w+", re.UNICODE)
#: Reciprocal-rank fusion constant: 60 is the value from the original RRF paper,
#: large enough that one list's top rank cannot drown the other list.
RRF_K = 60


class Searcher:
    """Runs searches for a Memory, and keeps per-scope indexes persisted.

    Args:
        memory: the owning Memory (its gates decide between the exact scan and
            a scope's hnswlib index).
    """

    def __init__(self, memory: "Memory") -> None:
        self.memory = memory

    def close(self) -> None:
        for gate in list(self.memory._gates.values()):
            gate.save_index()

    def search(self, scope: Scope, query: str, *, limit: int, filters: dict[str, Any], as_of: str | None,
               mode: str, vector: np.ndarray | None = None) -> list[SearchResult]:
        """Search one scope; ``vector`` is the query's (d,) float32 embedding if already known."""
        if mode not in _MODES:
            raise ConfigError(f"unknown search mode {mode!r}; use one of {', '.join(_MODES)} (or 'auto' with a router)")
        if mode == "keyword":
            hits = self._keyword(scope, query, vector, limit, filters, as_of)
        else:
            q = self.memory.embed([query])[0] if vector is None else vector
            if mode == "dense":
                hits = self._dense(scope, q, limit, filters, as_of)
            else:
                wide = max(3 * limit, 30)
                hits = _fuse([self._dense(scope, q, wide, filters, as_of),
                              self._keyword(scope, query, q, wide, filters, as_of)], limit)
        items = self.memory.store.items_for_seqs([s for s, _ in hits])
        return [
            SearchResult(id=it.id, text=it.text, score=float(score), source=it.source, sources=it.sources,
                         metadata=it.metadata, valid_from=it.valid_from, created_at=it.created_at)
            for s, score in hits if (it := items.get(s)) is not None
        ]

    def _dense(self, scope: Scope, q: np.ndarray, limit: int, filters: dict[str, Any],
               as_of: str | None) -> list[tuple[int, float]]:
        if not filters and as_of is None:
            gate = self._gate(scope, q.shape[0])
            if gate is None or len(gate) == 0:
                return []
            seqs, cos = gate.nearest(q, limit)
            return [(int(s), float(c)) for s, c in zip(seqs, cos)]
        seqs, matrix, metas = self.memory.store.candidates(scope, as_of=as_of)
        keep = [i for i, m in enumerate(metas) if _matches(m, filters)]
        if not keep:
            return []
        matrix = np.ascontiguousarray(matrix[keep])
        seqs = seqs[keep]
        sims = _core.similarities(matrix, q)
        top = np.argsort(-sims, kind="stable")[:limit]
        return [(int(seqs[i]), float(sims[i])) for i in top]

    def _keyword(self, scope: Scope, query: str, vector: np.ndarray | None, limit: int, filters: dict[str, Any],
                 as_of: str | None) -> list[tuple[int, float]]:
        words = _WORD.findall(query)
        if not words:
            return []
        # Each word quoted, so FTS5 operators in user text (AND, NEAR, *) stay literal.
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        hits = self.memory.store.keyword_search(scope, match, limit * (4 if filters else 1))
        if filters:
            items = self.memory.store.items_for_seqs([s for s, _ in hits])
            hits = [(s, sc) for s, sc in hits if s in items and _matches(items[s].metadata, filters)]
        if as_of is not None:
            # FTS holds only active memories; a point-in-time keyword search is
            # answered from the candidates known then, ranked densely.
            return self._dense(scope, vector if vector is not None else self.memory.embed([query])[0],
                               limit, filters, as_of)
        return hits[:limit]

    def _gate(self, scope: Scope, dim: int) -> "ScopeGate | None":
        if self.memory.store.peek_revision(scope) is None:
            return None
        return self.memory._gate(scope, dim=dim, in_tx=False)


def _matches(metadata: dict[str, Any], filters: dict[str, Any]) -> bool:
    return all(metadata.get(k) == v for k, v in filters.items())


def _fuse(rankings: list[list[tuple[int, float]]], limit: int) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: sum of 1 / (RRF_K + rank) over the lists a memory appears in."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, (seq, _) in enumerate(ranking, start=1):
            scores[seq] = scores.get(seq, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]
