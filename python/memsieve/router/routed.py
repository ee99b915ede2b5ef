"""Routed search: classify the query, look its category up, search with that backend."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memsieve.errors import ConfigError
from memsieve.inputs import check_text
from memsieve.router.classifier import NearestCentroidClassifier, QueryClassifier
from memsieve.router.table import RoutingTable

if TYPE_CHECKING:
    from memsieve.memory import Memory
    from memsieve.records import SearchResult

#: The backends a routing table may name: the search modes of ``Memory.search``.
BACKENDS: tuple[str, ...] = ("dense", "keyword", "hybrid")
_FORMAT = "memsieve-router"
_VERSION = 1


@dataclass(frozen=True)
class RouteDecision:
    """Why a query went to the backend it went to.

    Attributes:
        category: the category whose route was taken, or None when the
            classifier was not confident and the table's default route was used.
        backend: the search mode used.
        margin: the classifier's margin over its runner-up (cosine gap).
        from_calibration: whether the route was derived from calibration
            (False: the static fallback table).
        predicted: the classifier's top category, confident or not.
        reason: the route's reason code (see ``memsieve.router.REASONS``).
    """

    category: str | None
    backend: str
    margin: float
    from_calibration: bool
    predicted: str
    reason: str


class QueryRouter:
    """Decides a backend for a query from its text and embedding; holds no store.

    Args:
        table: the routing table.
        classifier: a QueryClassifier (e.g. a fitted NearestCentroidClassifier).

    Raises:
        ConfigError: the table routes to something that is not a search mode.
    """

    def __init__(self, table: RoutingTable, classifier: QueryClassifier) -> None:
        if not isinstance(table, RoutingTable):
            raise ConfigError(f"table must be a RoutingTable, got {type(table).__name__}; "
                              "build one with build_routing_table")
        if not isinstance(classifier, QueryClassifier):
            raise ConfigError(f"classifier must have categories and classify(query, vector), got "
                              f"{type(classifier).__name__}")
        unknown = sorted(table.backends - set(BACKENDS))
        if unknown:
            raise ConfigError(f"the routing table names backends {unknown} that Memory.search does not have; "
                              f"calibrate over {', '.join(BACKENDS)} only")
        self.table = table
        self.classifier = classifier

    def decide(self, query: str, vector: np.ndarray) -> RouteDecision:
        """Route one query.

        Args:
            query: the query text.
            vector: its (d,) float32 embedding by the classifier's embedder.
        """
        pred = self.classifier.classify(query, vector)
        category = pred.category if pred.confident else None
        route = self.table.route(category)
        # A predicted category the table does not know also takes the default route.
        if route is self.table.default:
            category = None
        return RouteDecision(category, route.backend, pred.margin, route.from_calibration, pred.category,
                             route.reason)

    def to_dict(self) -> dict[str, Any]:
        if not isinstance(self.classifier, NearestCentroidClassifier):
            raise ConfigError(f"only a NearestCentroidClassifier can be saved, got {type(self.classifier).__name__}; "
                              "save your classifier yourself and the table with table.to_json()")
        return {"format": _FORMAT, "version": _VERSION, "table": self.table.to_dict(),
                "classifier": self.classifier.to_dict()}

    @classmethod
    def from_dict(cls, raw: Any) -> "QueryRouter":
        if not isinstance(raw, Mapping) or raw.get("format") != _FORMAT or raw.get("version") != _VERSION:
            raise ConfigError(f"not a saved router (expected format {_FORMAT!r} version {_VERSION}); "
                              "load what QueryRouter.save() wrote")
        return cls(RoutingTable.from_dict(raw.get("table")), NearestCentroidClassifier.from_dict(raw.get("classifier")))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table and the classifier's centroids to one JSON file."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "QueryRouter":
        try:
            with open(path, encoding="utf-8") as fh:
                raw = json.load(fh)
        except ValueError as exc:
            raise ConfigError(f"{os.fspath(path)!r} is not valid JSON ({exc}); load what save() wrote") from None
        return cls.from_dict(raw)


class RoutedSearch:
    """``Memory.search`` with the mode chosen per query by a calibrated router.

    Args:
        memory: the Memory to search (its embedder must be the one the
            classifier was fitted with).
        table: the routing table.
        classifier: a QueryClassifier.

    Example:
        >>> routed = RoutedSearch(memory, table, classifier)
        >>> results, decision = routed.search("When did Ana move?", user_id="ana")
        >>> decision.backend, decision.category
        ('hybrid', 'temporal')
    """

    def __init__(self, memory: "Memory", table: RoutingTable, classifier: QueryClassifier) -> None:
        self.memory = memory
        self.router = QueryRouter(table, classifier)

    @classmethod
    def from_router(cls, memory: "Memory", router: QueryRouter) -> "RoutedSearch":
        return cls(memory, router.table, router.classifier)

    def decide(self, query: str) -> RouteDecision:
        """Route a query without searching."""
        query = check_text(query, where="query", max_chars=self.memory.max_text_chars)
        return self.router.decide(query, self.memory.embed([query])[0])

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 10, filters: dict[str, Any] | None = None,
               as_of: Any = None) -> "tuple[list[SearchResult], RouteDecision]":
        """Classify the query, pick its backend, and search one scope with it.

        Returns:
            (results best first, the RouteDecision).
        """
        decision = self.decide(query)
        results = self.memory.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit,
                                     filters=filters, as_of=as_of, mode=decision.backend)  # type: ignore[arg-type]
        return results, decision
