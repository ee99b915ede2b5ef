"""``memsieve serve`` against a hostile client and a careless operator: deep JSON, forged log lines, a keys file
that is not UTF-8, HEAD health checks, a replay after a grant is taken away, ids spelled with spaces, a
trailing slash, and the server-wide LLM figures in a tenant's stats."""

from __future__ import annotations

import json
import re
import signal
import uuid

import httpx
import pytest

from serve_helper import ServeProcess, cli, make_keys, wait_for


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    keys = make_keys(root / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    srv = ServeProcess(root / "mem.db", root / "keys.json").start()
    yield srv, keys, root
    assert srv.stop() == 0, srv.log()


def test_json_nested_past_the_limit_is_400_not_500(served):
    srv, keys, _ = served
    with srv.client(keys["ana"]) as c:
        bomb = c.post("/v1/search", content="[" * 100_000 + "]" * 100_000,
                      headers={"content-type": "application/json"})
        nested = '{"a":' * 5000 + "1" + "}" * 5000
        deep = c.post("/v1/search", content='{"query": "x", "user_id": "ana", "filters": ' + nested + "}",
                      headers={"content-type": "application/json"})
        for r in (bomb, deep):
            assert r.status_code == 400, r.text
            assert r.json()["error"]["type"] == "InvalidInputError"
            assert "nest" in r.json()["error"]["message"]
        ok = c.post("/v1/search", json={"query": "x", "user_id": "ana", "filters": {"k": "v"}})
        assert ok.status_code == 200, ok.text
    assert "RecursionError" not in srv.log()


def test_a_request_cannot_forge_or_extend_its_log_line(served):
    srv, _, _ = served
    rid = uuid.uuid4().hex
    forged = "/x\nmemsieve serve: request_id=forged method=POST path=/v1/compact status=200 ms=1.0 key=ops"
    with httpx.Client(base_url=srv.url) as c:
        r = c.get(forged.replace("\n", "%0A").replace(" ", "%20"), headers={"x-request-id": rid})
    assert r.status_code == 401
    assert wait_for(lambda: rid in srv.log())
    mine = [line for line in srv.log().splitlines() if rid in line]
    assert len(mine) == 1 and " key=-" in mine[0] and "key%3Dops" in mine[0] and "%0A" in mine[0]
    assert not re.search(r"^memsieve serve: request_id=forged", srv.log(), re.M)


def test_head_health_checks_need_no_key_and_carry_no_body(served):
    srv, _, _ = served
    with httpx.Client(base_url=srv.url) as c:
        for path in ("/healthz", "/readyz"):
            r = c.head(path)
            assert r.status_code == 200, (path, r.text)
            assert r.content == b""
        assert c.head("/v1/memories", params={"user_id": "ana"}).status_code == 401


def test_a_trailing_slash_is_an_unknown_route_not_a_redirect(served):
    srv, keys, _ = served
    evil = {"host": "evil.example"}
    with srv.client(keys["ana"]) as c:
        for r in (c.get("/v1/memories/", params={"user_id": "ana"}, headers=evil),
                  c.post("/v1/search/", json={"query": "x"}, headers=evil)):
            assert r.status_code == 404, r.text
            assert "location" not in r.headers and r.json()["error"]["type"] == "RouteNotFoundError"


def test_an_id_spelled_with_spaces_is_the_scope_the_memory_uses(served):
    srv, keys, _ = served
    with srv.client(keys["ana"]) as c:
        for spelled in (" ana", "ana\n", "ana "):
            r = c.get("/v1/memories", params={"user_id": spelled})
            assert r.status_code == 200, (spelled, r.text)
        added = c.post("/v1/memories", json={"text": "Ana keeps her bike in the shed", "user_id": "\tana "})
        assert added.status_code == 200, added.text
        texts = [m["text"] for m in c.get("/v1/memories", params={"user_id": "ana"}).json()["memories"]]
        assert "Ana keeps her bike in the shed" in texts
        assert c.get("/v1/memories", params={"user_id": " bob"}).status_code == 403


def test_keygen_and_the_keys_file_store_ids_as_the_memory_spells_them(tmp_path):
    path = tmp_path / "keys.json"
    done = cli("serve", "keygen", "--keys", str(path), "--user", " alice\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text())["keys"][0]["users"] == ["alice"]
    bad = cli("serve", "keygen", "--keys", str(path), "--user", "al\x07ice")
    assert bad.returncode == 2 and "control character" in bad.stderr
    assert len(json.loads(path.read_text())["keys"]) == 1


def test_a_tenant_reads_its_scope_but_not_the_servers_llm_figures(served):
    srv, keys, _ = served
    with srv.client(keys["ana"]) as c:
        mine = c.get("/v1/stats", params={"user_id": "ana"}).json()["stats"]
    with srv.client(keys["ops"]) as c:
        admin = c.get("/v1/stats", params={"user_id": "ana"}).json()["stats"]
    assert mine["llm"] is None
    assert set(admin["llm"]) >= {"calls", "prompt_tokens", "completion_tokens"}
    assert mine["events"] == admin["events"]


def _rewrite(path, change) -> None:
    data = json.loads(path.read_text())
    data["keys"] = change(data["keys"])
    path.write_text(json.dumps(data))


def test_a_replay_needs_the_grant_now_and_belongs_to_the_key_not_its_name(tmp_path):
    path = tmp_path / "keys.json"
    keys = make_keys(path, app={"user_id": "dave"}, ops={"admin": True})
    body = {"text": "Dave's locker code is 4471", "user_id": "dave"}
    idem = {"Idempotency-Key": str(uuid.uuid4())}
    with ServeProcess(tmp_path / "mem.db", path) as srv:
        with srv.client(keys["app"]) as c:
            assert c.post("/v1/memories", json=body, headers=idem).status_code == 200
            assert c.post("/v1/memories", json=body, headers=idem).headers.get("idempotent-replayed") == "true"
        # The operator moves the key from dave to erin: its kept answer about dave is dave's.
        _rewrite(path, lambda entries: [{**e, "users": ["erin"]} if e["name"] == "app" else e for e in entries])
        srv.send(signal.SIGHUP)
        assert wait_for(lambda: srv.log().count("reloaded 2 key(s)") == 1), srv.log()
        with srv.client(keys["app"]) as c:
            replay = c.post("/v1/memories", json=body, headers=idem)
        assert replay.status_code == 403, replay.text
        assert "4471" not in replay.text and "idempotent-replayed" not in replay.headers
        # The name "app" goes to a new key for dave: the old key's kept answers are not the new key's.
        _rewrite(path, lambda entries: [e for e in entries if e["name"] != "app"])
        renamed = make_keys(path, app={"user_id": "dave"})["app"]
        srv.send(signal.SIGHUP)
        assert wait_for(lambda: srv.log().count("reloaded 2 key(s)") == 2), srv.log()
        with srv.client(renamed) as c:
            mine = c.post("/v1/memories", json=body, headers=idem)
        assert mine.status_code == 200 and "idempotent-replayed" not in mine.headers, mine.text
        assert mine.json()["decisions"][0]["event"] == "NOOP"  # decided anew: an exact duplicate


def test_a_keys_file_that_is_not_utf8_is_a_one_line_error_and_a_reload_keeps_the_keys(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"keys": [{"name": "\xff"}]}')
    done = cli("serve", "--db", str(tmp_path / "x.db"), "--create", "--keys", str(bad), "--port", "0")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("memsieve: error: the keys file") and "not UTF-8" in done.stderr
    assert "Traceback" not in done.stderr
    # an integer past Python's digit limit: json raises a plain ValueError, not a JSONDecodeError
    huge = tmp_path / "huge.json"
    huge.write_bytes(b'{"keys": [' + b"7" * 5000 + b"]}")
    done = cli("serve", "--db", str(tmp_path / "x.db"), "--create", "--keys", str(huge), "--port", "0")
    assert done.returncode == 2 and done.stderr.startswith("memsieve: error: the keys file"), done.stderr
    assert "Traceback" not in done.stderr
    done = cli("serve", "keygen", "--keys", str(huge), "--user", "ana")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr

    path = tmp_path / "keys.json"
    keys = make_keys(path, ana={"user_id": "ana"}, ops={"admin": True})
    with ServeProcess(tmp_path / "mem.db", path) as srv:
        for n, broken in enumerate((b"\xff\xfe{", b"[" * 100_000, b'{"keys": [' + b"7" * 5000 + b"]}"), start=1):
            path.write_bytes(broken)
            srv.send(signal.SIGHUP)
            assert wait_for(lambda: srv.log().count("kept the 2 key(s) in force") == n), srv.log()
        with srv.client(keys["ana"]) as c:
            assert c.get("/v1/memories", params={"user_id": "ana"}).status_code == 200
        with srv.client(keys["ops"]) as c:
            metrics = c.get("/metrics").text
        assert "Traceback" not in srv.log() and "Exception in callback" not in srv.log()
    assert re.search(r'memsieve_keys_reloads_total\{result="failed"\} 3', metrics), metrics


def test_a_failed_llm_is_a_502_that_does_not_name_the_servers_llm(tmp_path):
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    with ServeProcess(tmp_path / "mem.db", tmp_path / "keys.json",
                      extra=("--llm-base-url", base, "--llm-model", "secret-model-name")) as srv:
        with srv.client(keys["ana"], timeout=120) as c:
            r = c.post("/v1/memories", json={"text": "Ana moved to Porto.", "infer": True, "user_id": "ana"})
        assert r.status_code == 502, r.text
        assert r.json()["error"]["type"] == "LLMError"
        assert str(port) not in r.text and "secret-model-name" not in r.text
        rid = r.headers["x-request-id"]
        assert wait_for(lambda: f"request_id={rid} the LLM failed" in srv.log())
        assert base in srv.log()


def _raw(srv, request: bytes) -> tuple[int, dict]:
    """Send one raw HTTP/1.1 request (for what an HTTP client will not send: a header twice)."""
    import socket
    from urllib.parse import urlparse

    u = urlparse(srv.url)
    with socket.create_connection((u.hostname, u.port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body or b"{}")


def test_ambiguous_requests_are_refused_not_read_one_way(served):
    srv, keys, _ = served
    ana, ops = keys["ana"], keys["ops"]
    with srv.client(ana) as c:
        # a key given twice: a proxy reading the first would disagree with a server reading the last
        status, body = _raw(srv, b"GET /v1/memories?user_id=ana HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + ops.encode() + b"\r\nAuthorization: Bearer " + ana.encode()
                            + b"\r\nConnection: close\r\n\r\n")
        assert status == 400 and "authorization header is given 2 times" in body["error"]["message"]
        # a JSON key given twice, a scope id above all
        r = c.post("/v1/memories", content='{"text": "dup key probe", "user_id": "bob", "user_id": "ana"}',
                   headers={"content-type": "application/json"})
        assert r.status_code == 400 and "'user_id' is given twice" in r.json()["error"]["message"]
        # a body on a method that takes none would be ignored, reason and scope in it included
        r = c.request("DELETE", f"/v1/memories/{uuid.uuid4()}?user_id=ana", content=b'{"user_id": "bob"}',
                      headers={"content-type": "application/json"})
        assert r.status_code == 400 and "takes no body" in r.json()["error"]["message"]
        # integers spelled with two signs, or a role no chat has
        assert c.get("/v1/memories", params={"user_id": "ana", "limit": "--5"}).status_code == 400
        r = c.post("/v1/memories", json={"messages": [{"role": "hacker", "content": "a role probe"}],
                                         "user_id": "ana"})
        assert r.status_code == 400 and "role" in r.json()["error"]["message"]
        # a scope id of invisible characters only, a source that is blank
        r = c.post("/v1/memories", json={"text": "an invisible scope probe", "user_id": "ana", "agent_id": "\u200b"})
        assert r.status_code == 400 and r.json()["error"]["type"] == "ScopeError"
        r = c.post("/v1/memories", json={"text": "a blank source probe", "user_id": "ana", "source": ["\u200b"]})
        assert r.status_code == 400, r.text
        # none of these wrote anything
        texts = {m["text"] for m in c.get("/v1/memories", params={"user_id": "ana", "limit": 1000}).json()["memories"]}
        assert not texts & {"dup key probe", "a role probe", "an invisible scope probe", "a blank source probe"}
    with srv.client(ops) as c:
        assert c.get("/metrics", params={"bogus": "1"}).status_code == 400
        too_many = c.post("/v1/memories/batch", json={"user_id": "ana", "items": ["x"] * 501})
        assert too_many.status_code == 400 and "at most 500 items" in too_many.json()["error"]["message"]
        too_many = c.post("/v1/memories", json={"user_id": "ana", "messages": [{"content": "x"}] * 501})
        assert too_many.status_code == 400 and "at most 500 items" in too_many.json()["error"]["message"]
    assert "Traceback" not in srv.log()


def test_a_retried_purge_is_answered_with_its_first_answer(served):
    """A purge clears the scope's kept answers (they quote texts) but not its own claim: its retry is
    replayed, not run again (a forget matched anew could reach other memories)."""
    srv, keys, _ = served
    scope = {"user_id": "ana", "run_id": uuid.uuid4().hex}
    with srv.client(keys["ana"]) as c:
        mid = c.post("/v1/memories", json={"text": "My locker code is 4471", **scope}).json()["decisions"][0]["memory_id"]
        c.post("/v1/memories", json={"text": "I cycle to work on Tuesdays", **scope})
        body = {"what": "my locker code", "purge": True, **scope}
        idem = {"Idempotency-Key": str(uuid.uuid4())}
        first = c.post("/v1/forget", json=body, headers=idem)
        assert first.status_code == 200 and [m["id"] for m in first.json()["removed"]] == [mid], first.text
        again = c.post("/v1/forget", json=body, headers=idem)
        assert again.headers.get("idempotent-replayed") == "true" and again.json() == first.json(), again.text

        other = c.post("/v1/memories", json={"text": "My bike lock code is 1234", **scope}).json()
        oid = other["decisions"][0]["memory_id"]
        idem = {"Idempotency-Key": str(uuid.uuid4())}
        first = c.post(f"/v1/memories/{oid}/purge", json=scope, headers=idem)
        again = c.post(f"/v1/memories/{oid}/purge", json=scope, headers=idem)
        assert first.status_code == 200 and again.headers.get("idempotent-replayed") == "true", again.text
        assert again.json() == first.json() and first.json()["erasure"]["memory_ids"] == [oid]


def test_a_query_string_on_a_public_route_is_a_documented_400(served):
    srv, keys, _ = served
    with srv.client(keys["ops"]) as c:
        doc = c.get("/openapi.json").json()
        for path in ("/healthz", "/readyz", "/openapi.json", "/metrics"):
            r = c.get(path, params={"x": "1"})
            assert r.status_code == 400 and r.json()["error"]["type"] == "InvalidInputError", (path, r.text)
            assert "400" in doc["paths"][path]["get"]["responses"], path


@pytest.mark.parametrize("path, payload, named", [
    ("/v1/memories/batch", {"items": [{"content": "I swim", "colour": "red"}]}, "colour"),
    ("/v1/memories/batch", {"items": [{"content": "I swim", "role": "bot"}]}, '"assistant"'),
    ("/v1/memories", {"text": "I swim", "source": [f"s{i}" for i in range(1001)]}, "at most 1000"),
    ("/v1/search", {"query": "swim", "as_of": 5}, "ISO 8601"),
    ("/v1/memories", {"text": "I swim", "infer": True}, "--llm-base-url"),
    ("/v1/search", {"query": "swim", "mode": "auto"}, "--router"),
    ("/v1/context", {"query": "swim", "mode": "auto"}, "--router"),
])
def test_a_400_names_the_fault_and_the_servers_fix(served, path, payload, named):
    srv, keys, _ = served
    with srv.client(keys["ana"]) as c:
        r = c.post(path, json={**payload, "user_id": "ana"})
    assert r.status_code == 400, r.text
    message = r.json()["error"]["message"]
    assert named in message and "Memory(" not in message, message
