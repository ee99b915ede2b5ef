"""What showing a result's folded texts costs a search (memsieve.read.folded), side by side.

Reads a store the LongMemEval harness wrote for its gate arm (one scope per question; ``memsieve
eval longmemeval ... --store X.sqlite`` leaves ``X.memsieve.sqlite``) and searches each
question in its scope as the harness does (its date as the reference time, limit 10), with the
folds stage on and off in turn, the order alternating question by question, after one warm-up
search per scope. Prints a table and writes the numbers as JSON.

    python benches/bench_search_folds.py --store X.memsieve.sqlite \\
        --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz [--questions 120] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from memsieve import Memory
from memsieve.eval.longmemeval_data import load_longmemeval
from memsieve.read.search import Searcher


def _pct(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="the gate arm's SQLite store of a LongMemEval run")
    ap.add_argument("--data", required=True, help="the LongMemEval JSON the run read")
    ap.add_argument("--questions", type=int, default=120, help="questions searched (default 120)")
    ap.add_argument("--json", dest="json_out", help="write the numbers here")
    ns = ap.parse_args(argv)

    questions = load_longmemeval(ns.data).questions[:ns.questions]
    shown = Searcher._folds  # the stage as it is
    timings: dict[str, list[float]] = {"on": [], "off": []}
    folds_shown = 0
    with Memory(ns.store) as mem:
        for i, q in enumerate(questions):
            mem.search(q.question, user_id=q.question_id, limit=10, reference_time=q.question_date)  # warm
            for arm in (("on", "off") if i % 2 == 0 else ("off", "on")):
                Searcher._folds = shown if arm == "on" else (lambda self, scope, ids, *, as_of: {})  # type: ignore
                t = time.perf_counter()
                hits = mem.search(q.question, user_id=q.question_id, limit=10, reference_time=q.question_date)
                timings[arm].append((time.perf_counter() - t) * 1e3)
                if arm == "on":
                    folds_shown += sum(len(h.folded) for h in hits)
        Searcher._folds = shown  # type: ignore[method-assign]
    out = {arm: {"median_ms": statistics.median(ts), "p95_ms": _pct(ts, 0.95), "n": len(ts)}
           for arm, ts in timings.items()}
    out["ratio_median"] = out["on"]["median_ms"] / out["off"]["median_ms"]
    out["folds_shown"] = folds_shown
    out["store"] = str(Path(ns.store).name)
    print("| folds stage | searches | median ms | p95 ms |\n|---|---:|---:|---:|")
    for arm in ("off", "on"):
        print(f"| {arm} | {out[arm]['n']} | {out[arm]['median_ms']:.2f} | {out[arm]['p95_ms']:.2f} |")
    print(f"on / off (medians): {out['ratio_median']:.3f}x; {folds_shown} folded texts shown")
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
