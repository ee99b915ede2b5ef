"""Where an hnswlib index starts to beat the Rust exact scan for top-k search.

For each scope size N, d = 384, float32 unit vectors: the median time of one
top-10 query by ``ScopeState.nearest`` (exact, Rust) and by ``ScopeIndex.knn``
(hnswlib, M=16, ef=96), plus the index's recall@10 against the exact answer.
Memory.index_min_size is chosen from this table.

    python benches/bench_index.py [--json FILE] [--sizes 1000,5000,...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def _median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000,20000,50000,100000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)

    from memsieve import _core
    from memsieve.gate.ann import ScopeIndex

    rng = np.random.default_rng(0)
    rows = []
    print(f"{'N':>8} {'exact_ms':>10} {'hnsw_ms':>10} {'speedup':>8} {'recall@10':>10} {'build_s':>8}")
    for n in (int(s) for s in args.sizes.split(",")):
        # clustered data, like a real scope: 64 topics with spread
        centers = rng.standard_normal((64, args.dim)).astype(np.float32)
        x = centers[rng.integers(0, 64, n)] + 0.6 * rng.standard_normal((n, args.dim)).astype(np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x = np.ascontiguousarray(x, dtype=np.float32)
        seqs = np.arange(n, dtype=np.int64)
        state = _core.ScopeState(args.dim)
        state.add_many(seqs, x)
        t0 = time.perf_counter()
        index = ScopeIndex.build(seqs, x)
        build = time.perf_counter() - t0
        qs = x[rng.integers(0, n, args.queries)] + 0.1 * rng.standard_normal((args.queries, args.dim)).astype(np.float32)
        qs = np.ascontiguousarray(qs / np.linalg.norm(qs, axis=1, keepdims=True), dtype=np.float32)
        hits = 0
        for q in qs:
            a, _ = state.nearest(q, 10)
            b, _ = index.knn(q, 10)
            hits += len(set(a.tolist()) & set(b.tolist()))
        exact = _median_time(lambda: [state.nearest(q, 10) for q in qs], 5) / len(qs)
        approx = _median_time(lambda: [index.knn(q, 10) for q in qs], 5) / len(qs)
        recall = hits / (10 * len(qs))
        print(f"{n:>8} {exact * 1e3:>10.3f} {approx * 1e3:>10.3f} {exact / approx:>8.1f} {recall:>10.3f} {build:>8.2f}")
        rows += [{"name": "exact_top10", "n": n, "d": args.dim, "seconds": exact},
                 {"name": "hnsw_top10", "n": n, "d": args.dim, "seconds": approx, "recall": recall,
                  "build_seconds": build}]
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
