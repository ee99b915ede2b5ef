"""Where `memsieve serve`'s time on a search goes: the same searches at each layer, side by side.

One store (``--store sqlite``, or ``postgres``: a real PostgreSQL started for
the run) with ``--scopes`` small scopes (real ONNX embedder), one
``memsieve serve`` process on it, and in this process, for each of ``--n``
rounds (one random scope and two-word query per round, every layer in turn,
the order rotated round by round):

- ``memory``: ``Memory.search`` in process (the embedder and the gate, nothing else);
- ``async``: ``AsyncMemory.search``, the pool hop the server's handlers make;
- ``asgi``: the server's ASGI app called in process on a built request (the
  front door, key check, parsing, routing, handler and JSON, no socket);
- ``served``: the server's own time for the HTTP search, read from its log line;
- ``socket``: a hand-written HTTP/1.1 request on a kept-alive socket to the server;
- ``httpx``: the same request through an ``httpx.Client`` (what the load bench used);
- ``healthz socket`` / ``healthz httpx``: a round trip that does no work.

The figure is each layer's median minus ``memory``'s: what it adds to a
search. The server and this process share the machine's cores, so ``socket``
includes the client's own sending and reading.

    python benches/bench_serve_overhead.py --store sqlite --out benches/results_serve_overhead_sqlite.json
    python benches/bench_serve_overhead.py --store postgres --out benches/results_serve_overhead_postgres.json

Prints a markdown table and writes the JSON. Medians of this run on this
machine, not a promise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python"))

from pg_server import PgServer  # noqa: E402
from serve_helper import ServeProcess, make_keys  # noqa: E402

WORDS = ("bike", "guitar", "music", "trip", "office", "garden", "repair", "rent", "weekend", "camera",
         "studio", "lesson", "kayak", "laptop", "cabin", "piano", "tent", "van", "attic", "drone")
LAYERS = ("memory", "async", "asgi", "socket", "httpx", "healthz socket", "healthz httpx")


def fill(db: str, scopes: int, per_scope: int, seed: int) -> None:
    from memsieve import Memory

    rng = random.Random(seed)
    with Memory(db) as mem:
        for i in range(scopes):
            items = [f"{rng.choice(WORDS)} {rng.choice(WORDS)} note {i}-{j}: kept in the {rng.choice(WORDS)} "
                     f"since {rng.randint(1990, 2026)}" for j in range(per_scope)]
            mem.add_many(items, user_id=f"u{i}")


class RawClient:
    """HTTP/1.1 over one kept-alive socket, with nothing between the bytes and the clock."""

    def __init__(self, url: str) -> None:
        host, port = re.match(r"http://([^:/]+):(\d+)", url).groups()  # type: ignore[union-attr]
        self.host = f"{host}:{port}"
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def request(self, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
        lines = [f"{method} {path} HTTP/1.1", f"host: {self.host}", f"content-length: {len(body)}",
                 *(f"{k}: {v}" for k, v in headers.items())]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        while len(self.buf) < length:
            self.buf += self.sock.recv(65536)
        data, self.buf = self.buf[:length], self.buf[length:]
        return status, data


class AsgiCaller:
    """The server's app (memsieve.server.app.build_app) called in process."""

    def __init__(self, db: str, keys_path: str) -> None:
        from memsieve import Memory
        from memsieve.server.app import ServeConfig, build_app

        self.loop = asyncio.new_event_loop()
        self.memory = Memory(db)
        self.app = build_app(ServeConfig(db=db, keys_path=keys_path), self.memory)

    def post(self, path: str, key: str, body: bytes) -> int:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
                 "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {key}".encode()),
                             (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
        sent: dict[str, Any] = {}

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                sent["status"] = message["status"]

        self.loop.run_until_complete(self.app(scope, receive, send))
        return int(sent["status"])


def served_ms(log: str) -> dict[str, float]:
    """request id -> the server's own ms, from its log lines."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"request_id=(\S+) .*? ms=([\d.]+)", log)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    pg = PgServer().start() if args.store == "postgres" else None
    try:
        return _measure(args, pg)
    finally:
        if pg is not None:
            pg.stop()


def _measure(args: argparse.Namespace, pg: PgServer | None) -> dict[str, Any]:
    from memsieve import AsyncMemory, Memory

    with tempfile.TemporaryDirectory(prefix="memsieve-overhead-") as tmp:
        db = pg.create_database("overhead") if pg is not None else str(Path(tmp) / "m.db")
        keys_path = Path(tmp) / "keys.json"
        t0 = time.perf_counter()
        fill(db, args.scopes, args.per_scope, args.seed)
        fill_s = time.perf_counter() - t0
        key = make_keys(keys_path, admin={"admin": True})["admin"]
        rng = random.Random(args.seed + 1)
        times: dict[str, list[float]] = {name: [] for name in (*LAYERS, "served")}
        with ServeProcess(db, keys_path) as srv, Memory(db) as mem, httpx.Client(timeout=30.0) as hx:
            amem = AsyncMemory.wrap(Memory(db))
            asgi = AsgiCaller(db, str(keys_path))
            raw = RawClient(srv.url)
            auth = {"authorization": f"Bearer {key}", "content-type": "application/json"}
            ids: list[str] = []

            def one(layer: str, query: str, user: str, j: int) -> None:
                body = json.dumps({"query": query, "limit": 10, "user_id": user}).encode()
                t = time.perf_counter()
                if layer == "memory":
                    mem.search(query, limit=10, user_id=user)
                elif layer == "async":
                    asgi.loop.run_until_complete(amem.search(query, limit=10, user_id=user))
                elif layer == "asgi":
                    assert asgi.post("/v1/search", key, body) == 200
                elif layer == "socket":
                    rid = f"ovh-{j}"
                    status, _ = raw.request("POST", "/v1/search", {**auth, "x-request-id": rid}, body)
                    assert status == 200
                    ids.append(rid)
                elif layer == "httpx":
                    assert hx.post(srv.url + "/v1/search", content=body, headers=auth).status_code == 200
                elif layer == "healthz socket":
                    assert raw.request("GET", "/healthz", {})[0] == 200
                else:
                    assert hx.get(srv.url + "/healthz").status_code == 200
                if j >= 0:
                    times[layer].append((time.perf_counter() - t) * 1000)

            for j in range(-args.warm, args.n):
                user, query = f"u{rng.randrange(args.scopes)}", " ".join(rng.sample(WORDS, 2))
                order = LAYERS[abs(j) % len(LAYERS):] + LAYERS[:abs(j) % len(LAYERS)]
                for layer in order:
                    one(layer, query, user, j)
            time.sleep(0.5)  # the last log lines
            by_id = served_ms(srv.log())
            times["served"] = [by_id[r] for r in ids if r in by_id]
            amem_inner = amem.memory
            asgi.loop.run_until_complete(asgi.app.state.memory.close())
            asgi.loop.close()
            amem_inner.close()
    med = {name: statistics.median(v) for name, v in times.items() if v}
    base = med["memory"]
    # Each round runs every layer on one query and scope, so the per-round difference to
    # ``memory`` pairs like with like; its median is steadier than a difference of medians.
    paired = {name: statistics.median(a - b for a, b in zip(times[name], times["memory"]))
              for name in ("async", "asgi", "served", "socket", "httpx") if len(times[name]) == len(times["memory"])}
    rows = [{"layer": name, "p50_ms": round(med[name], 3),
             "added_to_search_ms": None if name.startswith("healthz") else round(med[name] - base, 3),
             "added_paired_ms": round(paired[name], 3) if name in paired else None,
             "n": len(times[name])} for name in ("memory", "async", "asgi", "served", "socket", "httpx",
                                                  "healthz socket", "healthz httpx")]
    return {"store": args.store, "scopes": args.scopes, "per_scope": args.per_scope, "rounds": args.n, "fill_s": round(fill_s, 1),
            "rows": rows, "goal_ms": 1.0,
            "added_socket_ms": round(paired["socket"], 3), "added_httpx_ms": round(paired["httpx"], 3),
            "met_socket": paired["socket"] <= 1.0}


def table(result: dict[str, Any]) -> str:
    out = ["| layer | p50 ms | p50 minus memory's, ms | median of per-round differences, ms |", "|---|---|---|---|"]
    for r in result["rows"]:
        added = "" if r["added_to_search_ms"] is None else f"{r['added_to_search_ms']:+.2f}"
        paired = "" if r["added_paired_ms"] is None else f"{r['added_paired_ms']:+.2f}"
        out.append(f"| {r['layer']} | {r['p50_ms']:.2f} | {added} | {paired} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--scopes", type=int, default=20)
    ap.add_argument("--per-scope", type=int, default=50)
    ap.add_argument("--n", type=int, default=300, help="measured rounds (each runs every layer once)")
    ap.add_argument("--warm", type=int, default=30, help="unmeasured rounds first (every scope warm)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    result = run(args)
    print(table(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
