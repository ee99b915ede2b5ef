"""Reading: dense, keyword and hybrid search within one scope.

Filters and ``as_of`` restrict the candidates *before* anything is ranked, in
every mode, so a filtered search returns min(limit, number of matches) and a
point-in-time search ranks the text and the vector that held at that time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from memsieve import _core
from memsieve.errors import ConfigError
from memsieve.fusion import Fusion
from memsieve.records import SearchResult
from memsieve.rerank import DEFAULT_RERANK_DEPTH, Reranker, rerank_order
from memsieve.scope import Scope

if TYPE_CHECKING:
    from memsieve.scope_gates import ScopeGates

SearchMode = Literal["dense", "keyword", "hybrid", "auto"]
_MODES = ("dense", "keyword", "hybrid")
_WORD = re.compile(r"\w+", re.UNICODE)

Hits = list[tuple[int, float]]


class Searcher:
    """Runs searches over a store, with the scopes' gates for the unfiltered dense path.

    Args:
        store: the store (rows, keyword search, point-in-time candidates).
        gates: the scopes' cached gate state (exact scan or hnswlib index).
        embed: embeds a list of texts to (n, d) float32 unit rows.
        reranker: rescores the first ``rerank_depth`` results, if given.
        fusion: how ``hybrid`` combines the dense and keyword rankings.
    """

    def __init__(self, store: Any, gates: "ScopeGates", *, embed: Callable[[Sequence[str]], np.ndarray],
                 reranker: Reranker | None = None, rerank_depth: int = DEFAULT_RERANK_DEPTH,
                 fusion: Fusion | None = None) -> None:
        self._fusion = fusion or Fusion()
        self._store = store
        self._gates = gates
        self._embed = embed
        self._reranker = reranker
        self._rerank_depth = rerank_depth

    def search(self, scope: Scope, query: str, *, limit: int, filters: dict[str, Any], as_of: str | None,
               mode: str, vector: np.ndarray | None = None) -> list[SearchResult]:
        """Search one scope; ``vector`` is the query's (d,) float32 embedding if already known."""
        if mode not in _MODES:
            raise ConfigError(f"unknown search mode {mode!r}; use one of {', '.join(_MODES)} (or 'auto' with a router)")
        restricted = bool(filters) or as_of is not None
        view = _Candidates.load(self._store, scope, filters=filters, as_of=as_of) if restricted else None
        if view is not None and not len(view.seqs):
            return []
        wanted = limit
        if self._reranker is not None:
            limit = max(limit, self._rerank_depth)
        if mode == "keyword":
            hits = self._keyword(scope, query, limit, view)
        else:
            q = self._embed([query])[0] if vector is None else vector
            if mode == "dense":
                hits = self._dense(scope, q, limit, view)
            else:
                depth = max(self._fusion.depth, limit)
                hits = self._fusion.fuse(self._dense(scope, q, depth, view),
                                         self._keyword(scope, query, depth, view))[:limit]
        seqs = [s for s, _ in hits]
        items = self._store.items_for_seqs(seqs) if as_of is None else self._store.items_at(seqs, as_of)
        found = [(items[s], score) for s, score in hits if s in items]
        if self._reranker is not None:
            order = rerank_order(self._reranker, query, [it.text for it, _ in found])
            found = [(found[i][0], score) for i, score in order]
        return [
            SearchResult(id=it.id, text=it.text, score=float(score), source=it.source, sources=it.sources,
                         metadata=it.metadata, valid_from=it.valid_from, created_at=it.created_at)
            for it, score in found[:wanted]
        ]

    def _dense(self, scope: Scope, q: np.ndarray, limit: int, view: "_Candidates | None") -> Hits:
        if view is None:
            gate = self._gates.for_read(scope, dim=q.shape[0])
            if gate is None or len(gate) == 0:
                return []
            seqs, cos = gate.nearest(q, limit)
            return [(int(s), float(c)) for s, c in zip(seqs, cos)]
        sims = _core.similarities(view.matrix, q)
        top = np.argsort(-sims, kind="stable")[:limit]
        return [(int(view.seqs[i]), float(sims[i])) for i in top]

    def _keyword(self, scope: Scope, query: str, limit: int, view: "_Candidates | None") -> Hits:
        words = _WORD.findall(query)
        if not words:
            return []
        # Each word quoted, so FTS5 operators in user text (AND, NEAR, *) stay literal.
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if view is None:
            return self._store.keyword_search(scope, match, limit)
        if view.as_of is not None:
            # The full-text table holds today's texts only; a point-in-time
            # keyword search ranks the texts that held then by word overlap.
            return _overlap_rank(view, words, limit)
        # Filters apply inside the ranking: every match of the scope is ranked,
        # then only the allowed ones are kept, so none is cut off early.
        allowed = set(int(s) for s in view.seqs)
        hits = self._store.keyword_search(scope, match, self._store.count_active(scope))
        return [(s, sc) for s, sc in hits if s in allowed][:limit]


class _Candidates:
    """The memories a restricted search may return: seqs (n,) int64, matrix (n, d) float32, texts."""

    def __init__(self, seqs: np.ndarray, matrix: np.ndarray, texts: list[str], as_of: str | None) -> None:
        self.seqs = seqs
        self.matrix = matrix
        self.texts = texts
        self.as_of = as_of

    @classmethod
    def load(cls, store: Any, scope: Scope, *, filters: dict[str, Any], as_of: str | None) -> "_Candidates":
        found = store.candidates(scope, as_of=as_of)
        keep = [i for i, m in enumerate(found.metadata) if _matches(m, filters)]
        if not keep:
            return cls(np.empty(0, np.int64), np.empty((0, 0), np.float32), [], as_of)
        return cls(np.ascontiguousarray(found.seqs[keep]), np.ascontiguousarray(found.matrix[keep]),
                   [found.texts[i] for i in keep], as_of)


def _matches(metadata: dict[str, Any], filters: dict[str, Any]) -> bool:
    return all(k in metadata and metadata[k] == v for k, v in filters.items())


def _overlap_rank(view: _Candidates, words: list[str], limit: int) -> Hits:
    query = {w.casefold() for w in words}
    scored = []
    for seq, text in zip(view.seqs, view.texts):
        n = len(query & {w.casefold() for w in _WORD.findall(text)})
        if n:
            scored.append((int(seq), float(n)))
    scored.sort(key=lambda h: (-h[1], h[0]))
    return scored[:limit]
