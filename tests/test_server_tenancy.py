"""Tenancy by key in ``memsieve serve``: a key touches only the scopes it grants (403 before anything is
read), another tenant's id answers exactly as an unknown one (404), no answer carries another tenant's
memory, admin keys, and ``memsieve serve keygen``."""

from __future__ import annotations

import hashlib
import json
import os
import stat

import pytest

from serve_helper import ServeProcess, cli, make_keys

BOB = {"user_id": "bob", "agent_id": "planner"}
BOB_SECRET = "Bob's bank PIN is 4921 and his locker code is 7788"


@pytest.fixture(scope="module")
def tenants(tmp_path_factory):
    """A server with ana (every scope of user ana), bob (exactly bob/planner) and an admin; bob's data seeded."""
    root = tmp_path_factory.mktemp("tenancy")
    keys = make_keys(root / "keys.json", ana={"user_id": "ana"}, bob={"user_id": "bob", "agent_id": "planner"},
                     ops={"admin": True})
    srv = ServeProcess(root / "mem.db", root / "keys.json").start()
    with srv.client(keys["bob"]) as c:
        secret_id = c.post("/v1/memories", json={"text": BOB_SECRET, **BOB}).json()["decisions"][0]["memory_id"]
        c.post("/v1/memories", json={"text": "Bob prefers window seats on trains", **BOB})
        noop = c.post("/v1/memories", json={"text": BOB_SECRET, **BOB}).json()["decisions"][0]
        assert noop["event"] == "NOOP"
        c.post(f"/v1/rejections/{noop['rejection_id']}/restore", json=BOB)  # a duplicate, to merge
        merges = c.post("/v1/consolidate", json=BOB).json()["consolidation"]["merges"]
        merge_id = next(m["id"] for m in merges if m["status"] == "merged")
        c.post(f"/v1/merges/{merge_id}/undo", json=BOB)
        rejection_id = c.post("/v1/memories", json={"text": "Bob prefers window seats on trains", **BOB}
                              ).json()["decisions"][0]["rejection_id"]
        assert rejection_id
        c.post("/v1/consolidate", json=BOB)  # a merge in force, for the undo below
        merge_id = c.get("/v1/merges", params=BOB).json()["merges"][-1]["id"]
    with srv.client(keys["ana"]) as c:
        c.post("/v1/memories", json={"text": "Ana grows tomatoes on her balcony", "user_id": "ana"})
    ids = {"memory": secret_id, "rejection": rejection_id, "merge": merge_id}
    yield srv, keys, ids
    assert srv.stop() == 0, srv.log()


def _bob_state(srv, keys):
    with srv.client(keys["bob"]) as c:
        return sorted((m["id"], m["text"], m["is_active"])
                      for m in c.get("/v1/memories", params={**BOB, "include_inactive": "true"}).json()["memories"])


def test_a_scope_the_key_does_not_grant_is_403_and_nothing_is_read_or_written(tenants):
    srv, keys, ids = tenants
    before = _bob_state(srv, keys)
    calls = [("POST", "/v1/memories", {"text": "injected by ana", **BOB}),
             ("POST", "/v1/memories/batch", {"items": ["injected by ana"], **BOB}),
             ("GET", "/v1/memories", BOB), ("GET", "/v1/rejections", BOB), ("GET", "/v1/stats", BOB),
             ("GET", "/v1/merges", BOB), ("GET", "/v1/faults", BOB), ("POST", "/v1/search", {"query": "PIN", **BOB}),
             ("POST", "/v1/context", {"query": "PIN", **BOB}), ("POST", "/v1/forget", {"what": "PIN", **BOB}),
             ("POST", "/v1/consolidate", BOB), ("GET", f"/v1/memories/{ids['memory']}", BOB),
             ("PATCH", f"/v1/memories/{ids['memory']}", {"text": "overwritten", **BOB}),
             ("DELETE", f"/v1/memories/{ids['memory']}", BOB),
             ("GET", f"/v1/memories/{ids['memory']}/history", BOB),
             ("POST", f"/v1/memories/{ids['memory']}/purge", BOB),
             ("POST", f"/v1/rejections/{ids['rejection']}/restore", BOB),
             ("POST", f"/v1/merges/{ids['merge']}/undo", BOB),
             # ana's key names bob in part of a scope: still not ana's
             ("GET", "/v1/memories", {"user_id": "bob"}), ("GET", "/v1/memories", {"agent_id": "planner"})]
    with srv.client(keys["ana"]) as c:
        for method, path, args in calls:
            kw = {"params": args} if method in ("GET", "DELETE") else {"json": args}
            r = c.request(method, path, **kw)
            assert r.status_code == 403, (method, path, r.text)
            assert r.json()["error"]["type"] == "ForbiddenError" and "'ana'" in r.json()["error"]["message"]
            assert BOB_SECRET not in r.text and ids["memory"] not in r.text
    assert _bob_state(srv, keys) == before


