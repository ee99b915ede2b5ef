"""MCP round trip of ``search_memory`` on a 10k-memory scope, over stdio and streamable HTTP.

What is timed: the SDK client's ``call_tool("search_memory", {query, limit})``
against a ``memsieve mcp`` subprocess, from the request leaving the client to
the parsed JSON result, query embedding (in the server, the packaged ONNX
model) included. The same queries through ``AsyncMemory.search`` in a process
of their own (what the server runs per call: ``Memory.search`` on a worker
thread, query embedding included) are the baseline, so the difference is what
MCP, JSON and the transport add; plain ``Memory.search`` on the main thread is
listed too. Every path runs in a fresh process, in alternating rounds.

The scope is filled once with synthetic sentences (unique; a name, an action,
an object, a place and a number drawn from small vocabularies), embedded by
the packaged model, with the gate and exact dedup off
(``GateConfig(profile="none", exact_dedup=False)``) so filling measures
storage, not the gate. Queries are other sentences from the same
vocabularies, each asked once per measurement after a warm-up.

    python benches/bench_mcp.py --json benches/results_mcp.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import numpy as np

SCOPE = "bench"
NAMES = ["Ana", "Bo", "Caro", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lena", "Mo", "Nia", "Oto"]
ACTIONS = ["bought", "repaired", "painted", "borrowed", "sold", "lost", "found", "packed", "cleaned", "ordered"]
OBJECTS = ["a bicycle", "the kettle", "a green sofa", "two tickets", "the old piano", "a tent", "the laptop",
           "a winter coat", "the garden hose", "a cookbook", "the camera", "a red scarf"]
PLACES = ["in Lisbon", "at the market", "near the harbour", "in the attic", "at work", "downtown", "in Porto",
          "at the station", "by the lake", "in the garage"]
SCRIPT = str(Path(sys.executable).with_name("memsieve"))


def sentence(rng: np.random.Generator, i: int) -> str:
    return (f"{rng.choice(NAMES)} {rng.choice(ACTIONS)} {rng.choice(OBJECTS)} {rng.choice(PLACES)} "
            f"on day {i}.")


def fill(db: Path, n: int, *, batch: int) -> float:
    """Store n unique sentences in the bench scope; returns seconds taken."""
    from memsieve import GateConfig, Memory

    rng = np.random.default_rng(7)
    start = time.perf_counter()
    with Memory(db, gate=GateConfig(profile="none", exact_dedup=False)) as mem:
        for lo in range(0, n, batch):
            mem.add([sentence(rng, i) for i in range(lo, min(n, lo + batch))], user_id=SCOPE)
        assert mem.stats(user_id=SCOPE)["active_memories"] == n
    return time.perf_counter() - start


def queries(count: int, *, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"what did {rng.choice(NAMES)} do with {rng.choice(OBJECTS)} {rng.choice(PLACES)} ({k})"
            for k in range(count)]


def summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {"n": len(ms), "p50": statistics.median(ordered), "p95": ordered[int(0.95 * (len(ordered) - 1))],
            "mean": statistics.fmean(ordered)}


async def time_session(session: Any, qs: list[str], *, limit: int, warmup: int) -> list[float]:
    await session.initialize()
    for q in qs[:warmup]:
        await session.call_tool("search_memory", {"query": q, "limit": limit})
    out = []
    for q in qs[warmup:]:
        t0 = time.perf_counter()
        result = await session.call_tool("search_memory", {"query": q, "limit": limit})
        out.append((time.perf_counter() - t0) * 1e3)
        assert not result.is_error and len(result.structured_content["results"]) == limit
    return out


def over_stdio(db: Path, qs: list[str], *, limit: int, warmup: int) -> list[float]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> list[float]:
        params = StdioServerParameters(command=SCRIPT, args=["mcp", "--db", str(db), "--user", SCOPE])
        with open(os.devnull, "w") as err:
            async with stdio_client(params, errlog=err) as (r, w), ClientSession(r, w) as session:
                return await time_session(session, qs, limit=limit, warmup=warmup)

    return anyio.run(main)


def over_http(db: Path, qs: list[str], *, limit: int, warmup: int) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([SCRIPT, "mcp", "--db", str(db), "--user", SCOPE, "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("memsieve mcp --http did not start")
            time.sleep(0.1)

        async def main() -> list[float]:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w), \
                    ClientSession(r, w) as session:
                return await time_session(session, qs, limit=limit, warmup=warmup)

        return anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def in_process(db: Path, qs: list[str], *, limit: int, warmup: int) -> list[float]:
    from memsieve import Memory

    with Memory(db) as mem:
        for q in qs[:warmup]:
            mem.search(q, user_id=SCOPE, limit=limit)
        out = []
        for q in qs[warmup:]:
            t0 = time.perf_counter()
            hits = mem.search(q, user_id=SCOPE, limit=limit)
            out.append((time.perf_counter() - t0) * 1e3)
            assert len(hits) == limit
    return out


def in_process_async(db: Path, qs: list[str], *, limit: int, warmup: int) -> list[float]:
    """The server's own path without MCP: ``AsyncMemory.search`` (a worker thread) in this process."""
    import asyncio

    from memsieve import AsyncMemory

    async def main() -> list[float]:
        async with AsyncMemory(db) as mem:
            for q in qs[:warmup]:
                await mem.search(q, user_id=SCOPE, limit=limit)
            out = []
            for q in qs[warmup:]:
                t0 = time.perf_counter()
                hits = await mem.search(q, user_id=SCOPE, limit=limit)
                out.append((time.perf_counter() - t0) * 1e3)
                assert len(hits) == limit
            return out

    return asyncio.run(main())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200, help="timed queries per transport")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--batch", type=int, default=200, help="sentences per add() while filling")
    ap.add_argument("--rounds", type=int, default=4, help="rounds of all the paths, alternating")
    ap.add_argument("--json", type=Path, help="write the results here")
    ns = ap.parse_args(argv)

    paths = (("in-process Memory.search", in_process), ("in-process AsyncMemory.search", in_process_async),
             ("MCP stdio", over_stdio), ("MCP streamable HTTP", over_http))
    per_round = ns.queries // ns.rounds
    load0 = os.getloadavg()[0]
    timed: dict[str, list[float]] = {name: [] for name, _ in paths}
    with tempfile.TemporaryDirectory() as tmp, \
            ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               max_tasks_per_child=1) as child:
        db = Path(tmp) / "bench_mcp.db"
        fill_s = child.submit(fill, db, ns.memories, batch=ns.batch).result()
        # Rounds alternate the paths, so a burst of load on this shared machine hits them all alike.
        for r in range(ns.rounds):
            qs = queries(ns.warmup + per_round, seed=100 + r)
            for name, fn in paths:
                # Each path in a fresh process, as a server would be: no embedder session left from another.
                timed[name] += child.submit(fn, db, qs, limit=ns.limit, warmup=ns.warmup).result()
    runs = {name: summary(ms) for name, ms in timed.items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    report = {"memories": ns.memories, "queries": per_round * ns.rounds, "rounds": ns.rounds, "limit": ns.limit, "fill_s": round(fill_s, 1),
              "commit": commit, "machine": f"{platform.machine()} {os.cpu_count()} CPUs",
              "load_avg": [round(load0, 1), round(os.getloadavg()[0], 1)],
              "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "ms": runs}
    base = runs["in-process AsyncMemory.search"]["p50"]  # what the server runs per call, without MCP
    print(f"search_memory on a {ns.memories:,}-memory scope, limit {ns.limit}, {per_round * ns.rounds} queries "
          f"in {ns.rounds} alternating rounds (ms per call, query embedding included; filled in {fill_s:.0f} s)\n")
    print("| path | p50 | p95 | mean | p50 over AsyncMemory |\n|---|---|---|---|---|")
    for name, r in runs.items():
        print(f"| {name} | {r['p50']:.2f} | {r['p95']:.2f} | {r['mean']:.2f} | {r['p50'] - base:+.2f} |")
    if ns.json:
        ns.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
