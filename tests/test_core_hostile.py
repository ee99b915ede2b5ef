"""Hostile scalars at every argument of every _core binding (hypothesis).

Each call gets valid arguments except for one or two, which receive an
arbitrary int (huge and negative included), float (nan, inf, huge), bool,
None or a stray object. The call must return a valid result or raise a
MemsieveError; nothing else is allowed, and a failed call must leave a scope
unchanged.

The calls run in this process on purpose: an abort (a failed allocation, a
Rust panic across the FFI boundary) kills pytest, which fails the run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import memsieve
from memsieve import _core
from memsieve.gate.config import GateConfig
from memsieve.gate.scope_gate import new_threshold

D = 8


def unit_rows(n: int, d: int = D, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


M = unit_rows(6)
Q = unit_rows(1, seed=1)[0]
QS = unit_rows(3, seed=2)
TOP = np.array([0.9, 0.5, 0.1], np.float32)
PARAMS = new_threshold(GateConfig()).params
STATE_BYTES = new_threshold(GateConfig()).to_bytes()

BOUNDARY_INTS = [0, 1, -1, 2, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1, 10**12, 10**30, 10**400]
STRAYS = [np.int64(3), np.uint64(2**64 - 1), np.float32(0.5), np.bool_(True), "3", b"x", (1.0, 2.0), [1], 1 + 2j]

hostile = st.one_of(
    st.integers(),
    st.sampled_from(BOUNDARY_INTS),
    st.floats(),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324]),
    st.booleans(),
    st.none(),
    st.sampled_from(STRAYS),
)


def scope() -> _core.ScopeState:
    s = _core.ScopeState(D)
    s.add_many(np.arange(5, dtype=np.int64), M[:5])
    return s


def keywords() -> _core.KeywordIndex:
    k = _core.KeywordIndex()
    k.add_many(np.arange(3, dtype=np.int64), ["coffee in Lisbon", "tea in Porto", "rain on 3 May"])
    return k


def fitted_pca() -> _core.Pca:
    return _core.Pca(2).fit(M)


def is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def slow_size(v: Any, width: int) -> bool:
    """A valid size whose output is merely large: it would only cost time here."""
    return is_int(v) and 10_000 < int(v) and int(v) * width <= 2**28


@dataclass(frozen=True)
class Case:
    """One binding: its valid arguments, how to call it, and what its result must be."""

    name: str
    call: Callable[[dict[str, Any]], Any]
    args: dict[str, Any]
    check: Callable[[Any, dict[str, Any]], None] = lambda r, a: None
    slow: Callable[[dict[str, Any]], bool] = lambda a: False
    flags: tuple[str, ...] = ()  # the only arguments a bool is valid for
    # str arguments of the keyword bindings: rust/bindings/keyword.rs takes them as
    # PyString, so a non-str raises PyO3's bare TypeError there (reported to its owner).
    texts: tuple[str, ...] = ()


def finite_or_inf(x: Any) -> None:
    assert not math.isnan(float(x)), x


def score_result(r: Any, a: dict[str, Any]) -> None:
    assert isinstance(r, _core.ScoreResult)
    assert not math.isnan(r.novelty)
    assert len(r.top_ids) == len(r.top_cos) <= 5


def route_result(r: Any, a: dict[str, Any]) -> None:
    assert r in ("ADD", "BAND", "NOOP")


def array_of(shape: Callable[[dict[str, Any]], tuple[int, ...]]) -> Callable[[Any, dict[str, Any]], None]:
    def check(r: Any, a: dict[str, Any]) -> None:
        assert isinstance(r, np.ndarray) and r.shape == shape(a), (r.shape, shape(a))

    return check


def knn_tuple(r: Any, a: dict[str, Any]) -> None:
    novelty, row, _ = r
    assert not math.isnan(novelty) and 0 <= row < len(M)


def mutate(method: str, *args: Any, **kwargs: Any) -> Callable[[dict[str, Any]], Any]:
    """Call a method on a fresh scope and check that a refused call changed nothing."""

    def call(a: dict[str, Any]) -> Any:
        s = scope()
        before = (s.ids().tolist(), s.vectors().tobytes())
        try:
            return getattr(s, method)(*[a[p] for p in args], **{k: a[v] for k, v in kwargs.items()})
        except memsieve.MemsieveError:
            assert (s.ids().tolist(), s.vectors().tobytes()) == before
            raise

    return call


CASES = [
    Case("similarities", lambda a: _core.similarities(a["matrix"], a["query"]), {"matrix": M, "query": Q},
         array_of(lambda a: (len(M),))),
    Case("similarities_batch", lambda a: _core.similarities_batch(a["matrix"], a["queries"]),
         {"matrix": M, "queries": QS}, array_of(lambda a: (len(QS), len(M)))),
    Case("kappa_banerjee", lambda a: _core.kappa_banerjee(a["matrix"], clip=a["clip"]),
         {"matrix": M, "clip": (1e-3, 50.0)}, lambda r, a: finite_or_inf(r)),
    Case("kappa_from_spacing", lambda a: _core.kappa_from_spacing(a["m"], c=a["c"], max_kappa=a["max_kappa"]),
         {"m": 0.5, "c": 4.0, "max_kappa": 1e4}, lambda r, a: finite_or_inf(r)),
    Case("sample_vmf", lambda a: _core.sample_vmf(a["mu"], a["kappa"], a["n"], seed=a["seed"]),
         {"mu": Q, "kappa": 5.0, "n": 3, "seed": 0}, array_of(lambda a: (int(a["n"]), D)),
         slow=lambda a: slow_size(a["n"], D)),
    Case("novelty_sage", lambda a: _core.novelty_sage(a["matrix"], a["query"], a["kappa"]),
         {"matrix": M, "query": Q, "kappa": 10.0}, lambda r, a: finite_or_inf(r)),
    Case("novelty_sage_batch", lambda a: _core.novelty_sage_batch(a["matrix"], a["queries"], a["kappa"]),
         {"matrix": M, "queries": QS, "kappa": 10.0}, array_of(lambda a: (len(QS),))),
    Case("novelty_knn", lambda a: _core.novelty_knn(a["matrix"], a["query"], a["kappa"], a["k"]),
         {"matrix": M, "query": Q, "kappa": 10.0, "k": 5}, knn_tuple),
    Case("novelty_knn_batch", lambda a: _core.novelty_knn_batch(a["matrix"], a["queries"], a["kappa"], a["k"]),
         {"matrix": M, "queries": QS, "kappa": 10.0, "k": 5}, lambda r, a: [array_of(lambda a: (len(QS),))(x, a) for x in r]),
    Case("novelty_from_topk", lambda a: _core.novelty_from_topk(a["top_sims"], a["kappa"]),
         {"top_sims": TOP, "kappa": 10.0}, lambda r, a: finite_or_inf(r)),
    Case("novelty_maxcos", lambda a: _core.novelty_maxcos(a["matrix"], a["query"]), {"matrix": M, "query": Q},
         knn_tuple),
    Case("novelty_maxcos_batch", lambda a: _core.novelty_maxcos_batch(a["matrix"], a["queries"]),
         {"matrix": M, "queries": QS}),
    Case("random_projection",
         lambda a: _core.random_projection(a["x"], a["out_dim"], seed=a["seed"], normalize=a["normalize"]),
         {"x": M, "out_dim": 4, "seed": 0, "normalize": True}, array_of(lambda a: (len(M), int(a["out_dim"]))),
         slow=lambda a: slow_size(a["out_dim"], max(M.shape)), flags=("normalize",)),
    Case("route", lambda a: _core.route(a["novelty"], a["tau"], a["delta"]),
         {"novelty": 0.3, "tau": 0.2, "delta": 0.05}, route_result),
    Case("sage_tau_star", lambda a: _core.sage_tau_star(a["rho"], tau0=a["tau0"], tau_min=a["tau_min"], lam=a["lam"]),
         {"rho": 1.0, "tau0": 0.5, "tau_min": 0.05, "lam": 2.0}),
    Case("sage_ema", lambda a: _core.sage_ema(a["prev"], a["tau_star"], alpha=a["alpha"]),
         {"prev": 0.3, "tau_star": 0.2, "alpha": 0.9}),
    Case("sage_density", lambda a: _core.sage_density(a["matrix"], n_components=a["n_components"]),
         {"matrix": M, "n_components": 16}, lambda r, a: finite_or_inf(r)),
    Case("pairs_above", lambda a: _core.pairs_above(a["matrix"], a["min_sim"], max_pairs=a["max_pairs"]),
         {"matrix": M, "min_sim": 0.5, "max_pairs": 1000},
         lambda r, a: None if len(r[0]) == len(r[1]) == len(r[2]) <= a["max_pairs"] else pytest.fail(str(r))),
    Case("_read_floor", lambda a: _core._read_floor(a["matrix"], parallel=a["parallel"]),
         {"matrix": M, "parallel": False}, lambda r, a: finite_or_inf(r), flags=("parallel",)),
    Case("ThresholdState", lambda a: _core.ThresholdState(**a), dict(PARAMS), lambda r, a: finite_or_inf(r.tau)),
    Case("ThresholdState.on_add", lambda a: _core.ThresholdState(**PARAMS).on_add(a["v"]), {"v": 0.3}),
    Case("ThresholdState.on_remove", lambda a: _core.ThresholdState(**PARAMS).on_remove(a["v"]), {"v": 0.3}),
    Case("ThresholdState.from_bytes", lambda a: _core.ThresholdState.from_bytes(a["data"]), {"data": STATE_BYTES}),
    Case("ScopeState", lambda a: _core.ScopeState(a["dim"]), {"dim": D}),
    Case("ScopeState.add", mutate("add", "id", "vector"), {"id": 99, "vector": Q}),
    Case("ScopeState.add_many", mutate("add_many", "ids", "vectors"),
         {"ids": np.array([7, 8, 9], np.int64), "vectors": QS}),
    Case("ScopeState.remove", mutate("remove", "id"), {"id": 2}),
    Case("ScopeState.contains", lambda a: scope().contains(a["id"]), {"id": 2},
         lambda r, a: None if r is (a["id"] in range(5)) else pytest.fail(f"contains({a['id']!r}) = {r}")),
    Case("ScopeState.score", lambda a: scope().score(a["query"], k=a["k"], kappa=a["kappa"]),
         {"query": Q, "k": 5, "kappa": 20.0}, score_result),
    Case("ScopeState.score_maxcos", lambda a: scope().score_maxcos(a["query"], k=a["k"]), {"query": Q, "k": 5},
         score_result),
    Case("ScopeState.score_sage", lambda a: scope().score_sage(a["query"], kappa=a["kappa"], k=a["k"]),
         {"query": Q, "kappa": 20.0, "k": 5}, score_result),
    Case("ScopeState.nearest", lambda a: scope().nearest(a["query"], a["k"]), {"query": Q, "k": 5},
         lambda r, a: None if len(r[0]) == len(r[1]) <= 5 else pytest.fail(str(r))),
    Case("ScopeState.kappa_banerjee", lambda a: scope().kappa_banerjee(clip=a["clip"]), {"clip": (1e-3, 50.0)},
         lambda r, a: finite_or_inf(r)),
    Case("KeywordIndex.add", lambda a: keywords().add(a["id"], a["text"]), {"id": 9, "text": "snow"},
         texts=("text",)),
    Case("KeywordIndex.add_many", lambda a: _core.KeywordIndex().add_many(a["ids"], a["texts"]),
         {"ids": np.array([1, 2], np.int64), "texts": ["a b", "c"]}),
    Case("KeywordIndex.remove", lambda a: keywords().remove(a["id"]), {"id": 1}),
    Case("KeywordIndex.replace", lambda a: keywords().replace(a["id"], a["text"]), {"id": 1, "text": "snow"},
         texts=("text",)),
    Case("KeywordIndex.contains", lambda a: keywords().contains(a["id"]), {"id": 1}),
    Case("KeywordIndex.tokens_of", lambda a: keywords().tokens_of(a["id"]), {"id": 1}),
    Case("KeywordIndex.search", lambda a: keywords().search(a["query"], a["k"], allow=a["allow"]),
         {"query": "coffee", "k": 3, "allow": None}, lambda r, a: None if len(r[0]) <= 3 else pytest.fail(str(r)),
         texts=("query",)),
    Case("KeywordIndex.info_novelty",
         lambda a: keywords().info_novelty(a["text"], a["ids"], w_number=a["w_number"], w_name=a["w_name"],
                                          w_word=a["w_word"], idf_prior=a["idf_prior"],
                                          prior_weight=a["prior_weight"]),
         {"text": "coffee in Porto", "ids": [0, 1], "w_number": 2.0, "w_name": 1.5, "w_word": 1.0, "idf_prior": 3.0,
          "prior_weight": 10.0}, texts=("text",)),
    Case("KeywordIndex.info_novelty_netted",
         lambda a: keywords().info_novelty_netted(a["text"], a["ids"], a["nearest"], rarity=a["rarity"],
                                                  w_number=a["w_number"], w_name=a["w_name"], w_word=a["w_word"],
                                                  idf_prior=a["idf_prior"], prior_weight=a["prior_weight"]),
         {"text": "coffee and cake in Porto", "ids": [0, 1], "nearest": 1, "rarity": {"coffee": 0.5, "cake": 1.0},
          "w_number": 2.0, "w_name": 1.5, "w_word": 1.0, "idf_prior": 3.0, "prior_weight": 10.0}, texts=("text",)),
    Case("net_information",
         lambda a: _core.net_information(a["information"], a["text_terms"], a["memory_terms"], n_docs=a["n_docs"],
                                         idf=a["idf"], rarity=a["rarity"], w_word=a["w_word"]),
         {"information": 0.5, "text_terms": [("cake", "cake", "word"), ("porto", "Porto", "name")],
          "memory_terms": ["coffee", "porto"], "n_docs": 3, "idf": {"cake": 1.0, "porto": 0.5, "coffee": 0.7},
          "rarity": {"cake": 1.0}, "w_word": 1.0}),
    Case("Pca", lambda a: _core.Pca(a["n_components"]).fit(M), {"n_components": 2}),
    Case("Pca.fit", lambda a: _core.Pca(2).fit(a["x"]), {"x": M}),
    Case("Pca.transform", lambda a: fitted_pca().transform(a["x"], normalize=a["normalize"]),
         {"x": M, "normalize": True}, array_of(lambda a: (len(M), 2)), flags=("normalize",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_hostile_scalars_give_a_result_or_a_memsieve_error(case: Case, data: st.DataObject) -> None:
    names = sorted(set(case.args) - set(case.texts))
    targets = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True), label="targets")
    args = dict(case.args)
    for name in targets:
        args[name] = data.draw(hostile, label=name)
    assume(not case.slow(args))
    # True == 1 in Python, but a bool passed for a number is a mistake to report.
    bools = [n for n in targets if isinstance(args[n], (bool, np.bool_)) and n not in case.flags]
    try:
        result = case.call(args)
    except memsieve.MemsieveError as exc:
        msg = str(exc)
        assert msg[:1].islower(), msg
        return
    assert not bools, f"{case.name} accepted a bool for {bools}"
    case.check(result, args)


# Bindings whose only argument is a str (see Case.texts): nothing to throw here yet.
TEXT_ONLY = {"tokenize", "tokenize_kinds", "KeywordIndex.df", "KeywordIndex.idf"}


def test_every_binding_is_covered() -> None:
    """A new _core function or method must get a Case here."""
    covered = {c.name.split(".")[0] for c in CASES} | {c.name for c in CASES} | TEXT_ONLY
    public = {n for n in _core.__all__ if callable(getattr(_core, n)) and not n.endswith("Error")}
    public -= {"F32", "Route", "ScoreResult", "_parallel_config", "_isa"}  # aliases; a result type; no arguments
    assert public <= covered, sorted(public - covered)
    methods = {f"ScopeState.{m}" for m in ("add", "add_many", "remove", "contains", "score", "score_maxcos",
                                          "score_sage", "nearest", "kappa_banerjee")}
    methods |= {f"KeywordIndex.{m}" for m in ("add", "add_many", "remove", "replace", "contains", "df", "idf",
                                              "tokens_of", "search", "info_novelty", "info_novelty_netted")}
    assert methods <= covered, sorted(methods - covered)


@pytest.mark.parametrize("limit", [10**12, 2**62, 2**63 - 1])
def test_a_limit_far_above_the_scope_returns_the_scope(limit: int) -> None:
    """search(limit=10**12) aborted: the top-k buffer reserved `limit` entries."""
    s = scope()
    ids, cos = s.nearest(Q, limit)
    assert sorted(ids.tolist()) == list(range(5)) and len(cos) == 5
    assert len(s.score(Q, kappa=20.0, k=limit).top_ids) == 5
    novelty, row, _ = _core.novelty_knn(M, Q, 10.0, limit)
    assert 0 <= row < len(M) and novelty == _core.novelty_knn(M, Q, 10.0, len(M))[0]
    assert [len(x) for x in _core.novelty_knn_batch(M, QS, 10.0, limit)] == [3, 3, 3]


@pytest.mark.parametrize("name", ["k", "n", "dim", "n_components", "id", "out_dim"])
def test_bool_is_not_an_integer(name: str) -> None:
    calls = {
        "k": lambda v: _core.novelty_knn(M, Q, 10.0, v),
        "n": lambda v: _core.sample_vmf(Q, 5.0, v, seed=0),
        "dim": lambda v: _core.ScopeState(v),
        "n_components": lambda v: _core.sage_density(M, n_components=v),
        "id": lambda v: scope().contains(v),
        "out_dim": lambda v: _core.random_projection(M, v, seed=0),
    }
    for v in (True, False, np.bool_(True)):
        with pytest.raises(memsieve.DtypeError, match=f"{name} must be an integer.*bool"):
            calls[name](v)


def test_out_of_range_ints_are_config_errors() -> None:
    for v in (2**63, 2**64, -(2**63) - 1, 10**400):
        with pytest.raises(memsieve.ConfigError, match="k must be >= 1"):
            _core.novelty_knn(M, Q, 10.0, v)
        with pytest.raises(memsieve.ConfigError, match="id = .* out of range"):
            scope().remove(v)
    with pytest.raises(memsieve.ConfigError, match="int of 1329 bits"):
        _core.ScopeState(10**400)
    with pytest.raises(memsieve.ConfigError, match="too large for a float"):
        _core.route(10**400, 0.2, 0.1)


def test_non_numbers_for_floats_are_type_errors() -> None:
    for v in ("x", None, b"1", [0.5], 1j):
        with pytest.raises(memsieve.DtypeError, match="kappa must be a number") as info:
            _core.novelty_sage(M, Q, v)
        assert isinstance(info.value, TypeError)
    with pytest.raises(memsieve.DtypeError, match="clip must be a \\(lo, hi\\) tuple"):
        _core.kappa_banerjee(M, clip=5.0)
    with pytest.raises(memsieve.DtypeError, match="normalize must be True or False"):
        _core.random_projection(M, 4, seed=0, normalize=1)


def test_seeds_wrap_modulo_2_64() -> None:
    """Any int is a seed: values that agree modulo 2^64 draw the same sample."""
    a = _core.sample_vmf(Q, 5.0, 2, seed=-1)
    assert np.array_equal(a, _core.sample_vmf(Q, 5.0, 2, seed=2**64 - 1))
    assert np.array_equal(a, _core.sample_vmf(Q, 5.0, 2, seed=2**200 - 1))
    assert not np.array_equal(a, _core.sample_vmf(Q, 5.0, 2, seed=0))
    with pytest.raises(memsieve.DtypeError, match="seed must be an integer"):
        _core.sample_vmf(Q, 5.0, 2, seed=1.0)


def test_sampling_at_a_huge_kappa_is_refused_not_a_hang() -> None:
    with pytest.raises(memsieve.ConfigError, match="kappa must lie in \\[0, 1e12\\]"):
        _core.sample_vmf(Q, 1e20, 2, seed=0)
