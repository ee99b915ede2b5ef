"""The calibrated router: pure selection rules, the nearest-centroid classifier,
JSON round trips, and one routed search on a real Memory with the real embedder."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError, DtypeError, InvalidVectorError, ShapeError, StateError
from memsieve.router import (ALL_ZERO_ACCURACY, CHEAPER_WITHIN_TOLERANCE, LOWEST_COST_PER_ACCURACY, MOST_ACCURATE,
                             NO_CHEAPER_WITHIN_TOLERANCE, NO_DATA, PRESETS, REASONS, STATIC_TABLE, TOO_FEW_SAMPLES,
                             CalibrationSample, Cell, NearestCentroidClassifier, QueryRouter, RoutedSearch,
                             RoutingTable, aggregate_calibration, build_routing_table, choose, select_by_preset)


def cells(category: str, **spec: tuple[float, float] | tuple[float, float, int]) -> dict[str, dict[str, Cell]]:
    """{category: {backend: Cell}} from backend=(mean_accuracy, mean_cost[, n])."""
    out = {}
    for backend, v in spec.items():
        acc, cost = v[0], v[1]
        n = v[2] if len(v) == 3 else 20  # type: ignore[misc]
        out[backend] = Cell(n, float(cost), float(acc))
    return {category: out}


def samples_for(category: str, backend: str, *, n: int, cost: float, hits: int) -> list[CalibrationSample]:
    return [CalibrationSample(category, backend, cost, 1.0 if i < hits else 0.0) for i in range(n)]


# ---- aggregation -------------------------------------------------------------------

def test_aggregate_means_and_counts():
    s = samples_for("temporal", "dense", n=4, cost=2.0, hits=1) + samples_for("temporal", "keyword", n=2, cost=1.0,
                                                                              hits=2)
    s.append(CalibrationSample("single-hop", "dense", 3.0, 0.5))
    agg = aggregate_calibration(s)
    assert agg["temporal"]["dense"] == Cell(4, 2.0, 0.25)
    assert agg["temporal"]["keyword"] == Cell(2, 1.0, 1.0)
    assert agg["single-hop"] == {"dense": Cell(1, 3.0, 0.5)}


sample_st = st.builds(CalibrationSample, st.sampled_from(["a", "b", "c"]), st.sampled_from(["dense", "keyword", "hybrid"]),
                      st.floats(0, 100, allow_nan=False), st.floats(0, 1, allow_nan=False))


@given(st.lists(sample_st, max_size=60))
@settings(max_examples=100, deadline=None)
def test_aggregate_properties(samples):
    agg = aggregate_calibration(samples)
    assert sum(c.n for cat in agg.values() for c in cat.values()) == len(samples)
    for cat, by_backend in agg.items():
        for backend, cell in by_backend.items():
            mine = [s for s in samples if s.category == cat and s.backend == backend]
            assert min(s.correct for s in mine) - 1e-12 <= cell.mean_accuracy <= max(s.correct for s in mine) + 1e-12
            assert min(s.cost for s in mine) - 1e-9 <= cell.mean_cost <= max(s.cost for s in mine) + 1e-9


@pytest.mark.parametrize("args, match", [
    (("", "dense", 1.0, 1.0), "category must be a non-empty string"),
    (("t", None, 1.0, 1.0), "backend must be a non-empty string"),
    (("t", "dense", -0.5, 1.0), "cost must be >= 0, got -0.5"),
    (("t", "dense", 1.0, 1.5), r"correct must lie in \[0, 1\], got 1.5"),
    (("t", "dense", math.nan, 1.0), "cost must be a finite number"),
    (("t", "dense", 1.0, True), "correct must be a finite number, got True"),
])
def test_sample_validation(args, match):
    with pytest.raises(ConfigError, match=match):
        CalibrationSample(*args)


def test_aggregate_rejects_non_samples():
    with pytest.raises(ConfigError, match="sample 0 is a tuple, not a CalibrationSample"):
        aggregate_calibration([("t", "dense", 1.0, 1.0)])


# ---- option validation ---------------------------------------------------------------

AGG = cells("t", dense=(0.5, 1.0), hybrid=(0.6, 2.0))


@pytest.mark.parametrize("kwargs, match", [
    ({"preset": "cheapest"}, "unknown preset 'cheapest'; use one of minimize-cost, balanced, maximize-accuracy"),
    ({"accuracy_tolerance": -0.01}, r"accuracy_tolerance must be a number in \[0, 1\], got -0.01"),
    ({"accuracy_tolerance": 1.5}, r"accuracy_tolerance must be a number in \[0, 1\], got 1.5"),
    ({"accuracy_tolerance": math.inf}, "accuracy_tolerance must be a number"),
    ({"min_samples_per_cell": 0}, "min_samples_per_cell must be an integer >= 1, got 0"),
    ({"min_samples_per_cell": 2.5}, "min_samples_per_cell must be an integer >= 1, got 2.5"),
    ({"min_samples_per_cell": True}, "min_samples_per_cell must be an integer >= 1, got True"),
    ({"fallback": ["hybrid"]}, "fallback must map category -> backend, got list"),
    ({"fallback": {"t": ""}}, "fallback entries must be non-empty strings"),
])
def test_select_validation(kwargs, match):
    options = {"preset": "balanced", **kwargs}
    preset = options.pop("preset")
    with pytest.raises(ConfigError, match=match):
        select_by_preset("t", AGG, preset, **options)


def test_no_data_and_no_fallback_is_an_error():
    with pytest.raises(ConfigError, match=r"category 'other' has no cell with >= 10 samples and no fallback entry"):
        select_by_preset("other", AGG, "balanced", fallback={})


def test_build_validates_before_aggregating():
    with pytest.raises(ConfigError, match="unknown preset"):
        build_routing_table([], preset="fast")
    with pytest.raises(ConfigError, match="fallback_default must be a backend name"):
        build_routing_table([], preset="balanced", fallback_default="")


# ---- the three presets, every branch ---------------------------------------------------------

def test_minimize_cost_takes_a_cheaper_backend_within_tolerance():
    agg = cells("t", dense=(0.59, 1.0), keyword=(0.585, 0.5), hybrid=(0.60, 3.0))
    c = choose("t", agg, "minimize-cost", accuracy_tolerance=0.02)
    assert (c.backend, c.reason, c.from_calibration) == ("keyword", CHEAPER_WITHIN_TOLERANCE, True)


def test_minimize_cost_keeps_the_best_when_cheaper_ones_trail():
    agg = cells("t", dense=(0.50, 1.0), keyword=(0.55, 0.5), hybrid=(0.60, 3.0))
    c = choose("t", agg, "minimize-cost", accuracy_tolerance=0.02)
    assert (c.backend, c.reason) == ("hybrid", NO_CHEAPER_WITHIN_TOLERANCE)
    assert "trail by more than 0.02" in c.detail


def test_minimize_cost_keeps_the_best_when_it_is_the_cheapest():
    agg = cells("t", dense=(0.70, 1.0), hybrid=(0.69, 3.0))
    c = choose("t", agg, "minimize-cost", accuracy_tolerance=0.05)
    assert (c.backend, c.reason) == ("dense", NO_CHEAPER_WITHIN_TOLERANCE)
    assert "nothing is cheaper" in c.detail


def test_minimize_cost_tolerance_boundary_is_inclusive():
    agg = cells("t", dense=(0.48, 1.0), hybrid=(0.50, 3.0))
    assert select_by_preset("t", agg, "minimize-cost", accuracy_tolerance=0.02) == "dense"
    assert select_by_preset("t", agg, "minimize-cost", accuracy_tolerance=0.0199) == "hybrid"


def test_minimize_cost_among_cheaper_ties_prefers_the_more_accurate():
    agg = cells("t", dense=(0.58, 1.0), keyword=(0.59, 1.0), hybrid=(0.60, 3.0))
    assert select_by_preset("t", agg, "minimize-cost", accuracy_tolerance=0.05) == "keyword"


def test_maximize_accuracy_ties_go_to_the_cheaper_then_the_name():
    agg = cells("t", dense=(0.6, 2.0), keyword=(0.6, 1.0), hybrid=(0.5, 0.1))
    c = choose("t", agg, "maximize-accuracy")
    assert (c.backend, c.reason) == ("keyword", MOST_ACCURATE)
    assert "tied with dense" in c.detail
    agg = cells("t", dense=(0.6, 1.0), keyword=(0.6, 1.0))
    assert select_by_preset("t", agg, "maximize-accuracy") == "dense"


def test_balanced_takes_the_lowest_cost_per_accuracy_and_skips_zero():
    # keyword is cheapest but scored zero: skipped, not a division by zero.
    agg = cells("t", dense=(0.4, 1.0), keyword=(0.0, 0.1), hybrid=(0.6, 3.0))
    c = choose("t", agg, "balanced")
    assert (c.backend, c.reason) == ("dense", LOWEST_COST_PER_ACCURACY)
    assert "skipped zero-accuracy keyword" in c.detail


def test_balanced_ratio_tie_goes_to_the_more_accurate():
    agg = cells("t", dense=(0.5, 1.0), hybrid=(1.0, 2.0))
    assert select_by_preset("t", agg, "balanced") == "hybrid"


def test_balanced_all_zero_accuracy_takes_the_cheapest():
    agg = cells("t", dense=(0.0, 1.0), keyword=(0.0, 0.5), hybrid=(0.0, 3.0))
    c = choose("t", agg, "balanced")
    assert (c.backend, c.reason, c.from_calibration) == ("keyword", ALL_ZERO_ACCURACY, True)


def test_cells_below_the_floor_do_not_count():
    # hybrid looks best but has 5 samples: with a floor of 10 it is ignored.
    agg = cells("t", dense=(0.5, 1.0, 10), hybrid=(0.9, 1.0, 5))
    assert select_by_preset("t", agg, "maximize-accuracy", min_samples_per_cell=10) == "dense"
    assert select_by_preset("t", agg, "maximize-accuracy", min_samples_per_cell=5) == "hybrid"


def test_too_few_samples_and_no_data_fall_back():
    agg = cells("temporal", dense=(0.5, 1.0, 9), hybrid=(0.9, 1.0, 3))
    c = choose("temporal", agg, "balanced", min_samples_per_cell=10, fallback={"temporal": "keyword"})
    assert (c.backend, c.from_calibration, c.reason) == ("keyword", False, TOO_FEW_SAMPLES)
    assert "dense=9" in c.detail and "hybrid=3" in c.detail
    c = choose("multi-hop", agg, "balanced")
    assert (c.backend, c.from_calibration, c.reason) == (STATIC_TABLE["multi-hop"], False, NO_DATA)


def test_every_reason_is_reachable():
    reached = set()
    cases = [
        ("minimize-cost", cells("t", dense=(0.59, 1.0), hybrid=(0.60, 3.0))),
        ("minimize-cost", cells("t", dense=(0.40, 1.0), hybrid=(0.60, 3.0))),
        ("balanced", cells("t", dense=(0.4, 1.0), hybrid=(0.6, 3.0))),
        ("balanced", cells("t", dense=(0.0, 1.0), hybrid=(0.0, 3.0))),
        ("maximize-accuracy", cells("t", dense=(0.4, 1.0), hybrid=(0.6, 3.0))),
        ("maximize-accuracy", cells("t", dense=(0.4, 1.0, 2))),
        ("maximize-accuracy", {}),
    ]
    for preset, agg in cases:
        reached.add(choose("t", agg, preset, fallback={"t": "hybrid"}).reason)
    assert reached == set(REASONS)


# ---- properties over random calibrations ------------------------------------------------

cell_st = st.builds(Cell, st.integers(1, 40), st.floats(0, 10, allow_nan=False),
                    st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.52, 0.75, 1.0]) | st.floats(0, 1, allow_nan=False))
agg_st = st.dictionaries(st.sampled_from(["dense", "keyword", "hybrid"]), cell_st, min_size=1).map(lambda d: {"t": d})


@given(agg_st, st.integers(1, 30), st.floats(0, 1, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_picks_obey_their_rules(agg, floor, tol):
    eligible = {b: c for b, c in agg["t"].items() if c.n >= floor}
    picks = {p: choose("t", agg, p, min_samples_per_cell=floor, accuracy_tolerance=tol, fallback={"t": "hybrid"})
             for p in PRESETS}
    if not eligible:
        assert all(c.backend == "hybrid" and not c.from_calibration for c in picks.values())
        return
    assert all(c.from_calibration and c.backend in eligible for c in picks.values())
    best = max(c.mean_accuracy for c in eligible.values())
    top = eligible[picks["maximize-accuracy"].backend]
    # Accuracies within 1e-12 count as tied (the rule's documented float slack).
    assert top.mean_accuracy >= best - 1e-12
    assert top.mean_cost == min(c.mean_cost for c in eligible.values() if c.mean_accuracy >= best - 1e-12)
    cheap = eligible[picks["minimize-cost"].backend]
    assert cheap.mean_accuracy >= best - tol - 1e-9
    assert cheap.mean_cost <= top.mean_cost
    if picks["minimize-cost"].reason == CHEAPER_WITHIN_TOLERANCE:
        assert cheap.mean_cost < top.mean_cost
    else:
        # Nothing strictly cheaper than the most accurate backend is within tolerance.
        assert not any(c.mean_cost < top.mean_cost and c.mean_accuracy >= best - tol + 1e-9
                       for c in eligible.values())
    bal = eligible[picks["balanced"].backend]
    scoring = [c for c in eligible.values() if c.mean_accuracy > 0]
    if scoring:
        assert bal.mean_accuracy > 0
        assert bal.mean_cost / bal.mean_accuracy <= min(c.mean_cost / c.mean_accuracy for c in scoring) + 1e-12
    else:
        assert picks["balanced"].reason == ALL_ZERO_ACCURACY
        assert bal.mean_cost == min(c.mean_cost for c in eligible.values())


@given(agg_st)
@settings(max_examples=100, deadline=None)
def test_minimize_cost_extremes(agg):
    # Zero tolerance is maximize-accuracy; full tolerance is the cheapest backend outright.
    assert select_by_preset("t", agg, "minimize-cost", min_samples_per_cell=1, accuracy_tolerance=0.0) == \
        select_by_preset("t", agg, "maximize-accuracy", min_samples_per_cell=1)
    pick = select_by_preset("t", agg, "minimize-cost", min_samples_per_cell=1, accuracy_tolerance=1.0)
    assert agg["t"][pick].mean_cost == min(c.mean_cost for c in agg["t"].values())


# ---- the table ---------------------------------------------------------------------------

def calibration() -> list[CalibrationSample]:
    return (samples_for("temporal", "dense", n=20, cost=1.0, hits=4)
            + samples_for("temporal", "keyword", n=20, cost=2.0, hits=12)
            + samples_for("temporal", "hybrid", n=20, cost=3.0, hits=12)
            + samples_for("single-hop", "dense", n=20, cost=1.0, hits=15)
            + samples_for("single-hop", "hybrid", n=20, cost=3.0, hits=16)
            + samples_for("open-domain", "dense", n=3, cost=1.0, hits=3))


def test_build_routing_table_records_where_each_pick_came_from():
    table = build_routing_table(calibration(), preset="minimize-cost", accuracy_tolerance=0.05)
    assert table.mapping() == {"adversarial": "hybrid", "multi-hop": "hybrid", "open-domain": "hybrid",
                               "single-hop": "dense", "temporal": "keyword"}
    assert table.route("single-hop").reason == CHEAPER_WITHIN_TOLERANCE
    assert table.route("temporal").reason == NO_CHEAPER_WITHIN_TOLERANCE
    assert (table.route("open-domain").reason, table.route("open-domain").from_calibration) == (TOO_FEW_SAMPLES, False)
    assert table.route("open-domain").cells == (("dense", Cell(3, 1.0, 1.0)),)
    assert (table.route("multi-hop").reason, table.route("multi-hop").from_calibration) == (NO_DATA, False)
    # Unknown categories take the pooled default: dense 19/40 at cost 1 vs hybrid 28/40 at 3 -> hybrid.
    assert table.default.category == "*" and table.default.from_calibration
    assert table.backend_for("no-such-category") == table.backend_for(None) == table.default.backend == "hybrid"
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.preset = "balanced"  # type: ignore[misc]


def test_table_json_round_trip_and_bad_json():
    for preset in PRESETS:
        table = build_routing_table(calibration(), preset=preset, min_samples_per_cell=3)
        again = RoutingTable.from_json(table.to_json())
        assert again == table
    raw = json.loads(table.to_json())
    with pytest.raises(ConfigError, match="routing table is not valid JSON"):
        RoutingTable.from_json("{")
    with pytest.raises(ConfigError, match="not a routing table"):
        RoutingTable.from_dict({"routes": []})
    with pytest.raises(ConfigError, match="version 9 is not supported"):
        RoutingTable.from_dict({**raw, "version": 9})
    bad = json.loads(table.to_json())
    bad["routes"][0]["reason"] = "felt right"
    with pytest.raises(ConfigError, match="unknown reason 'felt right'"):
        RoutingTable.from_dict(bad)
    with pytest.raises(ConfigError, match="unknown preset"):
        RoutingTable.from_dict({**raw, "preset": "fast"})


# ---- the classifier ----------------------------------------------------------------------

def clusters(rng: np.random.Generator, per: int = 12, dim: int = 16, spread: float = 0.15):
    """Three categories around the first three axes."""
    rows, labels = [], []
    for k, name in enumerate(["temporal", "multi-hop", "single-hop"]):
        centre = np.zeros(dim)
        centre[k] = 1.0
        rows.append(centre + spread * rng.standard_normal((per, dim)))
        labels += [name] * per
    return np.ascontiguousarray(np.vstack(rows), dtype=np.float32), labels


def test_classifier_separates_clusters_and_explains_its_margin():
    rng = np.random.default_rng(1)
    x, labels = clusters(rng)
    clf = NearestCentroidClassifier(min_margin=0.3).fit(x, labels)
    assert clf.categories == ("multi-hop", "single-hop", "temporal") and clf.counts == (12, 12, 12)
    assert np.allclose(np.linalg.norm(clf.centroids, axis=1), 1.0, atol=1e-5)
    test, truth = clusters(rng)
    preds = clf.predict_many(test)
    assert [p.category for p in preds] == truth
    for p, row in zip(preds, test):
        sims = clf.centroids @ (row / np.linalg.norm(row))
        order = np.argsort(-sims)
        assert p.score == pytest.approx(float(sims[order[0]]), abs=1e-5)
        assert p.margin == pytest.approx(float(sims[order[0]] - sims[order[1]]), abs=1e-5)
        assert p.runner_up == clf.categories[order[1]]
        assert p.confident == (p.margin >= 0.3)
    # Halfway between two centroids: a near-zero margin, not confident.
    mid = (clf.centroids[0] + clf.centroids[2]).astype(np.float32)
    p = clf.predict(mid)
    assert p.margin < 1e-5 and not p.confident
    with pytest.raises(ValueError, match="read-only"):
        clf.centroids[0, 0] = 2.0


@given(st.integers(0, 2**32 - 1), st.floats(0.01, 100))
@settings(max_examples=50, deadline=None)
def test_classifier_picks_the_nearest_centroid_at_any_scale(seed, scale):
    rng = np.random.default_rng(seed)
    x, labels = clusters(rng, per=4, spread=0.5)
    clf = NearestCentroidClassifier().fit(x, labels)
    q = rng.standard_normal(16).astype(np.float32)
    p = clf.predict(q)
    assert p.category == clf.categories[int(np.argmax(clf.centroids @ q))]
    assert p.margin >= 0 and p.confident
    assert clf.predict((q * scale).astype(np.float32)).category == p.category


def test_classifier_json_round_trip_is_exact():
    x, labels = clusters(np.random.default_rng(2))
    clf = NearestCentroidClassifier(min_margin=0.05).fit(x, labels)
    again = NearestCentroidClassifier.from_dict(json.loads(json.dumps(clf.to_dict())))
    assert again.categories == clf.categories and again.counts == clf.counts and again.min_margin == 0.05
    assert np.array_equal(again.centroids, clf.centroids)
    assert again.predict_many(x) == clf.predict_many(x)


def test_classifier_bad_input():
    x, labels = clusters(np.random.default_rng(3))
    with pytest.raises(StateError, match="not fitted"):
        NearestCentroidClassifier().predict(x[0])
    with pytest.raises(DtypeError, match=r"expected float32 embeddings \(n, d\), got float64"):
        NearestCentroidClassifier().fit(x.astype(np.float64), labels)
    with pytest.raises(ShapeError, match="got 36 embeddings but 35 labels"):
        NearestCentroidClassifier().fit(x, labels[:-1])
    with pytest.raises(ConfigError, match="need at least two categories"):
        NearestCentroidClassifier().fit(x, ["one"] * len(labels))
    with pytest.raises(ConfigError, match="cancel out"):
        NearestCentroidClassifier().fit(np.vstack([x[:1], -x[:1], x[13:14]]), ["a", "a", "b"])
    bad = x.copy()
    bad[4, 2] = np.nan
    with pytest.raises(InvalidVectorError, match=r"rows \[4\] hold NaN"):
        NearestCentroidClassifier().fit(bad, labels)
    with pytest.raises(ConfigError, match=r"min_margin must be a number in \[0, 2\]"):
        NearestCentroidClassifier(min_margin=-1)
    clf = NearestCentroidClassifier().fit(x, labels)
    with pytest.raises(ShapeError, match=r"shape \(n, 16\).*got \(1, 8\)"):
        clf.predict(np.ones(8, np.float32))
    with pytest.raises(ConfigError, match="not a nearest-centroid classifier"):
        NearestCentroidClassifier.from_dict({"format": "other"})


# ---- routed search on a real Memory ---------------------------------------------------------------

FACTS = [
    "Ana: I moved to Lisbon in May 2021.",
    "Ana: My sister Rita is a marine biologist.",
    "Ana: We adopted a grey cat called Pixel last winter.",
    "Ana: I started learning the cello in 2019.",
    "Ana: My favourite food is grilled sardines.",
    "Ana: Rita works at the aquarium in Porto.",
]
QUESTIONS = {
    "temporal": ["When did Ana move to Lisbon?", "When did Ana start the cello?", "When was the cat adopted?",
                 "When did Rita start her job?"],
    "single-hop": ["What is Ana's favourite food?", "What does Rita do for a living?", "What is the cat called?",
                   "What instrument does Ana play?"],
}


def test_routed_search_end_to_end(embedder, tmp_path):
    mem = Memory(":memory:", embedder=embedder, gate=GateConfig(profile="none"))
    for i, fact in enumerate(FACTS):
        mem.add(fact, user_id="ana", source=f"D1:{i + 1}")
    texts = [q for qs in QUESTIONS.values() for q in qs]
    labels = [c for c, qs in QUESTIONS.items() for _ in qs]
    clf = NearestCentroidClassifier(min_margin=0.0).fit(mem.embed(texts), labels)
    samples = (samples_for("temporal", "keyword", n=10, cost=2.0, hits=9)
               + samples_for("temporal", "dense", n=10, cost=1.0, hits=5)
               + samples_for("single-hop", "dense", n=10, cost=1.0, hits=9)
               + samples_for("single-hop", "hybrid", n=10, cost=3.0, hits=9))
    table = build_routing_table(samples, preset="maximize-accuracy", fallback={})
    assert table.mapping() == {"temporal": "keyword", "single-hop": "dense"}
    routed = RoutedSearch(mem, table, clf)

    results, decision = routed.search("When did Ana get the cello?", user_id="ana", limit=3)
    assert (decision.category, decision.backend, decision.from_calibration) == ("temporal", "keyword", True)
    assert decision.margin > 0 and decision.reason == MOST_ACCURATE
    direct = mem.search("When did Ana get the cello?", user_id="ana", limit=3, mode="keyword")
    assert [r.id for r in results] == [r.id for r in direct] and "cello" in results[0].text

    results, decision = routed.search("What pet does Ana have?", user_id="ana", limit=2)
    assert (decision.category, decision.backend) == ("single-hop", "dense")
    assert [r.id for r in results] == [r.id for r in mem.search("What pet does Ana have?", user_id="ana", limit=2,
                                                                mode="dense")]

    # Saved and loaded, the router decides the same way.
    path = tmp_path / "router.json"
    routed.router.save(path)
    loaded = RoutedSearch.from_router(mem, QueryRouter.load(path))
    for q in ["When did Ana get the cello?", "What pet does Ana have?"]:
        assert loaded.decide(q) == routed.decide(q)

    # Memory.search(mode="auto") takes the same route.
    mem.router = routed.router
    auto = mem.search("When did Ana get the cello?", user_id="ana", limit=3, mode="auto")
    assert [r.id for r in auto] == [r.id for r in direct]
    mem.router = None
    with pytest.raises(ConfigError, match="needs a router"):
        mem.search("When did Ana get the cello?", user_id="ana", mode="auto")

    # An unsure classifier takes the pooled default route: keyword and hybrid tie at 0.9, keyword is cheaper.
    unsure = RoutedSearch(mem, table, NearestCentroidClassifier(min_margin=2.0).fit(mem.embed(texts), labels))
    _, decision = unsure.search("When did Ana get the cello?", user_id="ana")
    assert decision.category is None and decision.predicted == "temporal"
    assert decision.backend == table.default.backend == "keyword"

    # A table that names a backend Memory.search does not have is refused up front.
    odd = build_routing_table(samples_for("temporal", "bm25", n=10, cost=1.0, hits=9), preset="balanced",
                              fallback={})
    with pytest.raises(ConfigError, match=r"names backends \['bm25'\]"):
        RoutedSearch(mem, odd, clf)
    mem.close()
