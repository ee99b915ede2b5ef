"""hnswlib indexes, one per scope, for scopes too large to scan exactly.

An index is a cache: the store is the truth. Each saved index records the
scope revision it reflects, its size and a checksum of its file; a missing,
stale or mismatched pair of files is rebuilt from the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

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
        import hnswlib  # type: ignore[import-untyped]

        self.dim = dim
        self._index = hnswlib.Index(space="ip", dim=dim)
        self._index.init_index(max_elements=max(capacity, 16), ef_construction=_EF_CONSTRUCTION, M=_M,
                               allow_replace_deleted=True)
        self._index.set_ef(_EF_SEARCH)
        self.count = 0

    @classmethod
    def build(cls, seqs: np.ndarray, matrix: np.ndarray, *, dim: int | None = None) -> "ScopeIndex":
        """Index (n,) int64 seqs with their (n, d) float32 rows.

        Args:
            dim: the width, needed when there are no rows (an empty scope's
                matrix may carry no second axis); defaults to ``matrix.shape[1]``.
        """
        width = int(dim) if dim is not None else int(matrix.shape[1])
        index = cls(width, capacity=max(2 * len(seqs), 1024))
        if len(seqs):
            rows = np.ascontiguousarray(matrix, dtype=np.float32).reshape(len(seqs), width)
            index._index.add_items(rows, np.asarray(seqs).astype(np.uint64), num_threads=1)
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
        """Take the memory out of search, and its vector out of the index's memory and saved file.

        hnswlib keeps a deleted point's vector (until a new point reuses the
        slot), so the point is first overwritten with zeros: a purged
        embedding then survives in no saved index. A deleted point cannot be
        updated, hence the order.
        """
        try:
            self._index.get_items([seq])  # RuntimeError for an unknown or already deleted label
        except RuntimeError:
            return  # already gone: removal is idempotent
        self._index.add_items(np.zeros((1, self.dim), dtype=np.float32), np.array([seq], dtype=np.uint64))
        self._index.mark_deleted(seq)
        self.count -= 1

    def knn(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(k,) int64 seqs and (k,) float32 cosines, nearest first."""
        k = min(k, self.count)
        if k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        self._index.set_ef(max(_EF_SEARCH, k))
        try:
            labels, dist = self._index.knn_query(vector[None, :], k=k)
        except RuntimeError:
            # After many deletions the graph walk can come back with fewer than
            # k live points; an ef as large as the index visits every one.
            self._index.set_ef(max(self._index.get_current_count(), k))
            labels, dist = self._index.knn_query(vector[None, :], k=k)
        return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)

    # ---- persistence ---------------------------------------------------------

    def save(self, path: str, revision: int) -> None:
        """Persist the index as ``path`` (hnswlib's file) and ``path.json`` (what it reflects).

        Both files are written under unique temporary names in the same folder
        and renamed into place, the ``.json`` last and holding a SHA-256 of the
        ``.bin`` bytes, all under an exclusive lock on ``path.lock``: two
        processes closing at once leave one writer's pair, never a mix, and a
        pair mixed some other way (a copy, a crash between the renames) fails
        the checksum and is rebuilt.
        """
        folder = os.path.dirname(os.path.abspath(path))
        with _file_lock(path, exclusive=True):
            bin_tmp = _temp_name(folder, path, ".bin.tmp")
            json_tmp = _temp_name(folder, path, ".json.tmp")
            try:
                self._index.save_index(bin_tmp)
                meta = {"revision": int(revision), "count": int(self.count), "dim": int(self.dim),
                        "elements": int(self._index.get_current_count()), "sha256": _sha256(bin_tmp)}
                with open(json_tmp, "w") as f:
                    json.dump(meta, f)
                os.replace(bin_tmp, path)
                os.replace(json_tmp, path + ".json")
            finally:
                for tmp in (bin_tmp, json_tmp):
                    if os.path.exists(tmp):
                        os.unlink(tmp)

    @classmethod
    def load(cls, path: str, *, dim: int, revision: int, count: int | None = None) -> "ScopeIndex | None":
        """The saved index if it is exactly what the store holds, else None (to be rebuilt).

        Trusted only when the recorded revision equals ``revision``, the width
        equals ``dim``, the recorded count equals ``count`` (the scope's active
        memories, when given), the ``.bin`` bytes match the recorded SHA-256,
        and the loaded index holds the recorded number of elements.
        """
        import hnswlib  # type: ignore[import-untyped]

        with _file_lock(path, exclusive=False):
            try:
                with open(path + ".json") as f:
                    meta = json.load(f)
                if not isinstance(meta, dict):
                    return None
                if (meta.get("revision") != revision or meta.get("dim") != dim
                        or (count is not None and meta.get("count") != count)):
                    return None
                if meta.get("sha256") != _sha256(path):
                    return None
            except (OSError, ValueError):
                return None
            index = cls.__new__(cls)
            index.dim = dim
            index._index = hnswlib.Index(space="ip", dim=dim)
            try:
                index._index.load_index(path, allow_replace_deleted=True)
            except RuntimeError as exc:
                raise StoreError(f"cannot read index {path}: {exc}; delete the file and it will be rebuilt") from exc
        if index._index.get_current_count() != meta.get("elements"):
            return None
        index._index.set_ef(_EF_SEARCH)
        index.count = int(meta["count"])
        return index


def _temp_name(folder: str, path: str, suffix: str) -> str:
    fd, name = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".", suffix=suffix)
    os.close(fd)
    return name


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _file_lock(path: str, *, exclusive: bool) -> Iterator[None]:
    """An advisory lock on ``path.lock`` (shared to read, exclusive to write); none where fcntl is missing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the checksum still catches a mixed pair
        yield
        return
    try:
        f = open(path + ".lock", "a")
    except OSError:  # a read-only folder: nobody can be writing there either
        yield
        return
    with f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