def test_an_exact_scope_key_grants_that_triple_only(tenants):
    srv, keys, _ = tenants
    with srv.client(keys["bob"]) as c:
        assert c.get("/v1/memories", params=BOB).status_code == 200
        for other in ({"user_id": "bob"}, {**BOB, "run_id": "r1"}, {"user_id": "bob", "agent_id": "other"},
                      {"user_id": "ana"}):
            r = c.get("/v1/memories", params=other)
            assert r.status_code == 403, (other, r.text)
    with srv.client(keys["ana"]) as c:  # a user grant covers every agent and run of the user
        assert c.get("/v1/memories", params={"user_id": "ana", "agent_id": "x", "run_id": "y"}).status_code == 200


def test_another_tenants_id_answers_exactly_as_an_unknown_id(tenants):
    srv, keys, ids = tenants
    before = _bob_state(srv, keys)
    ana = {"user_id": "ana"}
    fake = {"memory": "00000000-0000-0000-0000-000000000000", "rejection": "00000000-0000-0000-0000-000000000001",
            "merge": "00000000-0000-0000-0000-000000000002"}
    routes = [("GET", "/v1/memories/{id}", "memory", None), ("GET", "/v1/memories/{id}/history", "memory", None),
              ("PATCH", "/v1/memories/{id}", "memory", {"text": "overwritten"}),
              ("DELETE", "/v1/memories/{id}", "memory", None), ("POST", "/v1/memories/{id}/purge", "memory", {}),
              ("POST", "/v1/rejections/{id}/restore", "rejection", {}),
              ("POST", "/v1/merges/{id}/undo", "merge", {})]
    with srv.client(keys["ana"]) as c:
        for method, template, kind, extra in routes:
            answers = []
            for the_id in (ids[kind], fake[kind]):
                kw = {"params": ana} if extra is None else {"json": {**extra, **ana}}
                r = c.request(method, template.replace("{id}", the_id), **kw)
                answers.append((r.status_code, r.text.replace(the_id, "ID"), set(r.headers) - {"x-request-id"}))
            assert answers[0] == answers[1], (method, template, answers)
            assert answers[0][0] == 404 and json.loads(answers[0][1])["error"]["type"] == "NotFoundError"
    assert _bob_state(srv, keys) == before


def test_no_answer_to_one_tenant_carries_another_tenants_memory(tenants):
    srv, keys, ids = tenants
    texts = []
    with srv.client(keys["ana"]) as c:
        for scope in ({"user_id": "ana"}, {"user_id": "ana", "agent_id": "planner"}):
            texts += [c.post("/v1/search", json={"query": "bank PIN locker code", "limit": 50, **scope}).text,
                      c.post("/v1/search", json={"query": "PIN", "mode": "keyword", **scope}).text,
                      c.post("/v1/context", json={"query": "what is Bob's PIN", **scope}).text,
                      c.get("/v1/memories", params={**scope, "include_inactive": "true"}).text,
                      c.get("/v1/rejections", params=scope).text, c.get("/v1/merges", params=scope).text,
                      c.get("/v1/stats", params=scope).text,
                      c.post("/v1/forget", json={"what": "forget Bob's PIN", "dry_run": True, **scope}).text,
                      c.post("/v1/consolidate", json={"dry_run": True, **scope}).text]
            # a near-duplicate of bob's secret in ana's scope is judged against ana's memories only
            d = c.post("/v1/memories", json={"text": BOB_SECRET, **scope}).json()["decisions"][0]
            assert d["event"] == "ADD", d
            texts.append(json.dumps(d))
            c.delete(f"/v1/memories/{d['memory_id']}", params=scope)
    joined = "\n".join(texts)
    assert "tomatoes" in joined  # ana does see her own memory
    assert ids["memory"] not in joined and ids["rejection"] not in joined and ids["merge"] not in joined
    assert "window seats" not in joined


