"""``MaxCosineGate``: 1 - the cosine to the nearest memory, against a fixed threshold."""

from __future__ import annotations

import numpy as np

import memsieve._core as _core
from memsieve.gate.profiles.base import GateProfile


class MaxCosineGate(GateProfile):
    """The plain nearest-neighbour gate: novelty = 1 - max cosine; ``GateConfig.tau`` is required."""

    needs_fixed_tau = True

    def scan(self, state: _core.ScopeState, vector: np.ndarray, kappa: float) -> _core.ScoreResult:
        return state.score_maxcos(vector, k=self.scoring.k)

    def novelty_of_topk(self, cos: np.ndarray, kappa: float) -> float:
        return 1.0 - float(cos[0])
