"""A folded text's words, findable: keyword search reads them as its memory's.

Search shows the texts the gate folded into a memory beside it (memsieve.read.folded), but
their words indexed nothing: a keyword search for a word only a fold says ("flowers", in "I love
the farmers market ... and flowers" folded into "I love the farmers market") found nothing,
though the store was told it. The gate's keyword index cannot hold them: its terms are the
information term's neighbours, which every decision of the gate rests on. So search keeps an
index of its own per scope, of the folds it may show (not restored, not forgotten, not purged),
each under its fold's seq; a fold told since is read in as the next search meets it, and the
index is built again when one leaves.

A memory's keyword score is the better of its own and its best fold's. The folds' index scores
with its own collection's statistics; with fewer documents its idf is lower, so a fold's words
rank its memory below a memory that says the same words itself (a NOOP is mostly a repeat).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

import memsieve._core as _core
from memsieve.scope import Scope

Hits = list[tuple[int, float]]

#: Scopes whose folds' index is kept; the least recently searched is dropped past it (a server's
#: tenants would otherwise each keep one for the process's life).
MOST_SCOPES = 256


class _Folds:
    """One scope's folds: their index (by fold seq), and per fold its memory's seq, when the store
    learned it, and its metadata."""

    def __init__(self) -> None:
        self.index = _core.KeywordIndex()
        self.memory: dict[int, int] = {}
        self.told: dict[int, str] = {}
        self.metadata: dict[int, dict[str, Any]] = {}
        self.signature = (0, 0, 0)
        self.last = 0

    def take(self, rows: list[tuple[int, str, int, str, dict[str, Any]]]) -> None:
        if not rows:
            return
        self.index.add_many(np.asarray([r[0] for r in rows], np.int64), [r[1] for r in rows])
        for seq, _, memory_seq, told, metadata in rows:
            self.memory[seq], self.told[seq], self.metadata[seq] = memory_seq, told, metadata
        self.last = max(self.last, rows[-1][0])


class FoldKeys:
    """The keyword side of a scope's folds, read from ``store`` and kept per scope.

    Args:
        store: the store (``folds_signature``, ``folds_after``).
    """

    def __init__(self, store: Any) -> None:
        self._store = store
        self._scopes: OrderedDict[str, _Folds] = OrderedDict()
        self._lock = threading.Lock()

    def hits(self, scope: Scope, query: str, limit: int, *, holds: Callable[[int], bool],
             as_of: str | None = None, matches: Callable[[dict[str, Any]], bool] | None = None) -> Hits:
        """[(memory seq, its best fold's bm25 score)] for ``query``, best first, at most ``limit``.

        Args:
            holds: whether a memory seq may be returned (active, and in a restricted search's view).
            as_of: keep the folds the store had learned by then.
            matches: whether a fold's metadata holds for the search's filters (a filtered search
                shows only such folds).
        """
        folds = self._current(scope)
        if folds is None or not len(folds.index):
            return []
        allowed = [f for f, m in folds.memory.items() if holds(m)
                   and (as_of is None or folds.told[f] <= as_of) and (matches is None or matches(folds.metadata[f]))]
        if not allowed:
            return []
        seqs, scores = folds.index.search(query, len(allowed), allow=np.asarray(allowed, np.int64))
        best: dict[int, float] = {}
        for f, score in zip(seqs.tolist(), scores.tolist()):
            best.setdefault(folds.memory[f], float(score))  # best first: a memory's first fold is its best
            if len(best) == limit:
                break
        return list(best.items())

    def _current(self, scope: Scope) -> _Folds | None:
        """The scope's folds as the store holds them now: the cached index, read forward by the folds
        told since, or built again when one left."""
        signature = self._store.folds_signature(scope)
        with self._lock:
            folds = self._scopes.get(scope.key)
            if folds is not None:
                self._scopes.move_to_end(scope.key)
                if folds.signature == signature:
                    return folds
                if signature[1] > folds.last:
                    told = self._store.folds_after(scope, folds.last)
                    count, _, total = folds.signature
                    if (count + len(told), total + sum(r[0] for r in told)) == (signature[0], signature[2]):
                        folds.take(told)
                        folds.signature = signature
                        return folds
            if signature[0] == 0:
                self._scopes.pop(scope.key, None)
                return None
            folds = _Folds()
            folds.take(self._store.folds_after(scope, 0))
            folds.signature = signature
            self._scopes[scope.key] = folds
            while len(self._scopes) > MOST_SCOPES:
                self._scopes.popitem(last=False)
            return folds


def best_of(own: Hits, folded: Hits, limit: int) -> Hits:
    """Each memory's better score of its own keyword hit and its folds', best first (a memory's own
    hit first on a tie), at most ``limit``."""
    if not folded:
        return own[:limit]
    score = dict(own)
    for seq, s in folded:
        if s > score.get(seq, float("-inf")):
            score[seq] = s
    order = {seq: i for i, (seq, _) in enumerate(own)}
    ranked = sorted(score.items(), key=lambda t: (-t[1], order.get(t[0], len(order))))
    return ranked[:limit]
