"""Parity of every Rust kernel with a float64 numpy reference.

Inputs are fresh random draws on every run (the seed is in each failure
message). Cosines are bounded by 1, so a near-zero cosine has no meaningful
relative error: comparisons use rtol=1e-5 with atol=1e-6 (one millionth of the
cosine range)."""

import secrets

import numpy as np
import pytest

from memsieve import _core

RTOL, ATOL = 1e-5, 1e-6
DIMS = [37, 384]
SIZES = [0, 1, 2, 5000]


class SeededRng:
    """A numpy Generator that remembers its seed, for failure messages."""

    def __init__(self, seed):
        self.seed_value = seed
        self.gen = np.random.default_rng(seed)

    def __getattr__(self, name):
        return getattr(self.gen, name)


@pytest.fixture
def rng():
    return SeededRng(secrets.randbits(32))


def unit_rows(rng, n, d):
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


def close(got, want, rng, what):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"{what} (seed {rng.seed_value})")


def ref_lse(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def ref_sage(m, q, kappa):
    if len(m) == 0:
        return np.inf
    s = m.astype(np.float64) @ q.astype(np.float64)
    return 1.0 - np.clip((ref_lse(kappa * s) - np.log(len(s))) / kappa, -1, 1)


def ref_knn(m, q, kappa, k):
    if len(m) == 0:
        return np.inf, -1, np.nan
    s = m.astype(np.float64) @ q.astype(np.float64)
    order = np.argsort(-s, kind="stable")[:k]
    return 1.0 - ref_lse(kappa * s[order]) / kappa, int(order[0]), s[order[0]]


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", SIZES)
def test_similarities(rng, n, d):
    m, qs = unit_rows(rng, n, d), unit_rows(rng, 5, d)
    want = qs.astype(np.float64) @ m.astype(np.float64).T
    close(_core.similarities(m, qs[0]), want[0], rng, "similarities")
    got = _core.similarities_batch(m, qs)
    assert got.shape == (5, n) and got.dtype == np.float32
    close(got, want, rng, "similarities_batch")


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kappa", [5.0, 50.0, 400.0])
def test_novelty_scores(rng, n, d, kappa):
    m, qs = unit_rows(rng, n, d), unit_rows(rng, 9, d)
    if n:
        qs[0] = m[rng.integers(n)]  # a stored duplicate among the queries
    for k in (1, 10):
        nov, row, cos = _core.novelty_knn_batch(m, qs, kappa, k)
        for j, q in enumerate(qs):
            want = ref_knn(m, q, kappa, k)
            got = _core.novelty_knn(m, q, kappa, k)
            assert got[1] == want[1] == row[j]
            if n == 0:
                assert got[0] == np.inf and np.isnan(got[2]) and nov[j] == np.inf
                continue
            close(got[0], want[0], rng, f"novelty_knn k={k}")
            close(got[2], want[2], rng, "nearest cos")
            close(nov[j], want[0], rng, "novelty_knn_batch")
            close(cos[j], want[2], rng, "batch nearest cos")
    sage_b = _core.novelty_sage_batch(m, qs, kappa)
    mc_nov, mc_row, mc_cos = _core.novelty_maxcos_batch(m, qs)
    for j, q in enumerate(qs):
        want = ref_sage(m, q, kappa)
        got = _core.novelty_sage(m, q, kappa)
        mc = _core.novelty_maxcos(m, q)
        if n == 0:
            assert got == np.inf and sage_b[j] == np.inf and mc[0] == np.inf and mc[1] == -1
            continue
        close(got, want, rng, "novelty_sage")
        close(sage_b[j], want, rng, "novelty_sage_batch")
        _, r, c = ref_knn(m, q, kappa, 1)
        close(mc[0], 1.0 - c, rng, "novelty_maxcos")
        assert mc[1] == r == mc_row[j]
        close(mc_nov[j], 1.0 - c, rng, "novelty_maxcos_batch")


def test_novelty_from_topk(rng):
    top = np.sort(rng.uniform(-1, 1, 12))[::-1].astype(np.float32)
    for kappa in (3.0, 50.0):
        close(_core.novelty_from_topk(top, kappa), 1 - ref_lse(kappa * top.astype(np.float64)) / kappa, rng, "from_topk")
    assert _core.novelty_from_topk(np.zeros(0, np.float32), 5.0) == np.inf


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", [1, 2, 5000])
def test_kappa_banerjee(rng, n, d):
    m = unit_rows(rng, n, d)
    r = np.linalg.norm(m.astype(np.float64).mean(axis=0))
    raw = r * (d - r * r) / (1 - r * r) if r < 1 else 1e6
    want = min(raw, 1e6)
    close(_core.kappa_banerjee(m), want, rng, "banerjee")
    close(_core.kappa_banerjee(m, clip=(1e-3, 50.0)), np.clip(raw, 1e-3, 50.0), rng, "banerjee clipped")
    scope = _core.ScopeState(d)
    scope.add_many(np.arange(n, dtype=np.int64), m)
    close(scope.kappa_banerjee(), want, rng, "scope banerjee")


def test_kappa_from_spacing(rng):
    for m in rng.uniform(-1, 0.9999, 50):
        c = rng.uniform(1, 6)
        close(_core.kappa_from_spacing(m, c=c), min(c / (1 - m), 1e4), rng, "spacing")
    assert _core.kappa_from_spacing(1.0) == 1e4
    assert _core.kappa_from_spacing(0.5, c=4.0, max_kappa=5.0) == 5.0


@pytest.mark.parametrize("d", DIMS)
def test_random_projection(rng, d):
    x = rng.standard_normal((300, d)).astype(np.float32)
    seed = int(rng.integers(1 << 62))
    r_t = _core.random_projection(np.eye(d, dtype=np.float32), 64, seed=seed, normalize=False)
    assert r_t.shape == (d, 64)
    raw = _core.random_projection(x, 64, seed=seed, normalize=False)
    want = x.astype(np.float64) @ r_t.astype(np.float64)
    close(raw / np.abs(want).max(), want / np.abs(want).max(), rng, "projection raw")
    unit = _core.random_projection(x, 64, seed=seed)
    close(unit, want / np.linalg.norm(want, axis=1, keepdims=True), rng, "projection normalized")
    # Different seeds draw different matrices; entries have variance 1/out_dim.
    other = _core.random_projection(np.eye(d, dtype=np.float32), 64, seed=seed + 1, normalize=False)
    assert not np.array_equal(r_t, other)
    assert 0.8 / 64 < r_t.var() < 1.2 / 64


def ref_pca(x, k):
    x = x.astype(np.float64)
    mean = x.mean(axis=0)
    xc = x - mean
    vals, vecs = np.linalg.eigh(xc.T @ xc / max(len(x) - 1, 1))
    comps = vecs[:, ::-1][:, :k].T
    return mean, comps


@pytest.mark.slow
@pytest.mark.parametrize("d", DIMS)
def test_pca(rng, d):
    # Distinct variances per axis, in a random basis, so the components are well defined.
    n, k = 2000, 8
    v = rng.standard_normal(d)
    basis = np.eye(d) - 2 * np.outer(v, v) / (v @ v)  # a random reflection: orthonormal, no LAPACK
    x = ((rng.standard_normal((n, d)) * np.linspace(3.0, 0.5, d)) @ basis.T + 0.1).astype(np.float32)
    pca = _core.Pca(k).fit(x)
    assert (pca.n_components, pca.dim) == (k, d)
    mean, comps = ref_pca(x, k)
    close(pca.mean, mean, rng, "pca mean")
    got = pca.components.astype(np.float64)
    signs = np.sign(np.sum(got * comps, axis=1))
    close(got, comps * signs[:, None], rng, "pca components")
    want = (x - mean) @ (comps * signs[:, None]).T
    close(pca.transform(x, normalize=False) / np.abs(want).max(), want / np.abs(want).max(), rng, "transform")
    close(pca.transform(x), want / np.linalg.norm(want, axis=1, keepdims=True), rng, "transform normalized")


@pytest.mark.slow
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", [1, 2, 200, 5000])
def test_sage_density(rng, n, d):
    x = unit_rows(rng, n, d)
    got = _core.sage_density(x)
    if n <= 2:
        # Fewer rows than components: a flat box, reported as the documented cap.
        assert got == 1e300
        return
    k = min(16, n, d)
    mean, comps = ref_pca(x, k)
    proj = (x.astype(np.float64) - mean) @ comps.T
    want = n / np.prod(proj.max(axis=0) - proj.min(axis=0))
    close(got, want, rng, "sage_density")


def test_sage_threshold_pieces(rng):
    for rho in np.concatenate([[0.0], rng.uniform(0, 5, 20), [1e300]]):
        close(_core.sage_tau_star(rho), 0.5 * np.exp(-2.0 * rho) + 0.05, rng, "tau*")
    prev = None
    want = None
    for tau_star in rng.uniform(0.05, 0.55, 30):
        prev = _core.sage_ema(prev, tau_star)
        want = tau_star if want is None else 0.9 * want + 0.1 * tau_star
        close(prev, want, rng, "ema")


def test_threshold_state(rng):
    t = _core.ThresholdState(gamma=0.7, tau_min=0.02, tau_max=0.4, kappa_c=3.0, prior_share=0.3, prior_weight=5.0)
    cos = rng.uniform(-0.2, 0.99, 500)
    t.on_add(float("nan"))
    for c in cos:
        t.on_add(float(c))
    m = (cos.sum() + 0.3 * 5.0) / (len(cos) + 5.0)
    assert t.count == len(cos)
    close(t.mean_share, m, rng, "mean_share")
    close(t.kappa, min(3.0 / (1 - m), 1e4), rng, "kappa")
    close(t.tau, np.clip(0.7 * (1 - m), 0.02, 0.4), rng, "tau")
    for c in cos[:100]:
        t.on_remove(float(c))
    m = (cos[100:].sum() + 1.5) / (400 + 5.0)
    close(t.mean_share, m, rng, "mean after removals")
    assert _core.ThresholdState.from_bytes(t.to_bytes()).to_bytes() == t.to_bytes()


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("n", SIZES)
def test_scope_scores_match_kernels(rng, n, d):
    m = unit_rows(rng, n, d)
    ids = rng.permutation(10 * n + 1)[:n].astype(np.int64)
    scope = _core.ScopeState(d)
    scope.add_many(ids, m)
    assert len(scope) == n and np.array_equal(scope.ids(), ids) and np.array_equal(scope.vectors(), m)
    q = unit_rows(rng, 1, d)[0]
    res = scope.score(q, k=10, kappa=30.0)
    nov, row, cos = ref_knn(m, q, 30.0, 10)
    if n == 0:
        assert res.novelty == np.inf and res.nearest_id is None and np.isnan(res.nearest_cos) and res.top_ids == []
        return
    close(res.novelty, nov, rng, "scope score")
    assert res.nearest_id == ids[row] and res.kappa == 30.0
    close(res.nearest_cos, cos, rng, "scope nearest cos")
    s = m.astype(np.float64) @ q.astype(np.float64)
    order = np.argsort(-s, kind="stable")[:10]
    assert res.top_ids == list(ids[order])
    close(np.array(res.top_cos), s[order], rng, "top cos")
    close(scope.score_sage(q, kappa=50.0).novelty, ref_sage(m, q, 50.0), rng, "scope sage")
    close(scope.score_maxcos(q).novelty, 1 - cos, rng, "scope maxcos")
    got_ids, got_cos = scope.nearest(q, 3)
    assert list(got_ids) == list(ids[order[:3]])
    close(got_cos, s[order[:3]], rng, "nearest")


def test_read_floor(rng):
    m = unit_rows(rng, 1000, 37)
    # A sum of signed values can cancel to ~0, so the error is measured against sum |x|.
    scale = np.abs(m.astype(np.float64)).sum()
    assert abs(_core._read_floor(m) - m.astype(np.float64).sum()) <= 1e-6 * scale


def test_vmf_sample_shape_and_direction(rng):
    d = 37
    mu = unit_rows(rng, 1, d)[0]
    seed = int(rng.integers(1 << 62))
    s = _core.sample_vmf(mu, 200.0, 500, seed=seed)
    assert s.shape == (500, d) and s.dtype == np.float32
    close(np.linalg.norm(s.astype(np.float64), axis=1), np.ones(500), rng, "unit samples")
    assert np.array_equal(s, _core.sample_vmf(mu, 200.0, 500, seed=seed))
    mean = s.astype(np.float64).mean(axis=0)
    assert mean @ mu / np.linalg.norm(mean) > 0.99
