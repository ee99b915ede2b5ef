"""The routing table: one backend per category, frozen, explained, and saved as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memsieve.errors import ConfigError
from memsieve.router.calibration import (REASONS, check_saved, STATIC_DEFAULT, STATIC_TABLE, CalibrationSample, Cell, Choice,
                                         aggregate_calibration, check_fallback, check_options, choose)

#: The pseudo-category of the default route: all samples pooled.
POOLED = "*"
_FORMAT = "memsieve-routing-table"
_VERSION = 1


@dataclass(frozen=True)
class Route:
    """How one category is routed.

    Attributes:
        category: the category (``"*"`` for the pooled default route).
        backend: the backend its queries go to.
        from_calibration: True if calibrated cells decided, False if the
            fallback table did.
        reason: one of ``memsieve.router.calibration.REASONS``.
        detail: the numbers behind the pick.
        cells: the category's calibrated cells, ``(backend, Cell)`` sorted by
            backend, including those too small to count.
    """

    category: str
    backend: str
    from_calibration: bool
    reason: str
    detail: str
    cells: tuple[tuple[str, Cell], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category, "backend": self.backend, "from_calibration": self.from_calibration,
            "reason": self.reason, "detail": self.detail,
            "cells": {b: {"n": c.n, "mean_cost": c.mean_cost, "mean_accuracy": c.mean_accuracy}
                      for b, c in self.cells},
        }

    @classmethod
    def from_dict(cls, raw: Any) -> "Route":
        if not isinstance(raw, Mapping):
            raise ConfigError(f"a route must be a JSON object, got {type(raw).__name__}; re-save the table")
        try:
            cells_raw = raw.get("cells", {})
            cells = tuple((str(b), Cell(int(c["n"]), float(c["mean_cost"]), float(c["mean_accuracy"])))
                          for b, c in sorted(cells_raw.items()))
            route = cls(str(raw["category"]), str(raw["backend"]), bool(raw["from_calibration"]),
                        str(raw["reason"]), str(raw.get("detail", "")), cells)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"malformed route {dict(raw)!r} ({exc}); re-save the table with to_json()") from None
        if route.reason not in REASONS:
            raise ConfigError(f"route for {route.category!r} has unknown reason {route.reason!r}; "
                              f"expected one of {', '.join(REASONS)}")
        for _, c in route.cells:
            if c.n < 1 or not (math.isfinite(c.mean_cost) and math.isfinite(c.mean_accuracy)):
                raise ConfigError(f"route for {route.category!r} has a bad cell {c!r}; re-save the table")
        return route


def _route(category: str, choice: Choice, cells: Mapping[str, Cell]) -> Route:
    return Route(category, choice.backend, choice.from_calibration, choice.reason, choice.detail,
                 tuple(sorted(cells.items())))


@dataclass(frozen=True)
class RoutingTable:
    """A frozen category -> backend table with the reason for every entry.

    Build one with :func:`build_routing_table`; look routes up with
    :meth:`backend_for` / :meth:`route`.

    Attributes:
        preset: the preset rule the table was built with.
        min_samples_per_cell: the sample floor it was built with.
        accuracy_tolerance: the minimize-cost tolerance it was built with.
        routes: one Route per category, sorted by category.
        default: the route for queries of no known category (or a classifier
            that is unsure): the same preset applied to all samples pooled.
    """

    preset: str
    min_samples_per_cell: int
    accuracy_tolerance: float
    routes: tuple[Route, ...]
    default: Route

    def __post_init__(self) -> None:
        check_options(self.preset, self.min_samples_per_cell, self.accuracy_tolerance)
        cats = [r.category for r in self.routes]
        if len(set(cats)) != len(cats):
            raise ConfigError(f"routing table lists a category twice: {cats}; keep one route per category")

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(r.category for r in self.routes)

    @property
    def backends(self) -> frozenset[str]:
        """Every backend the table can route to (the default's included)."""
        return frozenset([r.backend for r in self.routes] + [self.default.backend])

    def mapping(self) -> dict[str, str]:
        """A plain ``{category: backend}`` copy."""
        return {r.category: r.backend for r in self.routes}

    def route(self, category: str | None) -> Route:
        """The route for ``category``; the default route if it is None or unknown."""
        for r in self.routes:
            if r.category == category:
                return r
        return self.default

    def backend_for(self, category: str | None) -> str:
        return self.route(category).backend

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": _FORMAT, "version": _VERSION, "preset": self.preset,
            "min_samples_per_cell": self.min_samples_per_cell, "accuracy_tolerance": self.accuracy_tolerance,
            "routes": [r.to_dict() for r in self.routes], "default": self.default.to_dict(),
        }

    @classmethod
    def from_dict(cls, raw: Any) -> "RoutingTable":
        """Rebuild a table from :meth:`to_dict` output; ConfigError if it is not one."""
        raw = check_saved(raw, fmt=_FORMAT, version=_VERSION, what="routing table",
                          load_hint="load what RoutingTable.to_json() wrote",
                          rebuild_hint="rebuild it with build_routing_table")
        routes = raw.get("routes")
        if not isinstance(routes, list):
            raise ConfigError(f"routing table 'routes' must be a list, got {type(routes).__name__}")
        return cls(raw.get("preset"), raw.get("min_samples_per_cell"),  # type: ignore[arg-type]
                   raw.get("accuracy_tolerance"),  # type: ignore[arg-type]
                   tuple(Route.from_dict(r) for r in routes), Route.from_dict(raw.get("default")))

    def to_json(self, **dumps_options: Any) -> str:
        return json.dumps(self.to_dict(), **dumps_options)

    @classmethod
    def from_json(cls, text: str) -> "RoutingTable":
        try:
            raw = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"routing table is not valid JSON ({exc}); load what to_json() wrote") from None
        return cls.from_dict(raw)


