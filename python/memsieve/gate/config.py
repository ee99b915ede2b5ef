"""Configuration of the write gate."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

from memsieve.errors import ConfigError, is_choice, short_repr
from memsieve.gate.params import AdaptiveThresholdParams, InformationParams, SageParams, ScoringParams
from memsieve.gate.profiles import GateProfile, profile_class

#: The built-in profile names (``register_profile`` adds more); ``"memsieve"`` is ``"kde"``.
Profile = Literal["kde", "memsieve", "sage", "maxcos", "none"]
BandPolicy = Literal["fold", "add_link", "add", "noop"]
VectorStorage = Literal["float32", "int8"]

_BAND_POLICIES = ("fold", "add_link", "add", "noop")
_VECTOR_STORAGES = ("float32", "int8")


@dataclass(frozen=True, kw_only=True)
class GateConfig:
    """How the novelty gate routes a candidate: ADD, the band, or NOOP.

    Thresholds are in cosine-distance units, like the novelty itself: with the
    default profile, a NOOP means "closer than tau to what this scope already
    holds, counting density".

    These defaults are the only ones: the Rust ``ThresholdState`` takes every
    parameter explicitly (``gate.new_threshold`` passes them from here).

    The keywords are flat; they fall in groups by what they configure, listed
    below in this order, and a profile reads each group as one view: scoring
    (``profile``, ``tau``, ``delta``, ``k``; ``config.scoring``), the
    adaptive threshold (``kappa_c`` to ``prior_weight``; ``config.adaptive``),
    SAGE's threshold (``sage_*``; ``config.sage``), the information term
    (``info_*``; ``config.information``), then the band and the LLM
    (``band_policy``, ``crud_update_min_sim``), dedup (``exact_dedup``) and
    storage (``vectors``).

    Attributes:
        profile: the scoring method (memsieve.gate.profiles): ``"kde"`` (the
            default, also named ``"memsieve"``: a von Mises-Fisher kernel
            density over the k nearest memories, an adaptive tau from the
            scope's typical novelty, and the information term), ``"sage"``
            (SAGE's formulas as published), ``"maxcos"`` (1 - cosine to the
            nearest memory, fixed tau) or ``"none"`` (no gate: every candidate
            that is not an exact duplicate is added); or a name given to
            ``register_profile``. The default's value stays ``"memsieve"``.
        tau: a fixed threshold; ``None`` lets the profile adapt it. Required for
            ``"maxcos"``; SAGE reads its own.
        delta: width of the band above tau.
        k: neighbours in the kernel density's log-sum-exp (and SAGE's).
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
        info_tau: the information term's threshold (kde profile): a
            candidate close in meaning to the scope (novelty < tau) whose
            informational novelty against its ``info_k`` nearest memories is
            at least this goes to the band instead of being a NOOP. Above 1
            turns the information term off.
        info_k: how many nearest memories the information term compares with.
        info_fold_tau: a candidate below ``info_tau`` still goes to the band
            when its information against its nearest memory alone is at least
            this: a NOOP folds it into that one memory, which a reader sees
            without the folded text, so what the other neighbours say does not
            keep its content. Above 1 turns this off.
        info_number_weight: how much a number (or a date, a time, a number
            word) weighs in the information term, against a plain word.
        info_name_weight: how much a name (capitalized mid-sentence, an email)
            weighs.
        info_word_weight: how much any other content word weighs.
        band_policy: what the band does without an LLM. ``"fold"`` (the
            default) folds a candidate of the semantic band into its nearest
            memory as a NOOP when that memory says everything it says (holds
            every content word, number, name, date and count of it, and no
            change cue is new), and treats any other as ``"add_link"`` does; under a profile without the information term
            it is ``"add_link"``. ``"add_link"`` adds the candidate and links it
            to the nearest memory, as its newer version (kind ``updates``) when
            it says more, else as a neighbour (``near``); ``"add"`` adds it;
            ``"noop"`` records a rejection.
        crud_update_min_sim: an LLM's UPDATE or DELETE must target a memory at
            least this close (cosine) to the candidate, or the candidate is added.
        exact_dedup: drop exact duplicates (normalized text) before the gate.
        vectors: ``"float32"`` or ``"int8"``: each scope also keeps an int8
            copy of its rows (about 26% more memory), scanned first, with
            every row that may reach the top k re-scored in float32, so
            decisions and search results are the float32 ones; it saves scan
            bandwidth, not memory (docs/QUANT.md).
        passages: embed a text longer than the embedder's window (1,000
            characters; memsieve.text.passages) passage by passage too, so
            that every part of it counts in the gate (a long text is a NOOP
            only if each of its passages is) and is found by dense search (a
            memory scores its best passage). A text that fits has one vector
            either way. False judges and finds a long text by its opening only.
        sentence_keys: give a text that fits the window a vector for each
            sentence after its first (memsieve.text.passages.key_spans), so
            that dense search finds a chat turn that says several things by
            the one a question asks about (a memory scores its best key). The
            gate never reads them: decisions are the same either way. Costs
            one embedding per extra sentence; False saves that.
    """

    # scoring
    profile: Profile | str = "memsieve"
    tau: float | None = None
    delta: float = 0.05
    k: int = 10
    # the adaptive threshold (kde)
    kappa_c: float = 4.0
    gamma: float = 0.57
    tau_min: float = 0.05
    tau_max: float = 0.5
    prior_share: float = 0.5
    prior_weight: float = 8.0
    # SAGE's threshold
    sage_tau0: float = 0.5
    sage_tau_min: float = 0.05
    sage_lambda: float = 2.0
    sage_alpha: float = 0.9
    # the information term (kde)
    info_tau: float = 0.15
    info_k: int = 5
    info_fold_tau: float = 0.5
    info_number_weight: float = 2.0
    info_name_weight: float = 1.5
    info_word_weight: float = 0.7
    # the band and the LLM, dedup, storage
    band_policy: BandPolicy = "fold"
    crud_update_min_sim: float = 0.35
    exact_dedup: bool = True
    vectors: VectorStorage = "float32"
    passages: bool = True
    sentence_keys: bool = True

    def __post_init__(self) -> None:
        profile = profile_class(self.profile)  # ConfigError naming the known profiles
        if not is_choice(self.band_policy, tuple(_BAND_POLICIES)):
            raise ConfigError(
                f"unknown band_policy {short_repr(self.band_policy)}; use one of {', '.join(_BAND_POLICIES)}"
            )
        if not is_choice(self.vectors, tuple(_VECTOR_STORAGES)):
            raise ConfigError(f"unknown vectors {short_repr(self.vectors)}; use one of {', '.join(_VECTOR_STORAGES)}")
        for flag in ("passages", "sentence_keys", "exact_dedup"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag} must be True or False, got {short_repr(getattr(self, flag))}")
        if profile.needs_fixed_tau and self.tau is None:
            raise ConfigError(f"the {self.profile} profile needs a fixed threshold; pass tau=0.25 (cosine 0.75)")
        for name in ("tau", "delta", "kappa_c", "gamma", "tau_min", "tau_max", "prior_share", "prior_weight",
                     "sage_tau0", "sage_tau_min", "sage_lambda", "sage_alpha", "crud_update_min_sim", "info_tau",
                     "info_fold_tau", "info_number_weight", "info_name_weight", "info_word_weight"):
            value = getattr(self, name)
            if value is None and name == "tau":
                continue
            # A bool is an int to Python, but gamma=True is a mistake, not 1.0.
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ConfigError(f"{name} must be a number, got {type(value).__name__} {short_repr(value)}")
            try:
                float(value)
            except (OverflowError, ValueError, TypeError):
                raise ConfigError(f"{name} must be a finite number, got {type(value).__name__} {short_repr(value)}"
                                  f"; the default is {type(self).__dataclass_fields__[name].default}") from None
        for name in ("delta", "kappa_c", "gamma", "tau_min", "tau_max", "prior_weight", "sage_tau0",
                     "sage_tau_min", "sage_lambda", "crud_update_min_sim", "info_tau", "info_fold_tau",
                     "info_number_weight", "info_name_weight", "info_word_weight"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name} must be a finite number >= 0, got {short_repr(value)}")
        for name in ("gamma", "kappa_c"):
            if getattr(self, name) == 0:  # the threshold divides by them (memsieve._core.ThresholdState)
                raise ConfigError(f"{name} must be > 0, got 0; the default is "
                                  f"{type(self).__dataclass_fields__[name].default}")
        if self.tau is not None and not (math.isfinite(self.tau) and 0.0 <= self.tau <= 2.0):
            raise ConfigError(f"tau must lie in [0, 2] (cosine-distance units), got {self.tau!r}")
        if self.tau_min > self.tau_max:
            raise ConfigError(f"tau_min {self.tau_min} exceeds tau_max {self.tau_max}; swap them")
        if self.crud_update_min_sim > 1.0:
            raise ConfigError(f"crud_update_min_sim is a cosine, at most 1, got {self.crud_update_min_sim!r}; "
                              "the default is 0.35")
        if not 0.0 <= self.sage_alpha < 1.0:
            raise ConfigError(f"sage_alpha must lie in [0, 1), got {self.sage_alpha!r}")
        if not -1.0 <= self.prior_share < 1.0:
            raise ConfigError(f"prior_share must lie in [-1, 1), got {self.prior_share!r}")
        for name in ("k", "info_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
                raise ConfigError(f"{name} must be an integer >= 1 (and below 2^63), got {short_repr(value)}; "
                                  f"the default is {type(self).__dataclass_fields__[name].default}")

    # ---- the groups, as the profiles read them ---------------------------------

    @property
    def scoring(self) -> ScoringParams:
        """tau, delta and k."""
        return ScoringParams(tau=self.tau, delta=self.delta, k=self.k)

    @property
    def adaptive(self) -> AdaptiveThresholdParams:
        """The adaptive threshold's parameters (the Rust ``ThresholdState``'s)."""
        return AdaptiveThresholdParams(gamma=self.gamma, tau_min=self.tau_min, tau_max=self.tau_max,
                                       kappa_c=self.kappa_c, prior_share=self.prior_share,
                                       prior_weight=self.prior_weight)

    @property
    def sage(self) -> SageParams:
        """SAGE's threshold parameters."""
        return SageParams(tau0=self.sage_tau0, tau_min=self.sage_tau_min, lam=self.sage_lambda,
                          alpha=self.sage_alpha)

    @property
    def information(self) -> InformationParams:
        """The information term's parameters."""
        return InformationParams(tau=self.info_tau, k=self.info_k, number_weight=self.info_number_weight,
                                 name_weight=self.info_name_weight, word_weight=self.info_word_weight,
                                 fold_tau=self.info_fold_tau)

    def gate_profile(self) -> GateProfile:
        """The profile this config gates with, built once per scope gate."""
        return profile_class(self.profile)(scoring=self.scoring, sage=self.sage, information=self.information)
