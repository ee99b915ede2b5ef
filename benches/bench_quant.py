"""The int8 scan against the float32 scan, side by side in one run.

Usage:
    python benches/bench_quant.py [--sizes 1000,10000,100000,1000000] [--json FILE]

Two ``ScopeState`` objects hold the same d=384 unit rows, one with
``vectors="float32"`` and one with ``vectors="int8"``. Each round offers one
query to both, in alternating order, so load on the machine hits both alike;
the table gives medians over the rounds and their ratio. Rows:

    nearest      ScopeState.nearest(q, 10): the dense search / forget path
    score        ScopeState.score(q, kappa=20, k=10): the gate's memsieve profile
    rescored     rows the int8 scan handed to the float32 re-score (median)
    bytes        the float32 rows, and what the int8 copy adds

Rows are Gaussian directions (the hardest case for the int8 bounds' margin:
cosines crowd near the top-k bar). Threads: MEMSIEVE_THREADS (default every
core); the kernels' paths: MEMSIEVE_ISA. The load average is printed and
recorded, since the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

from memsieve import _core

D, K, KAPPA = 384, 10, 20.0
CHUNK = 50_000


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, D), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def states(n: int, seed: int) -> tuple[_core.ScopeState, _core.ScopeState]:
    """The same n rows in both storages, filled a chunk at a time (no (n, d) temporary)."""
    rng = np.random.default_rng(seed)
    pair = _core.ScopeState(D), _core.ScopeState(D, vectors="int8")
    for start in range(0, n, CHUNK):
        rows = unit_rows(rng, min(CHUNK, n - start))
        ids = np.arange(start, start + len(rows), dtype=np.int64)
        for s in pair:
            s.add_many(ids, rows)
    return pair


def timed(fn, q) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(q)
    return time.perf_counter() - t0, out


def bench(n: int, rounds: int, seed: int) -> list[dict]:
    f32, i8 = states(n, seed)
    qs = unit_rows(np.random.default_rng(seed + 1), rounds + 1)
    calls = {
        "nearest": lambda s: (lambda q: s.nearest(q, K)[0].tolist()),
        "score": lambda s: (lambda q: s.score(q, kappa=KAPPA, k=K).top_ids),
    }
    rows = []
    for name, make in calls.items():
        fa, fb = make(f32), make(i8)
        fa(qs[-1]), fb(qs[-1])  # warm-up
        ta, tb = [], []
        for j, q in enumerate(qs[:rounds]):
            order = [(fa, ta), (fb, tb)] if j % 2 == 0 else [(fb, tb), (fa, ta)]
            got = []
            for fn, times in order:
                dt, out = timed(fn, q)
                times.append(dt)
                got.append(out)
            if got[0] != got[1]:
                raise AssertionError(f"{name} at n={n}: int8 and float32 disagree on query {j}")
        a, b = statistics.median(ta), statistics.median(tb)
        rows.append({"name": name, "n": n, "float32_s": a, "int8_s": b, "speedup": a / b})
    rescored = statistics.median(i8.rescored(q, K) for q in qs[:rounds])
    rows.append({"name": "rescored", "n": n, "median": rescored, "share": rescored / n})
    rows.append({"name": "bytes", "n": n, "float32": n * D * 4, "int8_extra": i8.quant_bytes})
    return rows


def _fmt(s: float) -> str:
    return f"{s * 1e6:.0f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def markdown(rows: list[dict]) -> str:
    out = ["| N | call | float32 | int8 + re-score | int8 vs float32 | rows re-scored | int8 copy |",
           "|---|---|---|---|---|---|---|"]
    by_n: dict[int, dict[str, dict]] = {}
    for r in rows:
        by_n.setdefault(r["n"], {})[r["name"]] = r
    for n, r in by_n.items():
        for call in ("nearest", "score"):
            x = r[call]
            out.append(f"| {n:,} | {call} | {_fmt(x['float32_s'])} | {_fmt(x['int8_s'])} | {x['speedup']:.2f}× "
                       f"| {r['rescored']['median']:.0f} | +{r['bytes']['int8_extra'] / r['bytes']['float32']:.0%} |")
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000,1000000")
    p.add_argument("--rounds", type=int, default=41)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    load_before = os.getloadavg()
    print(f"isa {_core._isa()}, threads {_core._parallel_config()[0]}, load {load_before[0]:.2f}")
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        rows.extend(bench(n, args.rounds, args.seed))
    load_after = os.getloadavg()
    print(markdown(rows))
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"isa": _core._isa(), "threads": _core._parallel_config()[0], "d": D, "k": K,
                       "load_before": load_before, "load_after": load_after, "rows": rows}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
