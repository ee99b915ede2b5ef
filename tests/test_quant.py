"""int8 vectors (GateConfig(vectors="int8")): an int8 copy scanned first, the
candidates re-scored in float32, so every result equals the float32 one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import memsieve
from memsieve import GateConfig, Memory, _core

D = 384


def unit_rows(n: int, d: int = D, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, d))
    return np.ascontiguousarray(m / np.linalg.norm(m, axis=1, keepdims=True), dtype=np.float32)


def clustered(n: int, seed: int = 1) -> np.ndarray:
    """Tight clusters, duplicates and near-duplicates: where the int8 bounds overlap most."""
    rng = np.random.default_rng(seed)
    centres = unit_rows(5, seed=seed + 1)
    m = centres[rng.integers(0, 5, n)] + rng.choice([0.01, 0.05, 0.3], (n, 1)) * rng.standard_normal((n, D))
    m[7] = m[3]
    m[n - 1] = m[3]
    return np.ascontiguousarray(m / np.linalg.norm(m, axis=1, keepdims=True), dtype=np.float32)


def pair(m: np.ndarray) -> tuple[_core.ScopeState, _core.ScopeState]:
    a, b = _core.ScopeState(D), _core.ScopeState(D, vectors="int8")
    ids = np.arange(len(m), dtype=np.int64) * 3 + 1
    a.add_many(ids, m)
    b.add_many(ids, m)
    return a, b


def results(s: _core.ScopeState, q: np.ndarray) -> list:
    r, x, g = s.score(q, k=10, kappa=20.0), s.score_maxcos(q, k=10), s.score_sage(q, kappa=50.0, k=10)
    ids, cos = s.nearest(q, 40)
    return [r.novelty, r.top_ids, r.top_cos, x.novelty, x.top_ids, g.novelty, g.top_ids,
            ids.tolist(), cos.tolist()]


@pytest.mark.parametrize("make", [unit_rows, clustered])
def test_int8_scope_gives_the_float32_results_exactly(make) -> None:
    m = make(3000)
    a, b = pair(m)
    assert (a.storage, b.storage) == ("float32", "int8")
    # Removals and re-adds move rows around; the copy must follow them.
    for seq in (1, 3 * 1500 + 1, 3 * 2999 + 1):
        a.remove(seq)
        b.remove(seq)
    a.add(10**9, m[3])
    b.add(10**9, m[3])
    qs = np.vstack([m[3], m[100], unit_rows(6, seed=9)])
    for q in qs:
        assert results(a, q) == results(b, q)
        assert b.rescored(q, 10) < len(b) // 4
        assert a.rescored(q, 10) == len(a)
    # The duplicates of row 3 tie at the top, in row order, as in float32.
    assert b.nearest(m[3], 3)[0].tolist() == a.nearest(m[3], 3)[0].tolist()
    assert b.quant_bytes >= len(b) * D and a.quant_bytes == 0


def test_spread_rows_rescore_a_sliver() -> None:
    a, b = pair(unit_rows(20_000, seed=4))
    for q in unit_rows(5, seed=5):
        assert b.rescored(q, 10) < 200
        assert results(a, q) == results(b, q)


def test_bad_storage_is_a_typed_error_and_leaves_nothing() -> None:
    with pytest.raises(memsieve.ConfigError, match='vectors "float16" is not a storage; use "float32"'):
        _core.ScopeState(D, vectors="float16")
    with pytest.raises(memsieve.ConfigError, match="width up to 65536, got 65537"):
        _core.ScopeState(65537, vectors="int8")
    with pytest.raises(memsieve.DtypeError, match="vectors must be a str, got int"):
        _core.ScopeState(D, vectors=8)
    with pytest.raises(memsieve.ConfigError, match="unknown vectors 'float16'; use one of float32, int8"):
        GateConfig(vectors="float16")
    with pytest.raises(memsieve.ConfigError, match="unknown vectors None"):
        GateConfig(vectors=None)  # type: ignore[arg-type]
    b = _core.ScopeState(D, vectors="int8")
    b.add(1, unit_rows(1)[0])
    bad = unit_rows(1, seed=2)[0].copy()
    bad[5] = np.nan
    with pytest.raises(memsieve.InvalidVectorError):
        b.add(2, bad)
    with pytest.raises(memsieve.ShapeError):
        b.nearest(unit_rows(1, d=D - 1)[0], 3)
    with pytest.raises(memsieve.ConfigError, match="k must be"):
        b.rescored(unit_rows(1)[0], 0)
    q = unit_rows(1)[0]
    with pytest.raises(memsieve.DtypeError, match="float32"):
        b.rescored(q.astype(np.float64), 3)
    with pytest.raises(memsieve.InvalidVectorError):
        b.rescored(bad, 3)
    with pytest.raises(memsieve.DtypeError, match="k must be an integer"):
        b.nearest(q, True)
    # A k far above the scope (a search limit) is the whole scope, never an allocation of k.
    assert b.nearest(q, 2**62)[0].tolist() == [1] and b.rescored(q, 2**62) == 1
    assert len(b) == 1 and b.quant_bytes > 0 and b.nearest(q, 5)[0].tolist() == [1]


@pytest.mark.slow
def test_results_do_not_depend_on_threads(tmp_path) -> None:
    m = clustered(30_000, seed=6)
    qs = np.vstack([m[3], unit_rows(3, seed=7)])
    np.save(tmp_path / "m.npy", m)
    np.save(tmp_path / "qs.npy", qs)
    child = (
        "import json, sys, numpy as np\n"
        "from memsieve import _core\n"
        "m, qs = np.load(sys.argv[1] + '/m.npy'), np.load(sys.argv[1] + '/qs.npy')\n"
        "b = _core.ScopeState(m.shape[1], vectors='int8')\n"
        "b.add_many(np.arange(len(m), dtype=np.int64), m)\n"
        "print(json.dumps([[b.nearest(q, 20)[0].tolist(), b.nearest(q, 20)[1].tolist(), b.rescored(q, 20)]"
        " for q in qs]))\n"
    )
    runs = []
    for threads in ("1", "2"):
        env = {**os.environ, "MEMSIEVE_THREADS": threads}
        run = subprocess.run([sys.executable, "-c", child, str(tmp_path)], env=env, capture_output=True, text=True,
                             timeout=300, check=False)
        assert run.returncode == 0, run.stderr
        runs.append(json.loads(run.stdout))
    assert runs[0] == runs[1]
    a = _core.ScopeState(D)
    a.add_many(np.arange(len(m), dtype=np.int64), m)
    assert [r[0] for r in runs[0]] == [a.nearest(q, 20)[0].tolist() for q in qs]


def test_memory_with_int8_vectors_decides_and_searches_as_float32(tmp_path, embedder) -> None:
    turns = [
        "I'm allergic to peanuts.", "I am allergic to peanuts!", "My sister Lena lives in Porto.",
        "Lena moved to Lisbon in March.", "I adopted two cats, Miso and Tofu.", "We adopted two cats.",
        "My favourite band is Radiohead.", "I started learning the cello in 2021.",
        "I'm learning to play the cello.", "Our flight to Tokyo leaves on the 14th.",
    ]
    out, cached = [], []
    for vectors in ("float32", "int8"):
        mem = Memory(tmp_path / f"{vectors}.db", embedder=embedder, gate=GateConfig(vectors=vectors))
        try:
            decisions = [(d.event, d.layer, d.novelty, d.tau) for t in turns for d in mem.add(t, user_id="ana")]
            hits = [(h.text, h.score) for h in mem.search("what is Ana allergic to", user_id="ana", mode="dense",
                                                          limit=5)]
            out.append((decisions, hits))
            cached.append((mem.gates.cached_bytes, sum(d[0] == "ADD" for d in decisions)))
        finally:
            mem.close()
    assert out[0] == out[1]
    # The gate cache's bound counts the int8 copy: one int8 row and its scale per stored memory.
    (f32_bytes, stored), (i8_bytes, _) = cached
    assert i8_bytes - f32_bytes >= stored * 384
    assert any(e == "NOOP" for e, *_ in out[0][0]) and any(e == "ADD" for e, *_ in out[0][0])
