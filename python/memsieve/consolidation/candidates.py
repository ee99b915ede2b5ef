"""Finding what to merge: every close pair of a scope, then complete-link groups.

The pairs come from the Rust kernel ``_core.pairs_above`` (the upper
triangle in tiles, the GIL released, only the pairs at or above ``min_sim``
kept, so a scope of 100k memories never holds its similarity matrix).

Grouping rule (complete link at ``min_sim``): pairs are taken from the most
similar down, and two groups join only if *every* member of one is at least
``min_sim`` from every member of the other. Every group is then a clique of
the threshold graph: in a chain a~b~c where a and c are far apart, a and b
(or b and c, whichever pair is closer) form a group and the third stays out.
Single link would merge the chain, and a drifting chain of small edits would
collapse into one memory that resembles neither end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import memsieve._core as _core

from memsieve.inputs import check_real

#: The default cosine from which two memories of a scope are merge candidates: on the LoCoMo
#: dev split the lowest swept value within a point of add-all's answer recall on both streams
#: (docs/CONSOLIDATION.md).
DEFAULT_MIN_SIM = 0.7


def check_min_sim(value: object) -> float:
    """``min_sim`` as a float in (0, 1], or ConfigError naming the value."""
    if value is None:
        return DEFAULT_MIN_SIM
    return check_real(value, name="min_sim", what="a cosine", low=0.0, high=1.0, low_open=True,
                      fix=f"the default is {DEFAULT_MIN_SIM}")


def check_max_seconds(value: object) -> float | None:
    """``max_seconds`` as a float in (0, 86400], None for no bound, or ConfigError naming the value."""
    if value is None:
        return None
    return check_real(value, name="max_seconds", what="a time in seconds", low=0.0, high=86400.0, low_open=True,
                      fix="pass None for no bound")


@dataclass(frozen=True)
class Pairs:
    """Close pairs of rows: ``left`` (k,) int64 < ``right`` (k,) int64, ``sim`` (k,) float32 cosines."""

    left: np.ndarray
    right: np.ndarray
    sim: np.ndarray

    def __len__(self) -> int:
        return int(self.sim.shape[0])


def close_pairs(matrix: np.ndarray, min_sim: float) -> Pairs:
    """Every pair of rows of ``matrix`` ((n, d) float32 unit rows) with cosine >= ``min_sim``."""
    if matrix.shape[0] < 2:
        empty = np.empty(0, dtype=np.int64)
        return Pairs(empty, empty, np.empty(0, dtype=np.float32))
    left, right, sim = _core.pairs_above(np.ascontiguousarray(matrix, dtype=np.float32), float(min_sim))
    return Pairs(left, right, sim)


class CompleteLink:
    """Groups rows whose every pair is in the close-pair set (see the module docs).

    Args:
        pairs: the close pairs of the scope's rows.
    """

    def __init__(self, pairs: Pairs) -> None:
        self._sim: dict[tuple[int, int], float] = {}
        for i, j, s in zip(pairs.left.tolist(), pairs.right.tolist(), pairs.sim.tolist()):
            self._sim[(int(i), int(j))] = float(s)

    def similarity(self, i: int, j: int) -> float | None:
        """The cosine of rows i and j if they are a close pair, else None."""
        return self._sim.get((i, j) if i < j else (j, i))

    def groups(self) -> list[list[int]]:
        """Groups of two or more rows, each sorted, ordered by their first row."""
        group_of: dict[int, list[int]] = {}
        # Most similar first; ties by row numbers, so the result is deterministic.
        for (i, j), _ in sorted(self._sim.items(), key=lambda kv: (-kv[1], kv[0])):
            a, b = group_of.get(i, [i]), group_of.get(j, [j])
            if a is b or not self._linked(a, b):
                continue
            merged = sorted(a + b)
            for r in merged:
                group_of[r] = merged
        seen: dict[int, list[int]] = {id(g): g for g in group_of.values()}
        return sorted(seen.values(), key=lambda g: g[0])

    def _linked(self, a: list[int], b: list[int]) -> bool:
        return all(self.similarity(x, y) is not None for x in a for y in b)

    def min_similarity(self, group: list[int]) -> float:
        """The lowest cosine between two members of a group."""
        return min(self.similarity(x, y) or 0.0 for k, x in enumerate(group) for y in group[k + 1:])