def build_routing_table(samples: Iterable[CalibrationSample], *, preset: str, min_samples_per_cell: int = 10,
                        accuracy_tolerance: float = 0.02, fallback: Mapping[str, str] = STATIC_TABLE,
                        fallback_default: str = STATIC_DEFAULT) -> RoutingTable:
    """Derive a routing table from calibration samples.

    Every category that has samples or a fallback entry gets a route, picked by
    :func:`memsieve.router.calibration.select_by_preset` with the same options.
    The default route applies the same rule to all samples pooled, falling back
    to ``fallback_default``.

    Args:
        samples: CalibrationSample objects.
        preset: ``"minimize-cost"``, ``"balanced"`` or ``"maximize-accuracy"``.
        min_samples_per_cell: cells with fewer samples are ignored (>= 1).
        accuracy_tolerance: accuracy a minimize-cost pick may give up, in [0, 1].
        fallback: category -> backend where calibration is too thin.
        fallback_default: the default route's backend where even the pooled
            cells are too thin.

    Returns:
        A frozen RoutingTable.

    Raises:
        ConfigError: bad options, a bad sample, or a sampled category with too
            few samples and no fallback entry.
    """
    check_options(preset, min_samples_per_cell, accuracy_tolerance)
    check_fallback(fallback)
    if not isinstance(fallback_default, str) or not fallback_default:
        raise ConfigError(f"fallback_default must be a backend name, got {fallback_default!r}; e.g. 'hybrid'")
    items = list(samples)
    agg = aggregate_calibration(items)
    options = dict(min_samples_per_cell=min_samples_per_cell, accuracy_tolerance=accuracy_tolerance)
    routes = []
    for cat in sorted(set(agg) | set(fallback)):
        choice = choose(cat, agg, preset, fallback=fallback, **options)  # type: ignore[arg-type]
        routes.append(_route(cat, choice, agg.get(cat, {})))
    pooled = aggregate_calibration(CalibrationSample(POOLED, s.backend, s.cost, s.correct) for s in items)
    choice = choose(POOLED, pooled, preset, fallback={POOLED: fallback_default}, **options)  # type: ignore[arg-type]
    return RoutingTable(preset, min_samples_per_cell, float(accuracy_tolerance), tuple(routes),
                        _route(POOLED, choice, pooled.get(POOLED, {})))
