"""Properties of routing and of the scope state (hypothesis)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import _core

finite = st.floats(min_value=-10, max_value=10, allow_nan=False)
deltas = st.floats(min_value=0, max_value=5, allow_nan=False)
RANK = {"NOOP": 0, "BAND": 1, "ADD": 2}


def unit_rows(seed, n, d):
    x = np.random.default_rng(seed).standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


# (novelty, tau, delta, route), worked out by hand from the documented rule:
# the band is [tau, tau + delta), closed below and open above.
STATED = [
    (0.50, 0.20, 0.10, "ADD"),
    (0.25, 0.20, 0.10, "BAND"),
    (0.20, 0.20, 0.10, "BAND"),  # tau itself is in the band
    (0.10, 0.20, 0.10, "NOOP"),
    (0.30, 0.20, 0.10, "BAND"),  # 0.2 + 0.1 is 0.30000000000000004 in binary, above 0.3
    (0.40, 0.25, 0.15, "ADD"),  # 0.25 + 0.15 is exactly 0.4: the top edge belongs to ADD
    (0.20, 0.20, 0.00, "ADD"),  # no band: tau itself is ADD
    (-3.0, -2.0, 0.50, "NOOP"),  # negative novelty (a near-duplicate) below a negative tau
    (-1.8, -2.0, 0.50, "BAND"),
    (math.inf, 0.20, 0.10, "ADD"),  # an empty scope
    (-math.inf, 0.20, 0.10, "NOOP"),
]


@pytest.mark.parametrize("novelty, tau, delta, want", STATED)
def test_stated_cases(novelty, tau, delta, want):
    assert _core.route(novelty, tau, delta) == want


@given(finite, deltas.filter(lambda d: d > 0))
def test_the_band_is_closed_below_and_open_above(tau, delta):
    top = tau + delta
    below_tau = math.nextafter(tau, -math.inf)
    below_top = math.nextafter(top, -math.inf)
    assert _core.route(below_tau, tau, delta) == "NOOP"
    # A delta lost to rounding (tau + delta == tau) leaves an empty band.
    assert _core.route(tau, tau, delta) == ("BAND" if top > tau else "ADD")
    assert _core.route(top, tau, delta) == "ADD"
    assert _core.route(math.nextafter(top, math.inf), tau, delta) == "ADD"
    if below_top >= tau:
        assert _core.route(below_top, tau, delta) == "BAND"


@given(finite, finite)
def test_zero_delta_leaves_no_band(novelty, tau):
    assert _core.route(novelty, tau, 0.0) in ("ADD", "NOOP")


@given(finite, finite, finite, deltas)
def test_route_is_monotone_in_novelty(a, b, tau, delta):
    lo, hi = min(a, b), max(a, b)
    assert RANK[_core.route(lo, tau, delta)] <= RANK[_core.route(hi, tau, delta)]


def test_empty_scope_always_adds():
    assert _core.route(float("inf"), 0.5, 0.5) == "ADD"


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 3000),
    d=st.sampled_from([8, 37, 384]),
    kappa=st.floats(0.1, 1e4),
    k=st.integers(1, 16),
    seed=st.integers(0, 2**32 - 1),
    tau=st.floats(1e-5, 0.5),
    delta=st.floats(0, 0.2),
)
def test_duplicate_is_never_added_under_memsieve(n, d, kappa, k, seed, tau, delta):
    m = unit_rows(seed, n, d)
    q = m[seed % n].copy()
    novelty, _, cos = _core.novelty_knn(m, q, kappa, k)
    # <= 0 up to the float32 rounding of |q|^2 (about 1e-7), whatever n is.
    assert novelty <= 1e-6
    assert _core.route(novelty, tau, delta) != "ADD"
    scope = _core.ScopeState(d)
    scope.add_many(np.arange(n, dtype=np.int64), m)
    res = scope.score(q, k=k, kappa=kappa)
    assert res.novelty <= 1e-6
    assert _core.route(res.novelty, tau, delta) != "ADD"


@pytest.mark.slow
def test_sage_routes_a_duplicate_to_add_at_large_n():
    # A clustered scope, as SAGE runs it: Banerjee's kappa hits its cap of 50,
    # tau follows the EMA of tau* from the PCA density, delta is 0.05.
    d, n = 384, 5000
    mu = unit_rows(1, 1, d)[0]
    m = _core.sample_vmf(mu, 400.0, n, seed=7)
    kappa = _core.kappa_banerjee(m, clip=(1e-3, 50.0))
    assert kappa == 50.0
    tau = None
    for size in (n // 4, n // 2, n):
        tau = _core.sage_ema(tau, _core.sage_tau_star(_core.sage_density(m[:size])))
    assert tau is not None
    delta = 0.05
    assert np.log(n) / kappa > tau + delta
    dup = m[123].copy()
    sage = _core.novelty_sage(m, dup, kappa)
    assert _core.route(sage, tau, delta) == "ADD"
    # The same duplicate under memsieve's score, same kappa and thresholds: never ADD.
    mine, row, _ = _core.novelty_knn(m, dup, kappa, 10)
    assert row == 123 and mine <= 0
    assert _core.route(mine, tau, delta) == "NOOP"
    # At small n the SAGE score still treats it as a duplicate: the drift is the ln N term.
    small = _core.novelty_sage(m[:2], m[1].copy(), kappa)
    assert _core.route(small, tau, delta) != "ADD"


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 600), seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12))
def test_score_is_independent_of_row_order(n, seed, k):
    d = 37
    m = unit_rows(seed, n, d)
    q = unit_rows(seed + 1, 1, d)[0]
    perm = np.random.default_rng(seed).permutation(n)
    mp = np.ascontiguousarray(m[perm])
    a, ra, ca = _core.novelty_knn(m, q, 20.0, k)
    b, rb, cb = _core.novelty_knn(mp, q, 20.0, k)
    assert abs(a - b) <= 1e-12 and ca == cb
    assert np.array_equal(m[ra], mp[rb])
    assert abs(_core.novelty_sage(m, q, 50.0) - _core.novelty_sage(mp, q, 50.0)) <= 1e-6
    assert _core.novelty_maxcos(m, q)[0] == _core.novelty_maxcos(mp, q)[0]
    # The same rows loaded into two scopes in different orders. (The threshold's
    # kappa legitimately depends on insertion history, so kappa is fixed here.)
    s1, s2 = _core.ScopeState(d), _core.ScopeState(d)
    s1.add_many(np.arange(n, dtype=np.int64), m)
    s2.add_many(perm.astype(np.int64), mp)
    r1, r2 = s1.score(q, k=k, kappa=20.0), s2.score(q, k=k, kappa=20.0)
    assert r1.novelty == r2.novelty and r1.top_cos == r2.top_cos


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 2**32 - 1))
def test_add_then_remove_restores_the_scope(n, seed):
    d = 37
    m = unit_rows(seed, n + 2, d)
    scope = _core.ScopeState(d)
    for i in range(n):
        scope.add(i, m[i])
    q = m[-1].copy()

    def snapshot():
        return (scope.score(q, kappa=20.0).novelty, len(scope), list(scope.ids()), scope.vectors().tobytes())

    before = snapshot()
    kb = scope.kappa_banerjee() if n else None
    scope.add(10_000, m[-2])
    assert scope.contains(10_000) and len(scope) == n + 1
    assert scope.remove(10_000) is None
    assert snapshot() == before
    if n:
        assert scope.kappa_banerjee() == kb


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 200))
def test_two_scopes_never_affect_each_other(seed, n):
    d = 37
    m = unit_rows(seed, 2 * n + 1, d)
    a, b = _core.ScopeState(d), _core.ScopeState(d)
    for i in range(n):
        b.add(i, m[n + i])
    q = m[-1].copy()
    snap = (b.score(q, kappa=20.0).novelty, b.vectors().tobytes(), list(b.ids()), b.kappa_banerjee())
    for i in range(n):
        a.add(i, m[i])  # the same ids as in b
    a.remove(0)
    a.add_many(np.array([10_000], dtype=np.int64), m[-1:])
    assert (b.score(q, kappa=20.0).novelty, b.vectors().tobytes(), list(b.ids()), b.kappa_banerjee()) == snap
