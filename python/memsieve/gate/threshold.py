"""A scope's threshold: what a profile's tau and kappa follow, updated per add, remove and refusal.

Every threshold has the shape of the Rust ``ThresholdState``: ``tau`` and
``kappa`` to read, ``on_add`` / ``on_remove`` to count a share in or out, and
``to_bytes`` for the scope row's ``gate_state`` column. ``ScopeGate`` holds
one without knowing which; the profile (memsieve.gate.profiles) made it.
"""

from __future__ import annotations

from typing import Protocol

import memsieve._core as _core
from memsieve.gate.params import AdaptiveThresholdParams, SageParams


class Threshold(Protocol):
    """What ``ScopeGate`` and the profiles ask of a scope's threshold."""

    @property
    def tau(self) -> float: ...

    @property
    def kappa(self) -> float: ...

    def on_add(self, share: float) -> None: ...

    def on_remove(self, share: float) -> None: ...

    def to_bytes(self) -> bytes: ...


def adaptive_threshold(params: AdaptiveThresholdParams) -> _core.ThresholdState:
    """A fresh Rust threshold with these parameters (the core has no defaults)."""
    return _core.ThresholdState(
        gamma=params.gamma,
        tau_min=params.tau_min,
        tau_max=params.tau_max,
        kappa_c=params.kappa_c,
        prior_share=params.prior_share,
        prior_weight=params.prior_weight,
    )


class SageThreshold:
    """SAGE's threshold: an EMA of tau* = tau0 exp(-lambda rho) + tau_min, stepped once per add() call.

    The shares still go to a Rust ``ThresholdState`` beside it, as they always
    have: its bytes are the scope row's ``gate_state`` and the EMA its
    ``sage_tau`` column, so a scope keeps both whichever profile wrote it.

    Args:
        counts: the share counts (persisted or fresh).
        ema: the persisted EMA threshold (None: not stepped yet).
        params: SAGE's parameters.
    """

    def __init__(self, counts: _core.ThresholdState, *, ema: float | None, params: SageParams) -> None:
        self.counts = counts
        self.ema = ema
        self.params = params

    @property
    def tau(self) -> float:
        return self.ema if self.ema is not None else self.params.first_tau

    @property
    def kappa(self) -> float:
        return self.counts.kappa

    def step(self, rho: float) -> None:
        """One EMA step toward the target threshold of density ``rho``."""
        p = self.params
        tau_star = _core.sage_tau_star(rho, tau0=p.tau0, tau_min=p.tau_min, lam=p.lam)
        self.ema = _core.sage_ema(self.ema, tau_star, alpha=p.alpha)

    def on_add(self, share: float) -> None:
        self.counts.on_add(share)

    def on_remove(self, share: float) -> None:
        self.counts.on_remove(share)

    def to_bytes(self) -> bytes:
        return self.counts.to_bytes()
