"""hnswlib indexes, one per scope, for scopes too large to scan exactly.

An index is a cache: SQLite is the truth. Each saved index records the scope
revision it reflects; a missing or stale file is rebuilt from the store.
"""

from __future__ import annotations

import json
import os

import numpy as np

from memsieve.errors import StoreError

_M = 16
_EF_CONSTRUCTION = 200
_EF_SEARCH = 96


class ScopeIndex:
    """An inner-product HNSW index over a scope's unit vectors, labelled by memory seq.

    Args:
        dim: embedding width.
        capacity: initial number of slots; grows by doubling.
    """

    def __init__(self, dim: int, *, capacity: int = 1024) -> None:
        import hnswlib

        self.dim = dim
        self._index = hnswlib.Index(space="ip", dim=dim)
        self._index.init_index(max_elements=max(capacity, 16), ef_construction=_EF_CONSTRUCTION, M=_M,
                               allow_replace_deleted=True)
        self._index.set_ef(_EF_SEARCH)
        self.count = 0

    @classmethod
    def build(cls, seqs: np.ndarray, matrix: np.ndarray) -> "ScopeIndex":
        """Index (n,) int64 seqs with their (n, d) float32 rows."""
        index = cls(matrix.shape[1], capacity=max(2 * len(seqs), 1024))
        if len(seqs):
            index._index.add_items(matrix, seqs.astype(np.uint64), num_threads=1)
            index.count = len(seqs)
        return index

    def _reserve(self, extra: int) -> None:
        cap = self._index.get_max_elements()
        if self._index.get_current_count() + extra > cap:
            self._index.resize_index(max(2 * cap, cap + extra))

    def add(self, seq: int, vector: np.ndarray) -> None:
        self._reserve(1)
        self._index.add_items(vector[None, :], np.array([seq], dtype=np.uint64), replace_deleted=True)
        self.count += 1

    def replace(self, seq: int, vector: np.ndarray) -> None:
        # hnswlib updates the point in place when the label exists.
        self._index.add_items(vector[None, :], np.array([seq], dtype=np.uint64))

    def remove(self, seq: int) -> None:
        try:
            self._index.mark_deleted(seq)
            self.count -= 1
        except RuntimeError:
            pass  # already gone: removal is idempotent

    def knn(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(k,) int64 seqs and (k,) float32 cosines, nearest first."""
        k = min(k, self.count)
        if k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        self._index.set_ef(max(_EF_SEARCH, k))
        labels, dist = self._index.knn_query(vector[None, :], k=k)
        return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)

    # ---- persistence ---------------------------------------------------------

    def save(self, path: str, revision: int) -> None:
        tmp = path + ".tmp"
        self._index.save_index(tmp)
        os.replace(tmp, path)
        with open(path + ".json.tmp", "w") as f:
            json.dump({"revision": revision, "count": self.count, "dim": self.dim}, f)
        os.replace(path + ".json.tmp", path + ".json")

    @classmethod
    def load(cls, path: str, *, dim: int, revision: int) -> "ScopeIndex | None":
        """The saved index if it reflects ``revision``, else None (missing or stale)."""
        import hnswlib

        try:
            with open(path + ".json") as f:
                meta = json.load(f)
        except (OSError, ValueError):
            return None
        if meta.get("revision") != revision or meta.get("dim") != dim or not os.path.exists(path):
            return None
        index = cls.__new__(cls)
        index.dim = dim
        index._index = hnswlib.Index(space="ip", dim=dim)
        try:
            index._index.load_index(path, allow_replace_deleted=True)
        except RuntimeError as exc:
            raise StoreError(f"cannot read index {path}: {exc}; delete the file and it will be rebuilt") from exc
        index._index.set_ef(_EF_SEARCH)
        index.count = int(meta["count"])
        return index
