"""The gate's parameters grouped by what they configure, as the profiles read them.

``GateConfig`` (memsieve.gate.config) is the one place a user sets them, with
flat keywords; it hands each profile these views (``config.scoring``,
``config.adaptive``, ``config.sage``, ``config.information``) so that a
profile names the group it reads, and no profile needs the whole config. They
are plain values: ``GateConfig`` has validated them already.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ScoringParams:
    """How a candidate's novelty is scored and routed, under every profile.

    Attributes:
        tau: the fixed threshold, or None to let the profile adapt it.
        delta: width of the band above tau.
        k: neighbours the score reads.
    """

    tau: float | None
    delta: float
    k: int


@dataclass(frozen=True, kw_only=True)
class AdaptiveThresholdParams:
    """The adaptive threshold of the kernel-density profile (Rust ``ThresholdState``).

    Attributes:
        gamma: adaptive tau = clamp(gamma * n, tau_min, tau_max), n the
            scope's mean candidate novelty.
        tau_min: lower clamp of the adaptive tau.
        tau_max: upper clamp of the adaptive tau.
        kappa_c: kappa = kappa_c / n.
        prior_share: prior for the mean share (1 - n) of a young scope.
        prior_weight: how many candidates the prior counts as.
    """

    gamma: float
    tau_min: float
    tau_max: float
    kappa_c: float
    prior_share: float
    prior_weight: float


@dataclass(frozen=True, kw_only=True)
class SageParams:
    """SAGE's density-driven EMA threshold, as published.

    Attributes:
        tau0: SAGE's tau0.
        tau_min: SAGE's tau_min.
        lam: SAGE's lambda.
        alpha: SAGE's EMA weight.
    """

    tau0: float
    tau_min: float
    lam: float
    alpha: float

    @property
    def first_tau(self) -> float:
        """The threshold before the first EMA step: tau* of a scope of density 0."""
        return self.tau0 + self.tau_min


@dataclass(frozen=True, kw_only=True)
class InformationParams:
    """The information term of the kernel-density profile.

    Attributes:
        tau: a candidate close in meaning whose informational novelty is at
            least this goes to the band instead of being a NOOP.
        k: how many nearest memories it compares with.
        number_weight: weight of a number, a date, a time, a number word.
        name_weight: weight of a name (capitalized mid-sentence, an email).
        word_weight: weight of any other content word.
        fold_tau: a candidate below ``tau`` against its ``k`` nearest memories
            still goes to the band when its information against the nearest
            memory alone, the one a NOOP would fold it into, is at least this.
    """

    tau: float
    k: int
    number_weight: float
    name_weight: float
    word_weight: float
    fold_tau: float = math.inf
