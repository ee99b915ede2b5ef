"""The concentration estimators against samples drawn with Wood's algorithm.

Tolerances are relative errors of Banerjee's estimate, set per (d, N, kappa)
at about four standard deviations of its spread over seeds, plus its known
upward bias when R is small (at d=384 and kappa=20, R ~ 0.05, so 1/N is not
negligible next to R^2). At d=384, kappa=5 the mean resultant length is
below the 1/sqrt(N) noise floor, so no estimator can recover it from 5000
samples and the case is not claimed."""

import secrets

import numpy as np
import pytest

from memsieve import _core
from memsieve.gate.config import GateConfig
from memsieve.gate.scope_gate import new_threshold

CASES = [
    # (d, N, kappa, relative tolerance)
    (3, 2000, 5.0, 0.15),
    (3, 2000, 20.0, 0.10),
    (3, 2000, 100.0, 0.10),
    (37, 2000, 5.0, 0.12),
    (37, 2000, 20.0, 0.06),
    (37, 2000, 100.0, 0.05),
    (37, 2000, 500.0, 0.04),
    (384, 5000, 20.0, 0.12),
    (384, 5000, 100.0, 0.03),
    (384, 5000, 500.0, 0.02),
]


def mean_direction(d, seed):
    v = np.random.default_rng(seed).standard_normal(d)
    return (v / np.linalg.norm(v)).astype(np.float32)


@pytest.mark.parametrize("d,n,kappa,tol", CASES)
def test_banerjee_recovers_kappa_from_wood_samples(d, n, kappa, tol):
    seed = secrets.randbits(63)
    mu = mean_direction(d, seed)
    x = _core.sample_vmf(mu, kappa, n, seed=seed)
    est = _core.kappa_banerjee(x)
    assert abs(est / kappa - 1) <= tol, f"d={d} n={n} kappa={kappa} est={est:.3f} seed={seed}"
    # The scope's O(d) running-sum estimate agrees with the full scan.
    scope = _core.ScopeState(d)
    scope.add_many(np.arange(n, dtype=np.int64), x)
    assert abs(scope.kappa_banerjee() / est - 1) <= 1e-6


def test_sage_clip_saturates_but_spacing_estimator_does_not():
    # SAGE's clipped Banerjee estimate sits at its cap for every realistic scope,
    # while kappa_from_spacing keeps growing as the memories get denser.
    d, n = 384, 400
    seed = secrets.randbits(63)
    mu = mean_direction(d, seed)
    sage, spacing = [], []
    for kappa in (300.0, 1000.0, 3000.0):
        x = _core.sample_vmf(mu, kappa, n, seed=seed)
        sage.append(_core.kappa_banerjee(x, clip=(1e-3, 50.0)))
        # einsum, not BLAS: under qemu-user a NaN came out of this product once (CI: "mean_share ...
        # got NaN"); the sampler is scalar f64 with no path to a NaN, so the float32 sgemm is left out.
        sims = np.einsum("id,jd->ij", x.astype(np.float64), x.astype(np.float64))
        np.fill_diagonal(sims, -1.0)
        spacing.append(_core.kappa_from_spacing(float(sims.max(axis=1).mean())))
    assert sage == [50.0, 50.0, 50.0]
    assert spacing[0] < spacing[1] < spacing[2] < 1e4, spacing


def test_wood_samples_have_the_vmf_mean_cosine():
    # E[mu . x] = A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa); for d=3 it is coth(k) - 1/k.
    seed = secrets.randbits(63)
    mu = mean_direction(3, seed)
    for kappa in (0.5, 2.0, 10.0):
        x = _core.sample_vmf(mu, kappa, 20000, seed=seed).astype(np.float64)
        want = 1 / np.tanh(kappa) - 1 / kappa
        # Standard error of the mean cosine is below 0.0045 here; allow 4 of them.
        assert abs((x @ mu).mean() - want) < 0.018, (kappa, seed)


def test_threshold_kappa_follows_the_spacing():
    t = new_threshold(GateConfig())  # prior_share 0.5 weighing 8, kappa_c 4
    for _ in range(50):
        t.on_add(0.8)
    m = (50 * 0.8 + 8 * 0.5) / 58
    assert abs(t.kappa - 4.0 / (1 - m)) < 1e-9
    assert abs(t.kappa - _core.kappa_from_spacing(t.mean_share, c=4.0)) < 1e-12