def test_an_admin_key_reaches_every_scope_and_calls_by_id_without_one(tenants):
    srv, keys, ids = tenants
    with srv.client(keys["ops"]) as c:
        r = c.get(f"/v1/memories/{ids['memory']}")
        assert r.status_code == 200 and r.json()["memory"]["text"] == BOB_SECRET
        assert c.get(f"/v1/memories/{ids['memory']}", params={"user_id": "ana"}).status_code == 404
        assert BOB_SECRET in c.get("/v1/memories", params=BOB).text
        assert c.get("/metrics").status_code == 200
        r = c.get("/v1/memories")  # listing still needs a scope, even for an admin
        assert r.status_code == 400 and r.json()["error"]["type"] == "ScopeError"
    with srv.client(keys["ana"]) as c:  # without a scope, a tenant's call by id is bad input, not a lookup
        r = c.get(f"/v1/memories/{ids['memory']}")
        assert r.status_code == 400 and r.json()["error"]["type"] == "ScopeError"


# ---- keygen and the keys file ----------------------------------------------------------------------------------

def test_keygen_writes_a_private_file_with_the_digest_only_and_prints_the_key_once(tmp_path):
    path = tmp_path / "sub" / "keys.json"
    path.parent.mkdir()
    done = cli("serve", "keygen", "--keys", str(path), "--user", "ana", "--name", "ana-app")
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert key.startswith("msk_") and len(key) > 40 and done.stdout.count(key) == 1 and key not in done.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text()
    assert key not in text
    (entry,) = json.loads(text)["keys"]
    assert entry["sha256"] == hashlib.sha256(key.encode()).hexdigest() and entry["users"] == ["ana"]

    done = cli("serve", "keygen", "--keys", str(path), "--user", "bob", "--agent", "planner", "--name", "bob")
    assert done.returncode == 0, done.stderr
    entries = json.loads(path.read_text())["keys"]
    assert [e["name"] for e in entries] == ["ana-app", "bob"]
    assert entries[1]["scopes"] == [{"user_id": "bob", "agent_id": "planner", "run_id": None}]
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".keys-")] == []  # no temp file left

    for argv, says in ((["--user", "x", "--name", "bob"], "named 'bob' already"),
                       (["--admin", "--user", "x"], "without --user"), ([], "must grant something")):
        done = cli("serve", "keygen", "--keys", str(path), *argv)
        assert done.returncode == 2 and says in done.stderr and done.stdout == "", (argv, done.stderr)
    assert len(json.loads(path.read_text())["keys"]) == 2


@pytest.mark.parametrize("content, says", [
    ('{"keys": [{"name": "a", "key": "msk_cleartext", "users": ["ana"]}]}', "unknown field(s) ['key']"),
    ('{"keys": [{"name": "a", "sha256": "abc", "users": ["ana"]}]}', "64 lowercase hex"),
    ('{"keys": [{"name": "a", "sha256": "' + "0" * 64 + '"}]}', "grants nothing"),
    ("{not json", "is not JSON"),
])
def test_a_bad_keys_file_stops_the_server_before_it_listens(tmp_path, content, says):
    keys = tmp_path / "keys.json"
    keys.write_text(content)
    done = cli("serve", "--db", str(tmp_path / "m.db"), "--create", "--keys", str(keys), "--port", "0")
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "listening" not in done.stderr


def test_serve_without_keys_or_a_database_says_what_to_pass(tmp_path):
    done = cli("serve", "--db", str(tmp_path / "m.db"), "--create", "--port", "0")
    assert done.returncode == 2 and "--keys" in done.stderr
    make_keys(tmp_path / "keys.json", a={"user_id": "ana"})
    done = cli("serve", "--db", str(tmp_path / "missing.db"), "--keys", str(tmp_path / "keys.json"), "--port", "0")
    assert done.returncode == 2 and "no database at" in done.stderr and not (tmp_path / "missing.db").exists()


def test_the_whole_stores_size_is_an_admins_to_read(tenants):
    """A tenant polling the store's size would see when and how much other tenants write."""
    srv, keys, _ = tenants
    with srv.client(keys["bob"]) as c:
        assert c.get("/v1/stats", params=BOB).json()["stats"]["store_bytes"] is None
        assert c.get("/v1/scopes").json()["store_bytes"] is None
    with srv.client(keys["ops"]) as c:
        assert c.get("/v1/stats", params=BOB).json()["stats"]["store_bytes"] > 0
        assert c.get("/v1/scopes").json()["store_bytes"] > 0
