"""Configuration of the write gate."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

from memsieve.errors import ConfigError

Profile = Literal["memsieve", "sage", "maxcos", "none"]
BandPolicy = Literal["add_link", "add", "noop"]
VectorStorage = Literal["float32", "int8"]

_PROFILES = ("memsieve", "sage", "maxcos", "none")
_BAND_POLICIES = ("add_link", "add", "noop")
_VECTOR_STORAGES = ("float32", "int8")


@dataclass(frozen=True, kw_only=True)
class GateConfig:
    """How the novelty gate routes a candidate: ADD, the band, or NOOP.

    Thresholds are in cosine-distance units, like the novelty itself: with the
    default profile, a NOOP means "closer than tau to what this scope already
    holds, counting density".

    These defaults are the only ones: the Rust ``ThresholdState`` takes every
    parameter explicitly (``gate.new_threshold`` passes them from here).

    Attributes:
        profile: ``"memsieve"`` (kNN log-sum-exp, adaptive tau from the scope's
            typical spacing), ``"sage"`` (SAGE's formulas as published),
            ``"maxcos"`` (1 - cosine to the nearest memory, fixed tau) or
            ``"none"`` (no gate: every candidate that is not an exact duplicate
            is added).
        tau: a fixed threshold; ``None`` lets the profile adapt it. Required for
            ``"maxcos"``.
        delta: width of the band above tau.
        k: neighbours in memsieve's log-sum-exp.
        kappa_c: kappa = kappa_c / n, n the scope's mean candidate novelty: a
            neighbour a typical novelty further away than the nearest weighs
            e^-kappa_c as much.
        gamma: adaptive tau = clamp(gamma * n, tau_min, tau_max): a candidate
            less than gamma times as novel as what this scope typically sees
            is a NOOP. n is the mean novelty of the candidates the gate has
            scored in this scope (added ones leave it again when deleted).
        tau_min: lower clamp of the adaptive tau.
        tau_max: upper clamp of the adaptive tau.
        prior_share: prior for the mean share (1 - n) of a scope that has seen
            few candidates; the threshold starts at gamma * (1 - prior_share).
        prior_weight: how many candidates the prior counts as.
        sage_tau0: SAGE's tau0.
        sage_tau_min: SAGE's tau_min.
        sage_lambda: SAGE's lambda.
        sage_alpha: SAGE's EMA weight.
        info_tau: the information term's threshold (memsieve profile): a
            candidate close in meaning to the scope (novelty < tau) whose
            informational novelty against its ``info_k`` nearest memories is
            at least this goes to the band instead of being a NOOP. Above 1
            turns the information term off.
        info_k: how many nearest memories the information term compares with.
        info_number_weight: how much a number (or a date, a time, a number
            word) weighs in the information term, against a plain word.
        info_name_weight: how much a name (capitalized mid-sentence, an email)
            weighs.
        info_word_weight: how much any other content word weighs.
        band_policy: what the band does without an LLM: ``"add_link"`` adds the
            candidate and links it to the nearest memory as a newer version of
            it (kind ``updates``); ``"add"`` adds it; ``"noop"`` records a
            rejection.
        crud_update_min_sim: an LLM's UPDATE or DELETE must target a memory at
            least this close (cosine) to the candidate, or the candidate is added.
        exact_dedup: drop exact duplicates (normalized text) before the gate.
        vectors: ``"float32"`` or ``"int8"``: each scope also keeps an int8
            copy of its rows (about 26% more memory), scanned first, with
            every row that may reach the top k re-scored in float32, so
            decisions and search results are the float32 ones; it saves scan
            bandwidth, not memory (docs/QUANT.md).
    """

    profile: Profile = "memsieve"
    tau: float | None = None
    delta: float = 0.05
    k: int = 10
    kappa_c: float = 4.0
    gamma: float = 0.55
    tau_min: float = 0.05
    tau_max: float = 0.5
    prior_share: float = 0.5
    prior_weight: float = 8.0
    sage_tau0: float = 0.5
    sage_tau_min: float = 0.05
    sage_lambda: float = 2.0
    sage_alpha: float = 0.9
    info_tau: float = 0.15
    info_k: int = 5
    info_number_weight: float = 2.0
    info_name_weight: float = 1.5
    info_word_weight: float = 0.7
    band_policy: BandPolicy = "add_link"
    crud_update_min_sim: float = 0.35
    exact_dedup: bool = True
    vectors: VectorStorage = "float32"

    def __post_init__(self) -> None:
        if self.profile not in _PROFILES:
            raise ConfigError(f"unknown gate profile {self.profile!r}; use one of {', '.join(_PROFILES)}")
        if self.band_policy not in _BAND_POLICIES:
            raise ConfigError(
                f"unknown band_policy {self.band_policy!r}; use one of {', '.join(_BAND_POLICIES)}"
            )
        if self.vectors not in _VECTOR_STORAGES:
            raise ConfigError(f"unknown vectors {self.vectors!r}; use one of {', '.join(_VECTOR_STORAGES)}")
        if self.profile == "maxcos" and self.tau is None:
            raise ConfigError("the maxcos profile needs a fixed threshold; pass tau=0.25 (cosine 0.75)")
        for name in ("tau", "delta", "kappa_c", "gamma", "tau_min", "tau_max", "prior_share", "prior_weight",
                     "sage_tau0", "sage_tau_min", "sage_lambda", "sage_alpha", "crud_update_min_sim", "info_tau",
                     "info_number_weight", "info_name_weight", "info_word_weight"):
            value = getattr(self, name)
            if value is None and name == "tau":
                continue
            # A bool is an int to Python, but gamma=True is a mistake, not 1.0.
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ConfigError(f"{name} must be a number, got {type(value).__name__} {value!r}")
        for name in ("delta", "kappa_c", "gamma", "tau_min", "tau_max", "prior_weight", "sage_tau0",
                     "sage_tau_min", "sage_lambda", "crud_update_min_sim", "info_tau", "info_number_weight",
                     "info_name_weight", "info_word_weight"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.tau is not None and not (math.isfinite(self.tau) and 0.0 <= self.tau <= 2.0):
            raise ConfigError(f"tau must lie in [0, 2] (cosine-distance units), got {self.tau!r}")
        if self.tau_min > self.tau_max:
            raise ConfigError(f"tau_min {self.tau_min} exceeds tau_max {self.tau_max}; swap them")
        if not 0.0 <= self.sage_alpha < 1.0:
            raise ConfigError(f"sage_alpha must lie in [0, 1), got {self.sage_alpha!r}")
        if not -1.0 <= self.prior_share < 1.0:
            raise ConfigError(f"prior_share must lie in [-1, 1), got {self.prior_share!r}")
        for name in ("k", "info_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")
