"""The row-parallel scan path: above the size threshold the kernels split the
rows into fixed chunks across threads. Results must match the float64
reference like the serial path does, and match a single-threaded run of the
same input (MEMSIEVE_THREADS=1, in a child process) row for row."""

import json
import os
import secrets
import subprocess
import sys

import numpy as np
import pytest

from memsieve import _core

D = 37


@pytest.fixture(scope="module")
def data():
    seed = secrets.randbits(32)
    rng = np.random.default_rng(seed)
    threads, min_elements = _core._parallel_config()
    n = min_elements // D + 20_000
    m = rng.standard_normal((n, D))
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    m = np.ascontiguousarray(m, dtype=np.float32)
    qs = rng.standard_normal((6, D))
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    qs = np.ascontiguousarray(qs, dtype=np.float32)
    qs[0] = m[n - 3]  # a stored duplicate, found in the last chunk
    m[5] = m[n - 3]  # ...and its twin in the first: the tie goes to the lower row
    return seed, threads, m, qs


def scores(m, qs):
    """Every full-scan kernel on (m, qs), as plain JSON-able values."""
    nov, row, cos = _core.novelty_knn_batch(m, qs, 20.0, 10)
    scope = _core.ScopeState(m.shape[1])
    scope.add_many(np.arange(len(m), dtype=np.int64), m)
    out = {
        "knn_batch": [nov.tolist(), row.tolist(), cos.tolist()],
        "sage_batch": _core.novelty_sage_batch(m, qs, 50.0).tolist(),
        "maxcos_batch": [a.tolist() for a in _core.novelty_maxcos_batch(m, qs)],
        "sims": _core.similarities(m, qs[1]).tolist()[:50],
    }
    for j, q in enumerate(qs):
        out[f"knn{j}"] = list(_core.novelty_knn(m, q, 20.0, 10))
        out[f"sage{j}"] = _core.novelty_sage(m, q, 50.0)
        r = scope.score(q, k=10, kappa=20.0)
        s = scope.score_sage(q, kappa=50.0, k=10)
        out[f"scope{j}"] = [r.novelty, r.top_ids, s.novelty, s.top_ids, scope.nearest(q, 4)[0].tolist()]
    return out


def test_parallel_path_matches_reference(data):
    seed, threads, m, qs = data
    s64 = m.astype(np.float64) @ qs.T.astype(np.float64)
    for j, q in enumerate(qs):
        s = s64[:, j]
        order = np.argsort(-s, kind="stable")[:10]
        nov, row, _ = _core.novelty_knn(m, q, 20.0, 10)
        top = 20.0 * s[order]
        want = 1.0 - (top.max() + np.log(np.exp(top - top.max()).sum())) / 20.0
        np.testing.assert_allclose(nov, want, rtol=1e-5, atol=1e-6, err_msg=f"seed {seed}")
        assert row == order[0], f"seed {seed}"
        x = 50.0 * s
        lse = x.max() + np.log(np.exp(x - x.max()).sum())
        want = 1.0 - np.clip((lse - np.log(len(s))) / 50.0, -1, 1)
        np.testing.assert_allclose(_core.novelty_sage(m, q, 50.0), want, rtol=1e-5, err_msg=f"seed {seed}")
    np.testing.assert_allclose(_core.similarities(m, qs[2]), s64[:, 2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_core.similarities_batch(m, qs), s64.T, rtol=1e-5, atol=1e-6)
    assert _core.novelty_knn(m, qs[0], 20.0, 2)[1] == 5
    scale = np.abs(m.astype(np.float64)).sum()
    assert abs(_core._read_floor(m, parallel=True) - m.astype(np.float64).sum()) <= 1e-6 * scale


@pytest.mark.slow
def test_parallel_path_equals_single_thread(data, tmp_path):
    seed, threads, m, qs = data
    np.save(tmp_path / "m.npy", m)
    np.save(tmp_path / "qs.npy", qs)
    child = (
        "import json, sys, numpy as np\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from test_core_parallel import scores\n"
        "from memsieve import _core\n"
        "d = sys.argv[1]\n"
        "assert _core._parallel_config()[0] == 1\n"
        "print(json.dumps(scores(np.load(d + '/m.npy'), np.load(d + '/qs.npy'))))\n"
    )
    env = {**os.environ, "MEMSIEVE_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", child, str(tmp_path), os.path.dirname(__file__)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode == 0, run.stderr
    serial, par = json.loads(run.stdout), scores(m, qs)
    assert serial.keys() == par.keys()

    def same(a, b, where):
        if isinstance(a, list):
            assert len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b)):
                same(x, y, f"{where}[{i}]")
        elif isinstance(a, float):
            assert a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b)), f"{where}: {a} {b} (seed {seed}, {threads} threads)"
        else:
            assert a == b, f"{where}: {a} {b} (seed {seed})"

    for key in serial:
        same(serial[key], par[key], key)


def test_scans_from_many_threads_at_once_equal_one_at_a_time(data):
    """Scans posted from several Python threads at once (the GIL is released)
    share the helper threads; each caller still gets its own exact result."""
    from concurrent.futures import ThreadPoolExecutor

    _, _, m, qs = data
    want = [_core.novelty_knn_batch(m, qs[j : j + 2], 20.0, 10) for j in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda j: _core.novelty_knn_batch(m, qs[j : j + 2], 20.0, 10), [0, 1, 2, 3] * 25))
    for i, g in enumerate(got):
        for a, b in zip(g, want[i % 4]):
            assert np.array_equal(a, b), f"call {i}"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_scans_without_the_parents_helpers(data):
    """A child forked after the parent's helpers started has none of their
    threads (and maybe a lock one held): it must scan serially, not hang, and
    give the parent's result."""
    import multiprocessing

    _, threads, m, qs = data
    if threads < 2:
        pytest.skip("the parallel path is off here (one CPU or MEMSIEVE_THREADS=1)")
    want = _core.novelty_knn_batch(m, qs, 20.0, 10)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_child_scan, (m, qs)).get(timeout=60)
    assert got[0] == 1, "a forked child reports the serial path"
    for a, b in zip(got[1], want):
        assert np.array_equal(a, b)


def _child_scan(m, qs):
    return _core._parallel_config()[0], _core.novelty_knn_batch(m, qs, 20.0, 10)


def test_threads_asked_beyond_the_cores_are_capped_at_the_cores():
    """Helpers spin after each scan: one beyond the cores would only spin against the others."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    child = "from memsieve import _core; print(_core._parallel_config()[0])"
    got = {}
    for asked in ("1", "10000"):
        run = subprocess.run([sys.executable, "-c", child], env={**os.environ, "MEMSIEVE_THREADS": asked},
                             capture_output=True, text=True, timeout=120, check=False)
        assert run.returncode == 0, run.stderr
        got[asked] = int(run.stdout)
    assert got["1"] == 1
    assert got["10000"] == cores, f"{got['10000']} threads on {cores} cores"
