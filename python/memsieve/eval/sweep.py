"""The parameter sweep behind the frontier plot and the choice of defaults.

Every gated family is swept over the parameter that moves its store size:
maxcos over its cosine threshold, sage over its floor ``tau_min`` (its
"adaptive" tau decays to that floor, so the floor is its real threshold), and
memsieve over ``gamma`` (adaptive tau = gamma * the scope's mean novelty), its kernel
concentration ``kappa_c``, and a fixed-tau variant that keeps the kNN kernel
score but no adaptation. Random dropping is swept over its rate, 3 seeds each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memsieve.eval.arms import ArmSpec, maxcos_spec, memsieve_spec, random_spec, sage_spec, RANDOM_SEEDS

GRIDS: dict[str, dict[str, Sequence[Any]]] = {
    "full": {
        "maxcos": (0.9, 0.85, 0.8, 0.775, 0.75, 0.725, 0.7, 0.65),
        # SAGE's density step costs ~0.2 s per add() call whatever the scope's
        # size (see docs/EVALUATION.md), so its sweep runs on the observations
        # stream only (312 calls) and turns get the headline point alone.
        "sage_tau_min": (0.1, 0.15, 0.2, 0.3),
        "sage_streams": ("observations",),
        "memsieve_gamma": (0.3, 0.4, 0.5, 0.55, 0.6, 0.62, 0.64, 0.66, 0.7, 0.8),
        "memsieve_kappa": ((3.0, 0.6), (6.0, 0.7)),
        "memsieve_k": ((5, 0.7), (20, 0.6)),
        "memsieve_tau": (0.1, 0.15, 0.175, 0.2),
        "random": (0.1, 0.2, 0.3, 0.5),
    },
    "quick": {
        "maxcos": (0.8, 0.7),
        "sage_tau_min": (0.15,),
        "sage_streams": ("observations",),
        "memsieve_gamma": (0.5, 0.7),
        "memsieve_tau": (0.15,),
        "random": (0.25,),
    },
    "none": {},
}


def sweep_specs(level: str, *, memsieve_base: Mapping[str, Any] | None = None
                ) -> list[tuple[ArmSpec, tuple[str, ...] | None]]:
    """The configurations of a sweep level (``full``, ``quick`` or ``none``).

    Args:
        level: which grid.
        memsieve_base: GateConfig overrides every memsieve point starts from
            (the memsieve arm's own overrides), so the sweep moves one thing at a time.

    Returns:
        (spec, streams) pairs; streams None means every stream.
    """
    grid = GRIDS[level]
    base = dict(memsieve_base or {})
    specs: list[ArmSpec] = [maxcos_spec(t) for t in grid.get("maxcos", ())]
    specs += [memsieve_spec(**{**base, "gamma": g}) for g in grid.get("memsieve_gamma", ())]
    specs += [memsieve_spec(**{**base, "kappa_c": kc, "gamma": g}) for kc, g in grid.get("memsieve_kappa", ())]
    specs += [memsieve_spec(**{**base, "k": kk, "gamma": g}) for kk, g in grid.get("memsieve_k", ())]
    specs += [_fixed(base, t) for t in grid.get("memsieve_tau", ())]
    specs += [random_spec(r, s) for r in grid.get("random", ()) for s in RANDOM_SEEDS]
    out: list[tuple[ArmSpec, tuple[str, ...] | None]] = [(s, None) for s in specs]
    sage_streams = tuple(grid.get("sage_streams", ())) or None
    out += [(sage_spec(sage_tau_min=t), sage_streams) for t in grid.get("sage_tau_min", ())]
    return out


def _fixed(base: Mapping[str, Any], tau: float) -> ArmSpec:
    # gamma, tau_min and tau_max only shape the adaptive tau: leave them out.
    kept = {k: v for k, v in base.items() if k not in ("gamma", "tau_min", "tau_max")}
    spec = memsieve_spec(**{**kept, "tau": tau})
    return ArmSpec(arm="memsieve-fixed", label=spec.label, gate=spec.gate, params=spec.params)
