"""Idempotent writes in ``memsieve serve``: a retry with the same Idempotency-Key is answered, not written
again, on both stores and across two servers on one PostgreSQL; the store's kept answers (claim, keep,
mismatch, stale takeover, expiry); and a purge leaves no kept answer quoting the text."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

from memsieve import Memory
from memsieve.store.base import KeptReply

from serve_helper import ServeProcess, make_keys


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"replies-{request.param}")
    db = root / "mem.db" if request.param == "sqlite" else request.getfixturevalue("pg_server").create_schema()
    keys = make_keys(root / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    srv = ServeProcess(db, root / "keys.json").start()
    yield srv, keys, db
    assert srv.stop() == 0, srv.log()


def _scope() -> dict[str, str]:
    return {"user_id": "ana", "agent_id": "a" + uuid.uuid4().hex[:8]}


def test_a_retried_add_is_answered_once_and_stored_once(served):
    srv, keys, _ = served
    scope, key = _scope(), str(uuid.uuid4())
    body = {"text": "Ana's locker at the gym is number 118", **scope}
    with srv.client(keys["ana"]) as c:
        first = c.post("/v1/memories", json=body, headers={"Idempotency-Key": key})
        again = c.post("/v1/memories", json=body, headers={"Idempotency-Key": key})
        assert first.status_code == again.status_code == 200
        assert "idempotent-replayed" not in first.headers and again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json() and first.json()["decisions"][0]["event"] == "ADD"
        assert len(c.get("/v1/memories", params=scope).json()["memories"]) == 1
        assert c.get("/v1/rejections", params=scope).json()["rejections"] == []  # not even a NOOP
        # without a key, the same text is decided again: a NOOP (exact), recorded
        plain = c.post("/v1/memories", json=body).json()["decisions"][0]
        assert (plain["event"], plain["layer"]) == ("NOOP", "exact")


def test_the_same_key_for_another_request_is_422_and_writes_nothing(served):
    srv, keys, _ = served
    scope, key = _scope(), str(uuid.uuid4())
    with srv.client(keys["ana"]) as c:
        assert c.post("/v1/memories", json={"text": "Ana drinks oat milk", **scope},
                      headers={"Idempotency-Key": key}).status_code == 200
        r = c.post("/v1/memories", json={"text": "Ana sold her car", **scope}, headers={"Idempotency-Key": key})
        assert r.status_code == 422 and r.json()["error"]["type"] == "ReplyMismatchError"
        assert "new key" in r.json()["error"]["message"]
        assert [m["text"] for m in c.get("/v1/memories", params=scope).json()["memories"]] == ["Ana drinks oat milk"]


def test_a_failed_write_releases_its_key_and_a_bad_key_is_400(served):
    srv, keys, _ = served
    scope, key = _scope(), str(uuid.uuid4())
    with srv.client(keys["ana"]) as c:
        bad = c.post("/v1/memories", json={"text": "", **scope}, headers={"Idempotency-Key": key})
        assert bad.status_code == 400
        fixed = c.post("/v1/memories", json={"text": "Ana's flight is on Friday", **scope},
                       headers={"Idempotency-Key": key})
        assert fixed.status_code == 200 and "idempotent-replayed" not in fixed.headers
        r = c.post("/v1/memories", json={"text": "x", **scope}, headers={"Idempotency-Key": "has spaces in it"})
        assert r.status_code == 400 and "Idempotency-Key" in r.json()["error"]["message"]
        # another key name (the admin's) has its own keys: the same key value is a new request there
    with srv.client(keys["ops"]) as c:
        other = c.post("/v1/memories", json={"text": "Ana's flight is on Friday", **scope},
                       headers={"Idempotency-Key": key})
        assert other.status_code == 200 and "idempotent-replayed" not in other.headers


def test_edits_replay_too(served):
    srv, keys, _ = served
    scope = _scope()
    with srv.client(keys["ana"]) as c:
        mid = c.post("/v1/memories", json={"text": "Ana lives in Porto", **scope}).json()["decisions"][0]["memory_id"]
        k1, k2 = str(uuid.uuid4()), str(uuid.uuid4())
        up = [c.patch(f"/v1/memories/{mid}", json={"text": "Ana lives in Lisbon", **scope},
                      headers={"Idempotency-Key": k1}) for _ in range(2)]
        assert [r.status_code for r in up] == [200, 200] and up[1].json() == up[0].json()
        history = c.get(f"/v1/memories/{mid}/history", params=scope).json()["history"]
        assert [h["event"] for h in history].count("UPDATE") == 1
        gone = [c.delete(f"/v1/memories/{mid}", params=scope, headers={"Idempotency-Key": k2}) for _ in range(2)]
        assert [r.status_code for r in gone] == [200, 200] and gone[1].headers["idempotent-replayed"] == "true"


def test_a_purge_deletes_the_kept_answers_that_quote_its_text(served):
    srv, keys, db = served
    scope, key = _scope(), str(uuid.uuid4())
    secret = "Ana's alarm code is zebra-5521"
    with srv.client(keys["ana"]) as c:
        mid = c.post("/v1/memories", json={"text": secret, **scope}, headers={"Idempotency-Key": key}
                     ).json()["decisions"][0]["memory_id"]
        assert c.post(f"/v1/memories/{mid}/purge", json=scope).status_code == 200
    with Memory(db) as m:
        assert not any("zebra-5521" in (r.body or "") for r in _all_replies(m))


def _all_replies(m: Memory) -> list[KeptReply]:
    rows = m.store._q("SELECT fingerprint, status, body, created_at FROM replies").fetchall()  # noqa: SLF001 (test)
    return [KeptReply(str(r[0]), r[1], r[2], str(r[3])) for r in rows]


def test_a_retry_on_another_server_of_one_postgresql_is_replayed(tmp_path, pg_url):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    scope, key = _scope(), str(uuid.uuid4())
    body = {"items": ["Ana's dentist is Dr. Reis", "Ana's bike is a blue Brompton"], **scope}
    with ServeProcess(pg_url, tmp_path / "keys.json", log_path=tmp_path / "a.log") as a, \
            ServeProcess(pg_url, tmp_path / "keys.json", log_path=tmp_path / "b.log") as b:
        with a.client(keys["ana"]) as ca, b.client(keys["ana"]) as cb:
            first = ca.post("/v1/memories/batch", json=body, headers={"Idempotency-Key": key})
            again = cb.post("/v1/memories/batch", json=body, headers={"Idempotency-Key": key})
            assert first.status_code == again.status_code == 200
            assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()
            assert len(cb.get("/v1/memories", params=scope).json()["memories"]) == 2


# ---- the store's kept answers ---------------------------------------------------------------------


def test_claims_keep_mismatch_stale_takeover_and_expiry(store_target):
    with Memory(store_target) as m:
        s = m.store
        args = dict(scope_key="k", now="2026-01-01T00:00:00+00:00", stale_before="2025-12-31T23:55:00+00:00")
        assert s.claim_reply("ana", "K1", fingerprint="f1", **args) is None  # claimed
        held = s.claim_reply("ana", "K1", fingerprint="f1", **args)
        assert held == KeptReply("f1", None, None, "2026-01-01T00:00:00+00:00")  # still running
        assert s.claim_reply("bob", "K1", fingerprint="f9", **args) is None  # keys are per key name
        s.keep_reply("ana", "K1", status=200, body='{"ok":1}')
        assert s.claim_reply("ana", "K1", fingerprint="f1", **args).body == '{"ok":1}'
        assert s.claim_reply("ana", "K1", fingerprint="f2", **args).fingerprint == "f1"  # the caller sees a mismatch
        # a claim never answered is taken over once stale, by the same request only
        later = dict(scope_key="k", now="2026-01-01T00:10:00+00:00", stale_before="2026-01-01T00:05:00+00:00")
        assert s.claim_reply("bob", "K1", fingerprint="f8", **later).status is None  # another request: not taken
        assert s.claim_reply("bob", "K1", fingerprint="f9", **later) is None  # taken over
        s.drop_reply("bob", "K1")
        assert s.claim_reply("bob", "K1", fingerprint="f7", **later) is None  # released: a new claim
        s.expire_replies("2026-01-01T00:05:00+00:00")
        assert s.claim_reply("ana", "K1", fingerprint="f2", **later) is None  # ana's expired: claimable again


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request, tmp_path):
    return tmp_path / "r.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def test_a_kept_answer_is_zeroed_in_the_sqlite_file_by_a_purge(tmp_path):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    db = tmp_path / "mem.db"
    with ServeProcess(db, tmp_path / "keys.json") as srv, srv.client(keys["ana"]) as c:
        mid = c.post("/v1/memories", json={"text": "the xylophone vault code is q-7730", "user_id": "ana"},
                     headers={"Idempotency-Key": "k-1"}).json()["decisions"][0]["memory_id"]
        assert c.post(f"/v1/memories/{mid}/purge", json={"user_id": "ana"}).status_code == 200
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 0
    data = db.read_bytes() + (db.with_name(db.name + "-wal").read_bytes() if db.with_name(db.name + "-wal").exists()
                              else b"")
    assert b"q-7730" not in data


def test_a_running_claim_is_kept_fresh_and_a_dead_servers_claim_is_taken_over(store_target, monkeypatch):
    """A long write is never taken over while its server lives; one whose server died is, STALE_S after."""
    import asyncio
    import time

    from memsieve.server import replies
    from memsieve.server.errors import ReplyPendingError

    monkeypatch.setattr(replies, "HEARTBEAT_S", 0.05)
    monkeypatch.setattr(replies, "STALE_S", 0.4)
    ran: list[str] = []

    async def slow(name: str) -> tuple[int, bytes]:
        ran.append(name)
        await asyncio.sleep(1.0)  # longer than STALE_S: only the heartbeat keeps it from looking dead
        return 200, b'{"done": "%s"}' % name.encode()

    async def scenario(store) -> None:
        a, b = replies.Replies(store), replies.Replies(store)  # two server processes on one store
        call = dict(key_name="ana", idem_key="K", scope_key="s", request_print="p")
        first = asyncio.create_task(a.run(**call, produce=lambda: slow("a")))
        await asyncio.sleep(0.7)
        with pytest.raises(ReplyPendingError):
            await b.run(**call, produce=lambda: slow("b"))
        assert await first == (200, b'{"done": "a"}', False)
        assert await b.run(**call, produce=lambda: slow("b")) == (200, b'{"done": "a"}', True)
        # a server that claimed and died: nothing refreshes its claim, and a retry runs once it is stale
        dead = dict(scope_key="s", fingerprint="p", now=replies._iso(time.time()),
                    stale_before=replies._iso(time.time() - 1))
        assert store.claim_reply("ana", "K2", **dead) is None
        call2 = dict(call, idem_key="K2")
        with pytest.raises(ReplyPendingError):
            await b.run(**call2, produce=lambda: slow("b"))
        await asyncio.sleep(0.5)
        assert await b.run(**call2, produce=lambda: slow("b")) == (200, b'{"done": "b"}', False)

    with Memory(store_target) as m:
        asyncio.run(scenario(m.store))
    assert ran == ["a", "b"]
