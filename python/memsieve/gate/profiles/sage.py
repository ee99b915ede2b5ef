"""``SageGate``: SAGE's formulas as published, the baseline the default profile is measured against.

SAGE scores a candidate with a log-mean-exp over its k nearest memories at
the Banerjee estimate of the scope's von Mises-Fisher concentration, and
moves its threshold once per add() call by an EMA toward a target that falls
with the scope's density (a PCA bounding-box proxy of the whole scope).
"""

from __future__ import annotations

import numpy as np

import memsieve._core as _core
from memsieve.gate.profiles.base import GateProfile, ScopeView
from memsieve.gate.threshold import SageThreshold, Threshold

#: The clip of the Banerjee kappa; an empty scope reads the upper end.
SAGE_KAPPA_CLIP = (1e-3, 50.0)


class SageGate(GateProfile):
    """SAGE's log-mean-exp score, Banerjee kappa and density-driven EMA threshold.

    Its tau is the EMA alone (a fixed ``tau`` is not read), and it always scans
    the scope exactly: its score is defined over the whole scope's density.
    """

    uses_index = False
    # Its score is a log-mean-exp over the scope's own rows, as published: passages do not count.
    uses_parts = False

    def restore_threshold(self, counts: _core.ThresholdState, *, sage_tau: float | None) -> Threshold:
        return SageThreshold(counts, ema=sage_tau, params=self.sage)

    def stored_sage_tau(self, threshold: Threshold, *, as_read: float | None) -> float | None:
        return _sage(threshold).ema

    def current_tau(self, gate: ScopeView) -> float:
        return gate.threshold.tau

    def current_kappa(self, gate: ScopeView) -> float:
        return gate.state.kappa_banerjee(clip=SAGE_KAPPA_CLIP) if len(gate.state) else SAGE_KAPPA_CLIP[1]

    def begin_call(self, gate: ScopeView) -> None:
        """SAGE updates its threshold once per add() call, from the scope's density."""
        rho = _core.sage_density(gate.state.vectors()) if len(gate.state) >= 2 else 0.0
        _sage(gate.threshold).step(rho)

    def scan(self, state: _core.ScopeState, vector: np.ndarray, kappa: float) -> _core.ScoreResult:
        return state.score_sage(vector, kappa=kappa, k=self.scoring.k)


def _sage(threshold: Threshold) -> SageThreshold:
    # SageGate.restore_threshold made it: every ScopeGate builds its threshold through its profile.
    assert isinstance(threshold, SageThreshold), f"the sage profile got a {type(threshold).__name__}"
    return threshold
