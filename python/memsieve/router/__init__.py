"""The calibrated router: classify a query into a category, then search with the
backend (dense, keyword or hybrid) that calibration found best for it.

Example:
    >>> from memsieve.router import (CalibrationSample, build_routing_table,
    ...                              NearestCentroidClassifier, RoutedSearch)
    >>> table = build_routing_table(samples, preset="balanced")
    >>> clf = NearestCentroidClassifier(min_margin=0.01).fit(question_vectors, labels)
    >>> results, decision = RoutedSearch(memory, table, clf).search(q, user_id="ana")
"""

from memsieve.router.calibration import (ALL_ZERO_ACCURACY, CHEAPER_WITHIN_TOLERANCE, LOCOMO_CATEGORIES,
                                         LOWEST_COST_PER_ACCURACY, MOST_ACCURATE, NO_CHEAPER_WITHIN_TOLERANCE,
                                         NO_DATA, PRESETS, REASONS, STATIC_DEFAULT, STATIC_TABLE, TOO_FEW_SAMPLES,
                                         CalibrationSample, Cell, Choice, Preset, aggregate_calibration, choose,
                                         select_by_preset)
from memsieve.router.classifier import NearestCentroidClassifier, Prediction, QueryClassifier
from memsieve.router.routed import BACKENDS, QueryRouter, RouteDecision, RoutedSearch
from memsieve.router.table import POOLED, Route, RoutingTable, build_routing_table

__all__ = [
    "ALL_ZERO_ACCURACY", "BACKENDS", "CHEAPER_WITHIN_TOLERANCE", "LOCOMO_CATEGORIES", "LOWEST_COST_PER_ACCURACY",
    "MOST_ACCURATE", "NO_CHEAPER_WITHIN_TOLERANCE", "NO_DATA", "POOLED", "PRESETS", "REASONS", "STATIC_DEFAULT",
    "STATIC_TABLE", "TOO_FEW_SAMPLES",
    "CalibrationSample", "Cell", "Choice", "NearestCentroidClassifier", "Preset", "Prediction", "QueryClassifier",
    "QueryRouter", "RouteDecision", "RoutedSearch", "Route", "RoutingTable",
    "aggregate_calibration", "build_routing_table", "choose", "select_by_preset",
]
