"""Operating ``memsieve serve``: SIGHUP rereads the keys file, SIGTERM finishes the writes in flight,
and several server processes (and workers) share one PostgreSQL."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
import uuid

import httpx

from serve_helper import ServeProcess, make_keys, wait_for


def _status(srv, key, scope):
    with srv.client(key) as c:
        return c.get("/v1/memories", params=scope).status_code


def test_sighup_rereads_the_keys_file(tmp_path):
    path = tmp_path / "keys.json"
    keys = make_keys(path, ana={"user_id": "ana"})
    with ServeProcess(tmp_path / "mem.db", path) as srv:
        assert _status(srv, keys["ana"], {"user_id": "ana"}) == 200
        late = make_keys(path, late={"user_id": "carol"})["late"]
        assert _status(srv, late, {"user_id": "carol"}) == 401  # not before the reload
        srv.send(signal.SIGHUP)
        assert wait_for(lambda: _status(srv, late, {"user_id": "carol"}) == 200), srv.log()

        data = json.loads(path.read_text())
        data["keys"] = [e for e in data["keys"] if e["name"] != "ana"]
        path.write_text(json.dumps(data))
        srv.send(signal.SIGHUP)
        assert wait_for(lambda: _status(srv, keys["ana"], {"user_id": "ana"}) == 401), srv.log()
        assert _status(srv, late, {"user_id": "carol"}) == 200

        path.write_text("{ broken")  # a bad file keeps the keys in force
        srv.send(signal.SIGHUP)
        assert wait_for(lambda: "kept the 1 key(s) in force" in srv.log()), srv.log()
        assert _status(srv, late, {"user_id": "carol"}) == 200
        assert srv.proc.poll() is None
    assert srv.proc.returncode == 0


def test_sigterm_finishes_a_slow_batch_in_flight(tmp_path, embedder):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    db = tmp_path / "mem.db"
    srv = ServeProcess(db, tmp_path / "keys.json").start()
    items = [f"note {i}: the meeting room {uuid.uuid4().hex[:6]} has booking code {i * 7919}" for i in range(150)]
    answer: dict = {}

    def send():
        with srv.client(keys["ana"], timeout=300) as c:
            answer["response"] = c.post("/v1/memories/batch",
                                        json={"items": items, "batch_size": 1, "user_id": "ana"})

    sender = threading.Thread(target=send)
    sender.start()
    # wait until the batch is being written: its first memories are readable through the same server
    def started() -> bool:
        with srv.client(keys["ana"]) as c:
            return bool(c.get("/v1/memories", params={"user_id": "ana", "limit": 1}).json()["memories"])

    assert wait_for(lambda: not sender.is_alive() or started(), timeout=60)
    assert sender.is_alive(), "the batch finished before SIGTERM; make it slower"
    srv.send(signal.SIGTERM)
    sender.join(timeout=300)
    code = srv.stop()
    r = answer["response"]
    assert r.status_code == 200, r.text
    assert len(r.json()["decisions"]) == len(items)
    assert code == 0, srv.log()
    assert _count(db, embedder) == len(items)
    log = srv.log()
    assert re.search(r"path=/v1/memories/batch status=200", log) and "Traceback" not in log
    assert "worker" in log and "stopped" in log


def _count(db, embedder) -> int:
    from memsieve import Memory

    with Memory(db, embedder=embedder) as m:
        return len(m.get_all(user_id="ana"))


def test_two_servers_and_two_workers_share_one_postgresql(tmp_path, pg_url):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    a = ServeProcess(pg_url, tmp_path / "keys.json", workers=2, log_path=tmp_path / "a.log").start()
    try:
        with ServeProcess(pg_url, tmp_path / "keys.json", log_path=tmp_path / "b.log") as b:
            scope = {"user_id": "ana", "agent_id": "shared"}
            with b.client(keys["ana"]) as cb:
                mid = cb.post("/v1/memories", json={"text": "The office wifi password is hunter2", **scope}
                              ).json()["decisions"][0]["memory_id"]
            # a fresh connection per request, so either worker of a may answer
            for _ in range(4):
                r = httpx.get(f"{a.url}/v1/memories/{mid}", params=scope,
                              headers={"Authorization": f"Bearer {keys['ana']}"})
                assert r.status_code == 200 and r.json()["memory"]["text"] == "The office wifi password is hunter2"
            with a.client(keys["ana"]) as ca:
                hits = ca.post("/v1/search", json={"query": "wifi password", **scope}).json()["results"]
                assert [h["id"] for h in hits] == [mid]
                # the same text through the other server: its gate sees the first one (NOOP, not a second ADD)
                d = ca.post("/v1/memories", json={"text": "The office wifi password is hunter2", **scope}
                            ).json()["decisions"][0]
                assert d["event"] == "NOOP" and d["memory_id"] == mid

            # concurrent writes of one scope through both servers: every one is decided and stored once
            texts = [f"desk {i} is by the {w} window" for i, w in enumerate(["north", "south", "east", "west"] * 3)]
            results: list = []

            def write(srv, chunk):
                with srv.client(keys["ana"]) as c:
                    for t in chunk:
                        results.append(c.post("/v1/memories", json={"text": t, **scope}).json()["decisions"][0])

            threads = [threading.Thread(target=write, args=(s, texts[i::2])) for i, s in enumerate((a, b))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            assert len(results) == len(texts)
            added = [d["memory_id"] for d in results if d["event"] == "ADD"]
            with b.client(keys["ana"]) as cb:
                listed = {m["id"] for m in cb.get("/v1/memories", params=scope).json()["memories"]}
            assert set(added) <= listed and len(added) == len(set(added))
        assert b.proc.returncode == 0

        # SIGHUP to the supervisor reaches every worker: a new key works on every fresh connection
        late = make_keys(tmp_path / "keys.json", late={"user_id": "dan"})["late"]
        a.send(signal.SIGHUP)

        def everywhere() -> bool:
            return all(httpx.get(f"{a.url}/v1/stats", params={"user_id": "dan"},
                                 headers={"Authorization": f"Bearer {late}"}).status_code == 200 for _ in range(6))

        assert wait_for(everywhere), a.log()
        assert len(re.findall(r"reloaded 3 key\(s\)", a.log())) == 2
    finally:
        code = a.stop()
    assert code == 0, a.log()
    assert len(re.findall(r"worker \d+ stopped", a.log())) == 2


def test_a_small_gate_cache_still_answers_every_scope_whole(tmp_path):
    from serve_helper import cli

    path = tmp_path / "keys.json"
    keys = make_keys(path, ops={"admin": True})
    for bad in ("0", "-1", "nan"):
        done = cli("serve", "--db", str(tmp_path / "m.db"), "--create", "--keys", str(path), "--port", "0",
                   "--max-cache-mb", bad)
        assert done.returncode == 2 and "--max-cache-mb takes a positive number" in done.stderr, done.stderr
    # 0.001 MiB holds less than one scope's vectors: each request re-reads its scope from the store.
    with ServeProcess(tmp_path / "mem.db", path, extra=("--max-cache-mb", "0.001")) as srv, srv.client(keys["ops"]) as c:
        facts = {f"u{i}": f"My locker number at the pool is {100 + i}." for i in range(4)}
        for user, text in facts.items():
            r = c.post("/v1/memories", json={"text": text, "user_id": user})
            assert r.status_code == 200 and r.json()["decisions"][0]["event"] == "ADD", r.text
        for _ in range(2):
            for user, text in facts.items():
                hits = c.post("/v1/search", json={"query": "locker number", "user_id": user}).json()["results"]
                assert [h["text"] for h in hits] == [text]
        # A repeat is still known as one after its scope was evicted: the gate was read back whole.
        again = c.post("/v1/memories", json={"text": facts["u0"], "user_id": "u0"}).json()["decisions"][0]
        assert again["event"] == "NOOP", again


def test_the_listening_socket_says_it_is_tcp_so_responses_are_not_held_back():
    # asyncio sets TCP_NODELAY only on a socket whose proto is IPPROTO_TCP; with
    # proto 0 every response on a kept-alive connection waited ~40 ms (Nagle and
    # the client's delayed ACK), which the load benchmark showed as 47 ms of overhead.
    import socket

    from memsieve.server.run import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP and sock.type == socket.SOCK_STREAM
        client = socket.create_connection(sock.getsockname())
        conn, _ = sock.accept()
        assert conn.proto == socket.IPPROTO_TCP  # what asyncio's transport checks before TCP_NODELAY
        conn.close()
        client.close()
    finally:
        sock.close()


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (Linux /proc)."""
    from pathlib import Path

    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def _scrape(srv, key) -> dict[str, float]:
    # a fresh connection per scrape, so either worker may answer it
    r = httpx.get(srv.url + "/metrics", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert r.status_code == 200
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in r.text.splitlines()
            if line and not line.startswith("#")}


