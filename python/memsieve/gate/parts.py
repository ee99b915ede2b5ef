"""``PartRows``: the part vectors of a scope's memories (passages or sentence keys), beside their own rows.

A memory whose text is longer than the embedder's window keeps its own
vector (passage 0) in the scope's ``ScopeState`` and the vectors of its
passages 1.. here, in a second ``ScopeState`` under the key
``seq * PART_BASE + part``. Whoever asks for a scope's nearest memories gets
each memory once, at the best cosine over its rows (``nearest_memories``),
so a kernel density or a search counts memories, never passages. A scope
without a long memory holds no row here, and every answer is then exactly
the one of the memories' rows alone. A scope gate keeps two: the passages,
which the gate reads, and the sentence keys, which only search reads.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

import memsieve._core as _core
from memsieve.text.passages import PART_BASE, Part


class PartRows:
    """The part rows of one scope's memories (``vectors``: the ScopeState storage, float32 or int8)."""

    def __init__(self, dim: int, *, vectors: str) -> None:
        self.state = _core.ScopeState(dim, vectors=vectors)  # type: ignore[arg-type]
        # seq -> the part numbers it holds here (its rows are seq * PART_BASE + part).
        self.held: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self.state)

    @property
    def quant_bytes(self) -> int:
        return self.state.quant_bytes

    def put(self, seq: int, parts: Iterable[Part]) -> None:
        """Make ``parts`` the memory's passages, dropping any it had."""
        self.drop(seq)
        parts = list(parts)
        if not parts:
            return
        keys = np.array([seq * PART_BASE + p.index for p in parts], dtype=np.int64)
        self.state.add_many(keys, np.ascontiguousarray(np.stack([p.vector for p in parts]), dtype=np.float32))
        self.held[seq] = [p.index for p in parts]

    def load(self, seqs: np.ndarray, parts: np.ndarray, matrix: np.ndarray) -> None:
        """Bulk-add rows (hydration): (n,) memory seqs, (n,) part numbers, (n, d) float32 unit rows."""
        if not len(seqs):
            return
        keys = np.asarray(seqs, dtype=np.int64) * PART_BASE + np.asarray(parts, dtype=np.int64)
        self.state.add_many(np.ascontiguousarray(keys), np.ascontiguousarray(matrix, dtype=np.float32))
        for s, part in zip(np.asarray(seqs).tolist(), np.asarray(parts).tolist()):
            self.held.setdefault(int(s), []).append(int(part))

    def drop(self, seq: int) -> None:
        for part in self.held.pop(seq, ()):
            self.state.remove(seq * PART_BASE + part)

    def nearest_memories(self, seqs: np.ndarray, cos: np.ndarray, vector: np.ndarray,
                         k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest memories at their best cosine over all their rows, best first (seq ascending on ties).

        Args:
            seqs, cos: the k nearest memories by their own rows, as ``ScopeState.nearest`` gives them.
            vector: the query, (d,) float32 unit.
            k: how many memories.

        Exact: a memory whose best row is its own is among ``seqs`` if it is
        among the k best, and passage rows are read until they name k distinct
        memories (or run out).
        """
        if not len(self.state) or k <= 0:
            return seqs, cos
        best = {int(s): float(c) for s, c in zip(seqs, cos)}
        want = min(len(self.state), max(4 * k, 16))
        while True:
            keys, pcos = self.state.nearest(vector, want)
            owners = np.asarray(keys, dtype=np.int64) // PART_BASE
            if want >= len(self.state) or len(set(owners.tolist())) >= k:
                break
            want = min(len(self.state), want * 4)
        for owner, c in zip(owners.tolist(), pcos.tolist()):
            if c > best.get(owner, -np.inf):
                best[owner] = c
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        return (np.array([s for s, _ in ranked], dtype=np.int64),
                np.array([c for _, c in ranked], dtype=np.float32))
