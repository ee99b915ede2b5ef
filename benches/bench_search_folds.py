"""What a result's folded texts cost a search, side by side: showing them (memsieve.read.folded,
``--stage shown``) or finding a memory by their words in keyword search (memsieve.read.fold_keys,
``--stage keys``).

Reads a store the LongMemEval harness wrote for its gate arm (one scope per question; ``memsieve
eval longmemeval ... --store X.sqlite`` leaves ``X.memsieve.sqlite``) and searches each
question in its scope as the harness does (its date as the reference time, limit 10), with the
stage on and off in turn, the order alternating question by question, after one warm-up
search per scope. Prints a table and writes the numbers as JSON.

    python benches/bench_search_folds.py --store X.memsieve.sqlite \\
        --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz [--questions 120]
        [--stage shown|keys] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from memsieve import Memory
from memsieve.eval.longmemeval_data import load_longmemeval
from memsieve.read.fold_keys import FoldKeys
from memsieve.read.search import Searcher


def _pct(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="the gate arm's SQLite store of a LongMemEval run")
    ap.add_argument("--data", required=True, help="the LongMemEval JSON the run read")
    ap.add_argument("--questions", type=int, default=120, help="questions searched (default 120)")
    ap.add_argument("--json", dest="json_out", help="write the numbers here")
    ap.add_argument("--stage", choices=("shown", "keys"), default="shown",
                    help="the folds shown with a result (default), or the folds' words in keyword search")
    ns = ap.parse_args(argv)

    questions = load_longmemeval(ns.data).questions[:ns.questions]
    shown, keys = Searcher._folds, FoldKeys.hits  # the stages as they are
    off_shown = (lambda self, scope, ids, *, as_of: {}) if ns.stage == "shown" else shown
    off_keys = (lambda self, *a, **kw: []) if ns.stage == "keys" else keys
    timings: dict[str, list[float]] = {"on": [], "off": []}
    folds_shown = 0
    with Memory(ns.store) as mem:
        for i, q in enumerate(questions):
            mem.search(q.question, user_id=q.question_id, limit=10, reference_time=q.question_date)  # warm
            for arm in (("on", "off") if i % 2 == 0 else ("off", "on")):
                Searcher._folds = shown if arm == "on" else off_shown  # type: ignore[method-assign]
                FoldKeys.hits = keys if arm == "on" else off_keys  # type: ignore[method-assign]
                t = time.perf_counter()
                hits = mem.search(q.question, user_id=q.question_id, limit=10, reference_time=q.question_date)
                timings[arm].append((time.perf_counter() - t) * 1e3)
                if arm == "on":
                    folds_shown += sum(len(h.folded) for h in hits)
        Searcher._folds, FoldKeys.hits = shown, keys  # type: ignore[method-assign]
    out = {arm: {"median_ms": statistics.median(ts), "p95_ms": _pct(ts, 0.95), "n": len(ts)}
           for arm, ts in timings.items()}
    out["ratio_median"] = out["on"]["median_ms"] / out["off"]["median_ms"]
    out["folds_shown"] = folds_shown
    out["store"] = str(Path(ns.store).name)
    out["stage"] = ns.stage
    print(f"| folds stage ({ns.stage}) | searches | median ms | p95 ms |\n|---|---:|---:|---:|")
    for arm in ("off", "on"):
        print(f"| {arm} | {out[arm]['n']} | {out[arm]['median_ms']:.2f} | {out[arm]['p95_ms']:.2f} |")
    print(f"on / off (medians): {out['ratio_median']:.3f}x; {folds_shown} folded texts shown")
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
