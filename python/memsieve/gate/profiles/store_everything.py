"""``StoreEverythingGate``: no gate; every candidate that is not an exact duplicate is added."""

from __future__ import annotations

import math

import numpy as np

import memsieve._core as _core
from memsieve.gate.profiles.base import GateProfile, ScopeView
from memsieve.gate.score import GateScore


class StoreEverythingGate(GateProfile):
    """Routes every candidate to ADD, still naming its nearest memory (tau 0, no band, kappa inf)."""

    def current_tau(self, gate: ScopeView) -> float:
        return 0.0

    @property
    def delta(self) -> float:
        return 0.0

    def score(self, gate: ScopeView, vector: np.ndarray, text: str | None, *, whole: str | None = None) -> GateScore:
        kappa = self.current_kappa(gate)
        if len(gate.state):
            seqs, cos = gate.nearest(vector, 1)
            nearest_seq, nearest_cos, novelty = int(seqs[0]), float(cos[0]), 1.0 - float(cos[0])
        else:
            nearest_seq, nearest_cos, novelty = None, math.nan, math.inf
        return GateScore(novelty=novelty, tau=0.0, delta=0.0, kappa=kappa, nearest_seq=nearest_seq,
                         nearest_cos=nearest_cos, route="ADD", decided_by="none")

    # Never called (score above reads no scan); defined because every profile names its exact scan.
    def scan(self, state: _core.ScopeState, vector: np.ndarray, kappa: float) -> _core.ScoreResult:
        return state.score_maxcos(vector, k=self.scoring.k)
