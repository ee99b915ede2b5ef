"""How long a consolidation runs with and without ``max_seconds``, on chat turns at a low ``min_sim``.

A run at ``min_sim`` 0.3 on one conversation's turns weighs most pairs of the scope (chat turns
of one conversation are mostly that close), which is where an unbounded run takes longest. The
turns are LoCoMo dev's first conversation's (``--data``), embedded with the default embedder into
a SQLite store with the gate off, so that every turn is a memory. Each budget is a dry run on
the same store (nothing is written, so every run sees the same scope); the wall time of each
and what it left are reported.

    python benches/bench_consolidate_budget.py [--sizes 500 1000] [--budgets 1 5] \
        [--json benches/results_consolidate_budget.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"


def turns(path: Path, n: int) -> list[str]:
    """The first ``n`` turns of the file's conversations, as "Speaker: text"."""
    out: list[str] = []
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        sessions = sorted((k for k in c if k.startswith("session_") and isinstance(c[k], list)),
                          key=lambda k: int(k.split("_")[1]))
        for k in sessions:
            out += [f"{t['speaker']}: {t['text']}" for t in c[k] if t.get("text")]
    return out[:n]


def run(data: Path, sizes: list[int], budgets: list[float], min_sim: float) -> list[dict]:
    from memsieve import GateConfig, Memory

    rows = []
    for n in sizes:
        texts = turns(data, n)
        with tempfile.TemporaryDirectory() as d, Memory(Path(d) / "b.db", gate=GateConfig(profile="none")) as mem:
            mem.add_many(texts, user_id="bench")
            for budget in [None, *budgets]:
                t0 = time.perf_counter()
                report = mem.consolidate(user_id="bench", min_sim=min_sim, dry_run=True, max_seconds=budget)
                rows.append({"n": len(texts), "min_sim": min_sim, "max_seconds": budget,
                             "seconds": time.perf_counter() - t0, "pairs": report.pairs,
                             "pairs_left": report.pairs_left, "clusters": len(report.merges),
                             "clusters_left": report.clusters_left, "complete": report.complete})
                print(table(rows[-1:], head=not rows[:-1]), flush=True)
    return rows


def table(rows: list[dict], *, head: bool = True) -> str:
    lines = ["| memories | max_seconds | seconds | close pairs | pairs left | clusters | clusters left |",
             "|---:|---:|---:|---:|---:|---:|---:|"] if head else []
    for r in rows:
        lines.append(f"| {r['n']} | {r['max_seconds'] if r['max_seconds'] is not None else 'none'} | "
                     f"{r['seconds']:.2f} | {r['pairs']:,} | {r['pairs_left']:,} | {r['clusters']} | "
                     f"{r['clusters_left']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON (default: ../shared's dev split)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000])
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 5.0])
    parser.add_argument("--min-sim", type=float, default=0.3)
    parser.add_argument("--json", dest="json_out")
    ns = parser.parse_args()
    rows = run(ns.data, ns.sizes, ns.budgets, ns.min_sim)
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
