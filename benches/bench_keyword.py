"""Latency of the Rust keyword index (search, filtered search, info_novelty).

Documents are LoCoMo dev turns; beyond their number, extra documents are drawn
from the turns' own unigram distribution (40 words, about 20 tokens once stopwords are dropped), so postings
lengths follow the real vocabulary's Zipf shape. Queries are the LoCoMo dev
questions. Query tokenization is included in every timing (it is part of a
search); the timings are the median and p95 of single calls.

    python benches/bench_keyword.py [--sizes 1000 10000 100000] [--json out.json]
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from memsieve._core import KeywordIndex

LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")


def corpus():
    data = json.loads(LOCOMO.read_text())
    turns = [t["text"] for conv in data for v in conv["conversation"].values() if isinstance(v, list) for t in v]
    questions = [q["question"] for conv in data for q in conv["qa"]]
    return turns, questions


def documents(turns, n, rng):
    if n <= len(turns):
        return turns[:n]
    words = np.array(" ".join(turns).split())
    drawn = rng.choice(words, size=(n - len(turns), 40))
    extra = [" ".join(row) for row in drawn]
    return turns + extra


def timed(fn, args):
    out = []
    for a in args:
        t0 = time.perf_counter_ns()
        fn(a)
        out.append(time.perf_counter_ns() - t0)
    return np.array(out) / 1e6


def summary(ms):
    return {"p50_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)), "calls": len(ms)}


def run(sizes):
    turns, questions = corpus()
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        docs = documents(turns, n, rng)
        ix = KeywordIndex()
        t0 = time.perf_counter()
        ix.add_many(np.arange(n, dtype=np.int64), docs)
        build_s = time.perf_counter() - t0
        qs = questions * max(1, 3000 // len(questions))
        for q in qs[:200]:
            ix.search(q, 10)  # warm caches
        allow = rng.choice(n, size=min(n, 200), replace=False).astype(np.int64)
        half = np.arange(0, n, 2, dtype=np.int64)
        neigh = rng.integers(0, n, size=(len(qs), 5), dtype=np.int64)
        row = {
            "n": n,
            "load_avg_1m": os.getloadavg()[0],
            "avg_len": ix.avg_len,
            "build_s": build_s,
            "search_k10": summary(timed(lambda q: ix.search(q, 10), qs)),
            "search_k100": summary(timed(lambda q: ix.search(q, 100), qs)),
            "search_allow200": summary(timed(lambda q: ix.search(q, 10, allow=allow), qs)),
            "search_allow_half": summary(timed(lambda q: ix.search(q, 10, allow=half), qs)),
            "info_novelty_k5": summary(timed(lambda i: ix.info_novelty(qs[i], neigh[i]), range(len(qs)))),
        }
        rows.append(row)
        print(
            f"n={n:>7}  avg_len={row['avg_len']:.1f}  build={build_s:.2f}s  "
            + "  ".join(f"{k}={v['p50_ms']:.4f}/{v['p95_ms']:.4f}ms" for k, v in row.items() if isinstance(v, dict)),
            flush=True,
        )
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = run(args.sizes)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