def test_a_scrape_of_any_worker_counts_every_workers_requests(tmp_path, monkeypatch):
    from memsieve.server.metrics import FLUSH_SECONDS

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the supervisor makes its metrics directory

    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    stats = 'memsieve_http_requests_total{method="GET",route="/v1/stats",status="200"}'
    with ServeProcess(tmp_path / "mem.db", tmp_path / "keys.json", workers=2) as srv:
        assert wait_for(lambda: len(_children(srv.proc.pid)) == 2)
        (shared,) = tmp_path.glob("memsieve-metrics-*")
        assert wait_for(lambda: len(list(shared.glob("*.json"))) == 2)  # each worker's file
        for _ in range(30):
            r = httpx.get(srv.url + "/v1/stats", params={"user_id": "ana"},
                          headers={"Authorization": f"Bearer {keys['ana']}"})
            assert r.status_code == 200
        time.sleep(FLUSH_SECONDS + 0.5)
        for _ in range(6):
            seen = _scrape(srv, keys["ops"])
            assert seen[stats] == 30 and seen["memsieve_workers"] == 2, seen
        # A worker killed outright still counts with what it last wrote; its successor starts at zero.
        victim = _children(srv.proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        assert wait_for(lambda: len(_children(srv.proc.pid)) == 2 and victim not in _children(srv.proc.pid))
        assert wait_for(lambda: httpx.get(srv.url + "/readyz").status_code == 200)
        assert wait_for(lambda: _scrape(srv, keys["ops"])["memsieve_workers"] == 3, timeout=30)
        for _ in range(4):
            assert _scrape(srv, keys["ops"])[stats] == 30
    assert srv.proc.returncode == 0
    assert not shared.exists()  # removed at a graceful stop
