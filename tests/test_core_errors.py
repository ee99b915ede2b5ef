"""Bad input gives a typed memsieve error that names the problem and a fix."""

import numpy as np
import pytest

import memsieve
from memsieve import _core
from memsieve.gate.config import GateConfig
from memsieve.gate.scope_gate import new_threshold

D = 8


def unit_rows(n, d=D, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


M = unit_rows(20)
Q = unit_rows(1, seed=1)[0]
QS = unit_rows(3, seed=2)


def threshold(**overrides):
    """A ThresholdState with GateConfig's parameters, some overridden."""
    t = new_threshold(GateConfig())
    return _core.ThresholdState(**{**t.params, **overrides}) if overrides else t


def check(exc, fn, *words):
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    assert isinstance(info.value, memsieve.MemsieveError)
    assert msg[:1].islower(), msg
    for w in words:
        assert w.lower() in msg.lower(), (w, msg)
    return msg


def scorers_of_query():
    return [
        lambda q: _core.similarities(M, q),
        lambda q: _core.novelty_sage(M, q, 10.0),
        lambda q: _core.novelty_knn(M, q, 10.0, 5),
        lambda q: _core.novelty_maxcos(M, q),
        lambda q: _core.ScopeState(D).score(q, kappa=20.0),
        lambda q: _core.ScopeState(D).add(1, q),
        lambda q: _core.sample_vmf(q, 5.0, 3, seed=0),
    ]


def scorers_of_batch():
    return [
        lambda qs: _core.similarities_batch(M, qs),
        lambda qs: _core.novelty_sage_batch(M, qs, 10.0),
        lambda qs: _core.novelty_knn_batch(M, qs, 10.0, 5),
        lambda qs: _core.novelty_maxcos_batch(M, qs),
    ]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("i", range(7))
def test_non_finite_query(bad, i):
    q = Q.copy()
    q[3] = bad
    check(memsieve.InvalidVectorError, lambda: scorers_of_query()[i](q), "index 3", "finite")


@pytest.mark.parametrize("i", range(7))
def test_zero_and_unnormalized_query(i):
    check(memsieve.InvalidVectorError, lambda: scorers_of_query()[i](np.zeros(D, np.float32)), "zero norm")
    check(memsieve.InvalidVectorError, lambda: scorers_of_query()[i](Q * np.float32(3)), "norm 3.0", "np.linalg.norm")


@pytest.mark.parametrize("i", range(4))
def test_bad_batches(i):
    qs = QS.copy()
    qs[1, 2] = np.nan
    check(memsieve.InvalidVectorError, lambda: scorers_of_batch()[i](qs), "queries row 1")
    check(memsieve.ShapeError, lambda: scorers_of_batch()[i](np.zeros((0, D), np.float32)), "at least one row")
    check(memsieve.ShapeError, lambda: scorers_of_batch()[i](unit_rows(2, D + 1)), f"(b, {D})")
    check(memsieve.DtypeError, lambda: scorers_of_batch()[i](QS.astype(np.float64)), "float64", "np.float32")
    check(memsieve.ShapeError, lambda: scorers_of_batch()[i](np.asfortranarray(unit_rows(4))), "C-contiguous")


def test_non_finite_matrix_row():
    m = M.copy()
    m[7, 0] = np.nan
    for fn in (
        lambda: _core.novelty_knn(m, Q, 10.0, 5),
        lambda: _core.novelty_sage(m, Q, 10.0),
        lambda: _core.novelty_maxcos(m, Q),
        lambda: _core.kappa_banerjee(m),
        lambda: _core.sage_density(m),
        lambda: _core.Pca(2).fit(m),
        lambda: _core.random_projection(m, 4, seed=0),
    ):
        check(memsieve.InvalidVectorError, fn, "nan")
    check(memsieve.InvalidVectorError, lambda: _core.novelty_knn(m, Q, 10.0, 5), "row 7")


def test_wrong_dtype():
    for bad in (M.astype(np.float64), M.astype(np.float16), M.astype(np.int32)):
        msg = check(memsieve.DtypeError, lambda: _core.novelty_knn(bad, Q, 10.0, 5), "matrix", "float32", "np.ascontiguousarray")
        assert str(bad.dtype) in msg
    check(memsieve.DtypeError, lambda: _core.novelty_knn(M, Q.astype(np.float64), 10.0, 5), "query", "float64")
    check(memsieve.DtypeError, lambda: _core.novelty_knn(M.tolist(), Q, 10.0, 5), "got list")
    ids = np.arange(3, dtype=np.int32)
    check(memsieve.DtypeError, lambda: _core.ScopeState(D).add_many(ids, unit_rows(3)), "int64")
    assert issubclass(memsieve.DtypeError, TypeError)


def test_non_contiguous():
    wide = unit_rows(20, 2 * D)
    strided = wide[:, ::2]
    check(memsieve.ShapeError, lambda: _core.novelty_knn(strided, Q, 10.0, 5), "C-contiguous", "np.ascontiguousarray")
    check(memsieve.ShapeError, lambda: _core.novelty_knn(M, unit_rows(1, 2 * D)[0][::2], 10.0, 5), "C-contiguous")
    check(memsieve.ShapeError, lambda: _core.novelty_sage(np.asfortranarray(M), Q, 10.0), "C-contiguous")


def test_wrong_dimension():
    check(memsieve.ShapeError, lambda: _core.novelty_knn(M, unit_rows(1, D + 3)[0], 10.0, 5), f"width {D}", f"({D + 3},)")
    check(memsieve.ShapeError, lambda: _core.novelty_knn(M[0], Q, 10.0, 5), "(n, d)", "1 dimension")
    check(memsieve.ShapeError, lambda: _core.novelty_knn(M, M, 10.0, 5), "(d,)")
    check(memsieve.ShapeError, lambda: _core.novelty_knn(M[None], Q, 10.0, 5), "3 dimension")
    scope = _core.ScopeState(D)
    check(memsieve.ShapeError, lambda: scope.add(1, unit_rows(1, D + 1)[0]), f"width {D}")
    check(memsieve.ShapeError, lambda: scope.add_many(np.arange(2, dtype=np.int64), unit_rows(2, D + 1)), f"(n, {D})")
    check(memsieve.ShapeError, lambda: scope.add_many(np.arange(3, dtype=np.int64), unit_rows(2)), "3 ids for 2 rows")
    pca = _core.Pca(2).fit(M)
    check(memsieve.ShapeError, lambda: pca.transform(unit_rows(3, D + 1)), f"(n, {D})")


def test_empty_arrays():
    check(memsieve.ShapeError, lambda: _core.novelty_knn(M, np.zeros(0, np.float32), 10.0, 5), "width")
    check(memsieve.ShapeError, lambda: _core.novelty_knn(np.zeros((3, 0), np.float32), np.zeros(0, np.float32), 10.0, 5), "d >= 1")
    empty = np.zeros((0, D), np.float32)
    check(memsieve.ShapeError, lambda: _core.kappa_banerjee(empty), "at least one row")
    check(memsieve.ShapeError, lambda: _core.sage_density(empty), "at least one row")
    check(memsieve.ShapeError, lambda: _core.random_projection(empty, 4, seed=0), "at least one row")
    check(memsieve.ShapeError, lambda: _core.Pca(2).fit(empty), "at least one row")
    check(memsieve.ShapeError, lambda: _core.ScopeState(D).kappa_banerjee(), "non-empty scope")
    # An empty scope is not an error for scoring: it is maximally novel.
    assert _core.novelty_knn(empty, Q, 10.0, 5)[0] == np.inf


def test_config_errors():
    for kappa in (0.0, -1.0, np.nan, np.inf):
        check(memsieve.ConfigError, lambda: _core.novelty_knn(M, Q, kappa, 5), "kappa", "kappa_from_spacing")
        check(memsieve.ConfigError, lambda: _core.novelty_sage(M, Q, kappa), "kappa")
    check(memsieve.ConfigError, lambda: _core.novelty_knn(M, Q, 10.0, 0), "k must be >= 1", "got 0")
    check(memsieve.ConfigError, lambda: _core.novelty_knn(M, Q, 10.0, -4), "got -4")
    check(memsieve.ConfigError, lambda: _core.ScopeState(D).score(Q, kappa=20.0, k=0), "k must be")
    check(memsieve.ConfigError, lambda: _core.route(0.3, 0.2, -0.1), "delta", "-0.1")
    check(memsieve.ConfigError, lambda: _core.route(np.nan, 0.2, 0.1), "nan")
    check(memsieve.ConfigError, lambda: _core.route(0.3, np.inf, 0.1), "tau")
    check(memsieve.ConfigError, lambda: _core.kappa_from_spacing(1.5), "[-1, 1]", "1.5")
    check(memsieve.ConfigError, lambda: _core.kappa_from_spacing(0.5, c=0.0), "c must be")
    check(memsieve.ConfigError, lambda: _core.kappa_banerjee(M, clip=(5.0, 1.0)), "clip", "(1e-3, 50.0)")
    check(memsieve.ConfigError, lambda: _core.sage_tau_star(-1.0), "rho")
    check(memsieve.ConfigError, lambda: _core.sage_ema(0.3, 0.2, alpha=2.0), "alpha")
    check(memsieve.ConfigError, lambda: threshold(gamma=-1.0), "gamma")
    check(memsieve.ConfigError, lambda: threshold(tau_min=0.6, tau_max=0.5), "tau_min <= tau_max")
    check(memsieve.ConfigError, lambda: threshold(prior_share=2.0), "prior_share")
    check(memsieve.ConfigError, lambda: threshold().on_add(1.7), "share", "1.7")
    check(memsieve.ConfigError, lambda: _core.ScopeState(0), "dim must be")
    check(memsieve.ConfigError, lambda: _core.Pca(0), "n_components")
    check(memsieve.ConfigError, lambda: _core.random_projection(M, 0, seed=1), "out_dim")
    check(memsieve.ConfigError, lambda: _core.sample_vmf(Q, -1.0, 3, seed=1), "kappa")
    check(memsieve.ConfigError, lambda: _core.sample_vmf(Q, 1.0, -3, seed=1), "n must be")
    # Sizes that cannot be allocated are refused, not allowed to abort the interpreter.
    check(memsieve.ConfigError, lambda: _core.sample_vmf(Q, 1.0, 2**60, seed=1), "2^28")
    check(memsieve.ConfigError, lambda: _core.random_projection(M, 2**40, seed=1), "2^28")
    check(memsieve.ConfigError, lambda: _core.ScopeState(2**40), "2^28")
    check(memsieve.ConfigError, lambda: _core.novelty_from_topk(np.ones(3, np.float32), 0.0), "kappa")
    check(memsieve.InvalidVectorError, lambda: _core.novelty_from_topk(np.array([2.0], np.float32), 5.0), "cosine")
    check(memsieve.ShapeError, lambda: _core.Pca(9).fit(M), "n_components=9", "min(n, d)")


def test_state_errors():
    good = threshold().to_bytes()
    check(memsieve.StateError, lambda: _core.ThresholdState.from_bytes(good[:-1]), "expected 85 bytes", "to_bytes")
    check(memsieve.StateError, lambda: _core.ThresholdState.from_bytes(b"x" * len(good)), "not a ThresholdState")
    check(memsieve.StateError, lambda: _core.ThresholdState.from_bytes(b""), "got 0 bytes")
    newer = bytearray(good)
    newer[4] = 99
    check(memsieve.StateError, lambda: _core.ThresholdState.from_bytes(bytes(newer)), "version 99")
    rng = np.random.default_rng()
    for pos in rng.choice(np.arange(5, len(good)), size=20, replace=False):
        flipped = bytearray(good)
        flipped[pos] ^= 1 << int(rng.integers(8))
        check(memsieve.StateError, lambda: _core.ThresholdState.from_bytes(bytes(flipped)), "corrupt")
    check(memsieve.StateError, lambda: _core.ThresholdState.from_bytes("text"), "bytes")
    check(memsieve.StateError, lambda: threshold().on_remove(0.5), "holds no memories")
    scope = _core.ScopeState(D)
    scope.add(5, Q)
    check(memsieve.StateError, lambda: scope.add(5, Q), "id 5", "already")
    check(memsieve.StateError, lambda: scope.remove(6), "id 6", "contains")
    check(memsieve.StateError, lambda: scope.add_many(np.array([5], np.int64), unit_rows(1)), "id 5")
    check(memsieve.StateError, lambda: scope.add_many(np.array([7, 7], np.int64), unit_rows(2)), "id 7")
    assert len(scope) == 1  # failed bulk loads are all-or-nothing
    check(memsieve.StateError, lambda: _core.Pca(2).transform(M), "fit")
    check(memsieve.StateError, lambda: _core.Pca(2).components, "fit")


def test_error_classes_are_the_public_ones():
    assert _core.InvalidVectorError is memsieve.InvalidVectorError
    for cls in (memsieve.InvalidVectorError, memsieve.ShapeError, memsieve.ConfigError):
        assert issubclass(cls, ValueError) and issubclass(cls, memsieve.MemsieveError)
    assert issubclass(memsieve.StateError, memsieve.MemsieveError)
