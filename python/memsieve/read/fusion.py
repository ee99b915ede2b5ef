"""Fusing a dense and a keyword ranking into one.

Two families, both chosen among on the LoCoMo dev split (benches/tune_fusion.py
runs the sweep with these very functions, so what was measured is what ships):

- reciprocal-rank fusion: the sum of 1 / (k + rank) over the lists a memory is in;
- weighted fusion of normalized scores: w * n(dense) + (1 - w) * n(keyword),
  with n a min-max or z-score normalization of one list's scores. A memory
  absent from a list gets that list's lowest normalized value (min-max 0, z the
  lowest z), so being found by one retriever only is never a bonus.

Ties go to the better dense rank, then the better keyword rank, then the key,
so a fused ranking is a pure function of its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from memsieve.errors import ConfigError

K = TypeVar("K", bound=Hashable)
Ranked = Sequence[tuple[K, float]]  # (key, score), best first
Norm = Literal["minmax", "z"]


@dataclass(frozen=True, kw_only=True)
class Fusion:
    """How a fused search combines its two rankings.

    The defaults (z-score, w = 0.5, depth 50) won benches/tune_fusion.py on the
    LoCoMo dev split with keyword search on the per-scope Rust bm25 index: 52.81
    on its rule (mean dated answer recall@10, micro and macro, both streams),
    against 52.37 for the former w = 0.4 (paired bootstrap +0.44, 95% interval
    +0.01 to +0.93; eval/locomo-dev/fusion/).

    Attributes:
        method: ``"rrf"``, ``"minmax"`` or ``"z"``.
        weight: the dense list's weight ``w`` in a weighted fusion (the keyword
            list gets 1 - w); unused by RRF.
        rrf_k: RRF's constant.
        depth: how many results each retriever contributes before fusing.
    """

    method: Literal["rrf", "minmax", "z"] = "z"
    weight: float = 0.5
    rrf_k: int = 60
    depth: int = 50

    def __post_init__(self) -> None:
        if self.method not in ("rrf", "minmax", "z"):
            raise ConfigError(f"fusion method must be 'rrf', 'minmax' or 'z', got {self.method!r}")
        if not (isinstance(self.weight, (int, float)) and 0.0 <= self.weight <= 1.0):
            raise ConfigError(f"fusion weight must lie in [0, 1], got {self.weight!r}")
        for name in ("rrf_k", "depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"fusion {name} must be an integer >= 1, got {value!r}")

    def fuse(self, dense: Ranked[K], keyword: Ranked[K]) -> list[tuple[K, float]]:
        """The fused ranking, best first, with each key's fused score."""
        if self.method == "rrf":
            return rrf(dense, keyword, k=self.rrf_k)
        return weighted(dense, keyword, w=self.weight, norm=self.method)


def rrf(dense: Ranked[K], keyword: Ranked[K], *, k: int) -> list[tuple[K, float]]:
    """Reciprocal-rank fusion with constant ``k``."""
    score: dict[K, float] = {}
    for ranked in (dense, keyword):
        for rank, (key, _s) in enumerate(ranked, start=1):
            score[key] = score.get(key, 0.0) + 1.0 / (k + rank)
    return _order(score, dense, keyword)


def minmax(scores: Sequence[float]) -> tuple[list[float], float]:
    """Scores scaled to [0, 1], and the value an absent member gets (0)."""
    lo, hi = min(scores), max(scores)
    if hi - lo <= 0.0:
        return [1.0] * len(scores), 0.0
    return [(s - lo) / (hi - lo) for s in scores], 0.0


def zscore(scores: Sequence[float]) -> tuple[list[float], float]:
    """Scores as z-scores within their list, and the value an absent member gets (the lowest z)."""
    n = len(scores)
    mean = math.fsum(scores) / n
    sd = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / n) if n > 1 else 0.0
    if sd <= 0.0:
        return [0.0] * n, -1.0
    z = [(s - mean) / sd for s in scores]
    return z, min(z)


NORMS: dict[str, Callable[[Sequence[float]], tuple[list[float], float]]] = {"minmax": minmax, "z": zscore}


def weighted(dense: Ranked[K], keyword: Ranked[K], *, w: float, norm: Norm) -> list[tuple[K, float]]:
    """``w`` * normalized dense + (1 - ``w``) * normalized keyword."""
    normalize = NORMS[norm]
    parts: list[tuple[dict[K, float], float]] = []
    for ranked in (dense, keyword):
        if ranked:
            values, absent = normalize([s for _k, s in ranked])
            parts.append(({key: v for (key, _s), v in zip(ranked, values)}, absent))
        else:
            parts.append(({}, 0.0))
    (nd, absent_d), (nk, absent_k) = parts
    score = {key: w * nd.get(key, absent_d) + (1.0 - w) * nk.get(key, absent_k) for key in (*nd, *nk)}
    return _order(score, dense, keyword)


def _order(score: dict[K, float], dense: Ranked[K], keyword: Ranked[K]) -> list[tuple[K, float]]:
    far = len(dense) + len(keyword) + 1
    d_rank = {key: i for i, (key, _s) in enumerate(dense)}
    k_rank = {key: i for i, (key, _s) in enumerate(keyword)}
    keys = sorted(score, key=lambda m: (-score[m], d_rank.get(m, far), k_rank.get(m, far), str(m)))
    return [(key, score[key]) for key in keys]
