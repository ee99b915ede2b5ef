"""Calibration of the router: samples -> per-cell means -> one backend per category.

Everything here is pure: no store, no model, no clock. A *cell* is one
(category, backend) pair; its samples say how much one query cost on that
backend and how correct the answer was. A preset rule turns the cells of one
category into one backend, and :func:`build_routing_table` does that for every
category and records why each pick was made.

The minimize-cost rule is stated so that both of its outcomes can happen: it
anchors on the most accurate backend and moves to a *strictly cheaper* backend
only if one lies within ``accuracy_tolerance`` of that anchor. "No cheaper
backend within tolerance" is therefore a real case (the anchor is already the
cheapest, or every cheaper backend is more than the tolerance behind), unlike a
rule that asks whether *any* backend is within tolerance of the best, which the
best backend itself always is.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from memsieve.errors import ConfigError

Preset = Literal["minimize-cost", "balanced", "maximize-accuracy"]
PRESETS: tuple[str, ...] = ("minimize-cost", "balanced", "maximize-accuracy")

#: LoCoMo's question categories 1..5, by name.
LOCOMO_CATEGORIES: tuple[str, ...] = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial")

#: The backend used where calibration says nothing. Hybrid (reciprocal-rank
#: fusion of dense and keyword) is the hedge: it is rarely the worst of the three.
STATIC_DEFAULT = "hybrid"

#: The fallback table: a prior, not a measurement. Every LoCoMo category maps to
#: the hybrid backend until calibration has enough samples to say otherwise.
STATIC_TABLE: Mapping[str, str] = MappingProxyType({c: STATIC_DEFAULT for c in LOCOMO_CATEGORIES})

# Mean accuracies closer than this are treated as equal, so that a gap of
# exactly the tolerance (0.50 vs 0.48 at 0.02) counts as within it despite
# binary rounding of the means.
_EPS = 1e-12

# Reason codes recorded with every pick (Choice.reason).
NO_DATA = "no-calibration-data"
TOO_FEW_SAMPLES = "too-few-samples"
CHEAPER_WITHIN_TOLERANCE = "cheaper-within-tolerance"
NO_CHEAPER_WITHIN_TOLERANCE = "no-cheaper-within-tolerance"
LOWEST_COST_PER_ACCURACY = "lowest-cost-per-accuracy"
ALL_ZERO_ACCURACY = "all-zero-accuracy"
MOST_ACCURATE = "most-accurate"
REASONS: tuple[str, ...] = (NO_DATA, TOO_FEW_SAMPLES, CHEAPER_WITHIN_TOLERANCE, NO_CHEAPER_WITHIN_TOLERANCE,
                            LOWEST_COST_PER_ACCURACY, ALL_ZERO_ACCURACY, MOST_ACCURATE)


@dataclass(frozen=True)
class CalibrationSample:
    """One query answered by one backend during calibration.

    Attributes:
        category: the query's category, e.g. ``"temporal"``.
        backend: the backend that answered, e.g. ``"hybrid"``.
        cost: what the answer cost, in any unit that is the same for every
            sample (milliseconds of latency, dollars); finite and >= 0.
        correct: how correct the answer was, in [0, 1] (1 = right, or a
            partial score such as answer-token recall).
    """

    category: str
    backend: str
    cost: float
    correct: float

    def __post_init__(self) -> None:
        for name in ("category", "backend"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"sample {name} must be a non-empty string, got {value!r}; name it, e.g. 'hybrid'")
        for name in ("cost", "correct"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigError(f"sample {name} must be a finite number, got {value!r}; pass a float")
        if self.cost < 0:
            raise ConfigError(f"sample cost must be >= 0, got {self.cost!r} for {self.category}/{self.backend}; "
                              "costs are latencies or prices, never negative")
        if not 0.0 <= self.correct <= 1.0:
            raise ConfigError(f"sample correct must lie in [0, 1], got {self.correct!r} for "
                              f"{self.category}/{self.backend}; score 1 for right, 0 for wrong")


@dataclass(frozen=True)
class Cell:
    """The mean of one (category, backend) pair's samples.

    Attributes:
        n: how many samples.
        mean_cost: their mean cost.
        mean_accuracy: their mean ``correct``, in [0, 1].
    """

    n: int
    mean_cost: float
    mean_accuracy: float


@dataclass(frozen=True)
class Choice:
    """The backend picked for one category, and why.

    Attributes:
        backend: the picked backend.
        from_calibration: True if calibrated cells decided, False if the
            fallback table did.
        reason: one of :data:`REASONS`.
        detail: the numbers behind the pick, for a person to read.
    """

    backend: str
    from_calibration: bool
    reason: str
    detail: str


Aggregated = dict[str, dict[str, Cell]]


def aggregate_calibration(samples: Iterable[CalibrationSample]) -> Aggregated:
    """Roll samples up into per-(category, backend) means.

    Args:
        samples: CalibrationSample objects (validated on construction).

    Returns:
        ``{category: {backend: Cell}}``, both levels sorted by name.

    Raises:
        ConfigError: an item is not a CalibrationSample.
    """
    sums: dict[tuple[str, str], tuple[int, list[float], list[float]]] = {}
    for i, s in enumerate(samples):
        if not isinstance(s, CalibrationSample):
            raise ConfigError(f"sample {i} is a {type(s).__name__}, not a CalibrationSample; "
                              "wrap it: CalibrationSample(category, backend, cost, correct)")
        n, costs, scores = sums.get((s.category, s.backend), (0, [], []))
        costs.append(float(s.cost))
        scores.append(float(s.correct))
        sums[(s.category, s.backend)] = (n + 1, costs, scores)
    out: Aggregated = {}
    for (cat, backend) in sorted(sums):
        n, costs, scores = sums[(cat, backend)]
        # fsum: the mean of many equal latencies must come out exactly equal.
        out.setdefault(cat, {})[backend] = Cell(n, math.fsum(costs) / n, math.fsum(scores) / n)
    return out


def check_options(preset: object, min_samples_per_cell: object, accuracy_tolerance: object) -> None:
    """Raise ConfigError unless the three calibration options are usable."""
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    if isinstance(min_samples_per_cell, bool) or not isinstance(min_samples_per_cell, int) \
            or min_samples_per_cell < 1:
        raise ConfigError(f"min_samples_per_cell must be an integer >= 1, got {min_samples_per_cell!r}; "
                          "10 is a reasonable floor")
    if isinstance(accuracy_tolerance, bool) or not isinstance(accuracy_tolerance, (int, float)) \
            or not math.isfinite(accuracy_tolerance) or not 0.0 <= accuracy_tolerance <= 1.0:
        raise ConfigError(f"accuracy_tolerance must be a number in [0, 1], got {accuracy_tolerance!r}; "
                          "0.02 tolerates a 2-point accuracy loss")


def check_fallback(fallback: object) -> Mapping[str, str]:
    """Raise ConfigError unless ``fallback`` maps category names to backend names."""
    if not isinstance(fallback, Mapping):
        raise ConfigError(f"fallback must map category -> backend, got {type(fallback).__name__}; "
                          "pass a dict such as STATIC_TABLE")
    for cat, backend in fallback.items():
        if not isinstance(cat, str) or not isinstance(backend, str) or not cat or not backend:
            raise ConfigError(f"fallback entries must be non-empty strings, got {cat!r}: {backend!r}")
    return fallback


def choose(category: str, agg: Mapping[str, Mapping[str, Cell]], preset: str, *,
           min_samples_per_cell: int = 10, accuracy_tolerance: float = 0.02,
           fallback: Mapping[str, str] = STATIC_TABLE) -> Choice:
    """Pick a backend for one category and say why (see :func:`select_by_preset`)."""
    check_options(preset, min_samples_per_cell, accuracy_tolerance)
    check_fallback(fallback)
    if not isinstance(category, str) or not category:
        raise ConfigError(f"category must be a non-empty string, got {category!r}")
    if not isinstance(agg, Mapping):
        raise ConfigError(f"agg must be the mapping aggregate_calibration returns, got {type(agg).__name__}")
    cells = agg.get(category) or {}
    eligible = {b: c for b, c in cells.items() if c.n >= min_samples_per_cell}
    if not eligible:
        if category not in fallback:
            raise ConfigError(f"category {category!r} has no cell with >= {min_samples_per_cell} samples and "
                              f"no fallback entry; add it to fallback (it has {sorted(fallback)})")
        if cells:
            counts = ", ".join(f"{b}={c.n}" for b, c in cells.items())
            return Choice(fallback[category], False, TOO_FEW_SAMPLES,
                          f"every cell has fewer than {min_samples_per_cell} samples ({counts})")
        return Choice(fallback[category], False, NO_DATA, "no calibration sample for this category")
    if preset == "maximize-accuracy":
        return _most_accurate(eligible)
    if preset == "minimize-cost":
        return _cheapest_within_tolerance(eligible, accuracy_tolerance)
    return _best_cost_per_accuracy(eligible)


def select_by_preset(category: str, agg: Mapping[str, Mapping[str, Cell]], preset: str, *,
                     min_samples_per_cell: int = 10, accuracy_tolerance: float = 0.02,
                     fallback: Mapping[str, str] = STATIC_TABLE) -> str:
    """Pick the backend for one category by a preset rule.

    Only cells with at least ``min_samples_per_cell`` samples count; with none,
    the pick is ``fallback[category]``. Among eligible cells:

    - ``maximize-accuracy``: highest mean accuracy; ties go to the lower mean
      cost, then to the name.
    - ``minimize-cost``: start from the maximize-accuracy pick; if a strictly
      cheaper backend is within ``accuracy_tolerance`` of its accuracy, take
      the cheapest such backend (ties to the more accurate), else keep it.
    - ``balanced``: lowest mean cost per unit of mean accuracy, skipping
      backends with zero accuracy; if every backend scored zero, the cheapest.

    Args:
        category: the category to route.
        agg: the output of :func:`aggregate_calibration`.
        preset: one of :data:`PRESETS`.
        min_samples_per_cell: cells with fewer samples are ignored (>= 1).
        accuracy_tolerance: accuracy a minimize-cost pick may give up, in [0, 1].
        fallback: category -> backend for categories without eligible cells.

    Returns:
        The backend name.

    Raises:
        ConfigError: an unknown preset, a tolerance outside [0, 1],
            ``min_samples_per_cell`` < 1, or no data and no fallback entry.
    """
    return choose(category, agg, preset, min_samples_per_cell=min_samples_per_cell,
                  accuracy_tolerance=accuracy_tolerance, fallback=fallback).backend


def _fmt(backend: str, cell: Cell) -> str:
    return f"{backend} (accuracy {cell.mean_accuracy:.4f}, cost {cell.mean_cost:.4g}, n={cell.n})"


def _anchor(eligible: Mapping[str, Cell]) -> str:
    # Highest accuracy; equal accuracies (within _EPS) go to the cheaper, then the name.
    best_acc = max(c.mean_accuracy for c in eligible.values())
    tied = [b for b, c in eligible.items() if c.mean_accuracy >= best_acc - _EPS]
    return min(tied, key=lambda b: (eligible[b].mean_cost, b))


def _most_accurate(eligible: Mapping[str, Cell]) -> Choice:
    pick = _anchor(eligible)
    acc = eligible[pick].mean_accuracy
    tied = sorted(b for b, c in eligible.items() if c.mean_accuracy >= acc - _EPS and b != pick)
    tie = f"; tied with {', '.join(tied)}, cheaper wins" if tied else ""
    return Choice(pick, True, MOST_ACCURATE, f"highest accuracy: {_fmt(pick, eligible[pick])}{tie}")


def _cheapest_within_tolerance(eligible: Mapping[str, Cell], tolerance: float) -> Choice:
    anchor = _anchor(eligible)
    top = eligible[anchor]
    floor = top.mean_accuracy - tolerance - _EPS
    cheaper = [b for b, c in eligible.items() if c.mean_cost < top.mean_cost and c.mean_accuracy >= floor]
    if cheaper:
        pick = min(cheaper, key=lambda b: (eligible[b].mean_cost, -eligible[b].mean_accuracy, b))
        return Choice(pick, True, CHEAPER_WITHIN_TOLERANCE,
                      f"{_fmt(pick, eligible[pick])} is within {tolerance:g} of the most accurate "
                      f"{_fmt(anchor, top)} and cheaper")
    undercut = sorted(b for b, c in eligible.items() if c.mean_cost < top.mean_cost)
    why = (f"the cheaper {', '.join(undercut)} trail by more than {tolerance:g}" if undercut
           else "nothing is cheaper")
    return Choice(anchor, True, NO_CHEAPER_WITHIN_TOLERANCE, f"most accurate {_fmt(anchor, top)}; {why}")


def _best_cost_per_accuracy(eligible: Mapping[str, Cell]) -> Choice:
    scoring = {b: c for b, c in eligible.items() if c.mean_accuracy > 0.0}
    if not scoring:
        pick = min(eligible, key=lambda b: (eligible[b].mean_cost, b))
        return Choice(pick, True, ALL_ZERO_ACCURACY,
                      f"every backend scored zero accuracy, so cost decides: {_fmt(pick, eligible[pick])}")
    pick = min(scoring, key=lambda b: (scoring[b].mean_cost / scoring[b].mean_accuracy,
                                       -scoring[b].mean_accuracy, b))
    cell = scoring[pick]
    skipped = sorted(set(eligible) - set(scoring))
    note = f"; skipped zero-accuracy {', '.join(skipped)}" if skipped else ""
    return Choice(pick, True, LOWEST_COST_PER_ACCURACY,
                  f"lowest cost per unit accuracy {cell.mean_cost / cell.mean_accuracy:.4g}: "
                  f"{_fmt(pick, cell)}{note}")


def check_saved(raw: object, *, fmt: str, version: int, what: str, load_hint: str, rebuild_hint: str) -> Mapping:
    """Check the format tag and version of a saved router part; ConfigError names what it is and the fix."""
    if not isinstance(raw, Mapping) or raw.get("format") != fmt:
        raise ConfigError(f"not a {what} (expected format {fmt!r}); {load_hint}")
    if raw.get("version") != version:
        raise ConfigError(f"{what} version {raw.get('version')!r} is not supported (expected {version}); {rebuild_hint}")
    return raw
