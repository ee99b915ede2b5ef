"""``memsieve serve`` as a real process over HTTP: every endpoint on both stores, the OpenAPI document,
every error status, request ids, the log and the metrics."""

from __future__ import annotations

import re
import socket
import uuid

import httpx
import pytest

from serve_helper import ServeProcess, make_keys


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory):
    """One server per store for the module: (server, keys by name)."""
    root = tmp_path_factory.mktemp(f"serve-{request.param}")
    db = root / "mem.db" if request.param == "sqlite" else request.getfixturevalue("pg_server").create_schema()
    keys = make_keys(root / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    srv = ServeProcess(db, root / "keys.json").start()
    yield srv, keys
    assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def sqlite_served(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve-errors")
    keys = make_keys(root / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    srv = ServeProcess(root / "mem.db", root / "keys.json", extra=("--max-body-bytes", "4096")).start()
    yield srv, keys
    assert srv.stop() == 0, srv.log()


def _user() -> str:
    return "u" + uuid.uuid4().hex[:8]


def test_every_endpoint_answers_with_named_objects(served):
    srv, keys = served
    scope = {"user_id": "ana", "agent_id": "tour-" + uuid.uuid4().hex[:6]}
    with srv.client(keys["ana"]) as c:
        r = c.post("/v1/memories", json={"text": "My sister Maria lives in Porto", **scope,
                                         "metadata": {"topic": "family"}, "valid_from": "2024-05-08T10:00:00Z"})
        assert r.status_code == 200, r.text
        (added,) = r.json()["decisions"]
        assert added["event"] == "ADD" and added["memory_id"]
        mid = added["memory_id"]

        r = c.post("/v1/memories", json={"messages": [{"role": "user", "content": "I play the cello on Sundays"}],
                                         **scope})
        assert r.json()["decisions"][0]["event"] == "ADD"

        # the same text again: the gate says NOOP and keeps a rejection
        r = c.post("/v1/memories", json={"text": "My sister Maria lives in Porto", **scope})
        (noop,) = r.json()["decisions"]
        assert noop["event"] == "NOOP" and noop["rejection_id"]

        r = c.post("/v1/memories/batch", json={"items": ["I work as a nurse in a hospital",
                                                         {"content": "My dog is called Bolinha",
                                                          "valid_from": "2023-01-02"}], **scope})
        assert r.status_code == 200, r.text
        assert [len(ds) for ds in r.json()["decisions"]] == [1, 1]
        dog_id = r.json()["decisions"][1][0]["memory_id"]

        r = c.get("/v1/memories", params=scope)
        texts = {m["text"] for m in r.json()["memories"]}
        assert {"My sister Maria lives in Porto", "My dog is called Bolinha"} <= texts
        assert all(m["id"] for m in r.json()["memories"])

        r = c.get(f"/v1/memories/{mid}", params=scope)
        assert r.json()["memory"]["id"] == mid and r.json()["memory"]["metadata"] == {"topic": "family"}

        r = c.post("/v1/search", json={"query": "where does Maria live", "limit": 3, **scope})
        results = r.json()["results"]
        assert results[0]["id"] == mid and results[0]["date"] == "8 May 2024"

        r = c.post("/v1/search", json={"query": "Maria", "filters": {"topic": "family"}, "mode": "keyword", **scope})
        assert [x["id"] for x in r.json()["results"]] == [mid]

        r = c.post("/v1/context", json={"query": "what is the dog called", "limit": 1, "date_format": "iso", **scope})
        body = r.json()
        assert body["lines"] == ["[2023-01-02] My dog is called Bolinha"] and body["context"] == body["lines"][0]

        # the question's now: "yesterday" read against 3 January 2023 is the dog's day
        then = {"query": "What happened yesterday?", "limit": 1, "reference_time": "2023-01-03T10:00:00+00:00"}
        r = c.post("/v1/search", json={**then, **scope})
        assert r.status_code == 200, r.text
        assert [x["id"] for x in r.json()["results"]] == [dog_id]
        r = c.post("/v1/context", json={**then, "date_format": "iso", **scope})
        assert r.json()["lines"] == ["[2023-01-02] My dog is called Bolinha"]
        r = c.post("/v1/search", json={"query": "What happened yesterday?", "reference_time": "soon", **scope})
        assert r.status_code == 400 and "reference_time" in r.text

        r = c.patch(f"/v1/memories/{mid}", json={"text": "My sister Maria lives in Lisbon now", **scope})
        assert r.json()["memory"]["text"] == "My sister Maria lives in Lisbon now"
        r = c.get(f"/v1/memories/{mid}/history", params=scope)
        assert [h["new_text"] for h in r.json()["history"]][-1] == "My sister Maria lives in Lisbon now"

        r = c.get("/v1/rejections", params=scope)
        assert noop["rejection_id"] in [x["id"] for x in r.json()["rejections"]]
        r = c.post(f"/v1/rejections/{noop['rejection_id']}/restore", json=scope)
        assert r.status_code == 200 and r.json()["memory"]["text"] == "My sister Maria lives in Porto"

        r = c.post("/v1/forget", json={"what": "forget my dog", "dry_run": True, **scope})
        assert [m["id"] for m in r.json()["removed"]] == [dog_id] and r.json()["dry_run"] is True
        r = c.post("/v1/forget", json={"what": "forget my dog", **scope})
        assert r.json()["removed"][0]["is_active"] is False and r.json()["purged"] is False

        r = c.post(f"/v1/memories/{dog_id}/purge", json={"reason": "asked to erase", **scope})
        assert r.json()["erasure"]["memory_ids"] == [dog_id]
        assert c.get(f"/v1/memories/{dog_id}", params=scope).json()["memory"]["text"] != "My dog is called Bolinha"
        # compacting the store is an admin's: it rewrites every tenant's tables
        r = c.post("/v1/compact", json={})
        assert r.status_code == 403 and r.json()["error"]["type"] == "ForbiddenError"
        with srv.client(keys["ops"]) as admin:
            r = admin.post("/v1/compact", json={})
            assert r.status_code == 200, r.text
            assert r.json()["erasure"]["pending"] is False and r.json()["erasure"]["memory_ids"] == []
            r = admin.post("/v1/compact", json={"user_id": "ana"})  # store-wide: a scope is a mistake
            assert r.status_code == 400 and "user_id" in r.json()["error"]["message"]

        r = c.delete(f"/v1/memories/{mid}", params=scope)
        assert r.json()["memory"]["is_active"] is False

        r = c.get("/v1/stats", params=scope)
        assert r.status_code == 200 and isinstance(r.json()["stats"], dict)

        # consolidate: a duplicate stored after all (a restored NOOP) is merged, listed, undone, and a second
        # undo is a conflict
        c.post("/v1/memories", json={"text": "I drive a red Toyota", **scope})
        again = c.post("/v1/memories", json={"text": "I drive a red Toyota", **scope}).json()["decisions"][0]
        assert c.post(f"/v1/rejections/{again['rejection_id']}/restore", json=scope).status_code == 200
        r = c.post("/v1/consolidate", json={"dry_run": False, **scope})
        report = r.json()["consolidation"]
        assert r.status_code == 200 and report["dry_run"] is False
        merged = [m for m in report["merges"] if m["status"] == "merged"]
        assert merged, report
        r = c.get("/v1/merges", params=scope)
        assert merged[0]["id"] in [m["id"] for m in r.json()["merges"]]
        r = c.post(f"/v1/merges/{merged[0]['id']}/undo", json=scope)
        revived = {m["id"] for m in r.json()["memories"]}
        assert r.status_code == 200 and revived and revived < set(merged[0]["member_ids"])
        assert all(m["is_active"] for m in r.json()["memories"])
        r = c.post(f"/v1/merges/{merged[0]['id']}/undo", json=scope)
        assert r.status_code == 409 and r.json()["error"]["type"] == "MergeConflictError"


def test_the_document_lists_every_route_and_every_documented_route_answers(served):
    srv, keys = served
    with srv.client(keys["ops"]) as c:
        doc = c.get("/openapi.json").json()
        assert doc["openapi"] == "3.1.0"
        from memsieve.server.api import ENDPOINTS

        served_routes = {(ep.method.lower(), ep.path) for ep in ENDPOINTS}
        documented = {(m, p) for p, ops in doc["paths"].items() for m in ops}
        assert served_routes == documented
        for needed in ("/v1/memories", "/v1/memories/batch", "/v1/memories/{id}", "/v1/memories/{id}/history",
                       "/v1/search", "/v1/context", "/v1/rejections", "/v1/rejections/{id}/restore", "/v1/forget",
                       "/v1/memories/{id}/purge", "/v1/consolidate", "/v1/merges/{id}/undo", "/v1/stats",
                       "/v1/compact", "/healthz", "/readyz", "/metrics"):
            assert needed in doc["paths"], needed
        # every documented operation answers: never "no such route" or "method not allowed"
        for path, ops in doc["paths"].items():
            for method in ops:
                url = path.replace("{id}", "no-such-id")
                r = c.request(method.upper(), url, **({"json": {}} if method in ("post", "patch") else {}))
                assert r.status_code not in (405,), (method, path, r.text)
                if r.status_code == 404:
                    assert r.json()["error"]["type"] == "NotFoundError", (method, path, r.text)
                assert r.status_code < 500, (method, path, r.text)
                if r.status_code == 200 and ops[method]["responses"]["200"]["content"].get("application/json"):
                    schema = ops[method]["responses"]["200"]["content"]["application/json"]["schema"]
                    assert set(r.json()) == set(schema["required"]), (method, path)


def test_responses_have_the_documented_fields(served):
    srv, keys = served
    with srv.client(keys["ana"]) as c:
        doc = c.get("/openapi.json").json()
        scope = {"user_id": "ana", "run_id": uuid.uuid4().hex}
        r = c.post("/v1/memories", json={"text": "I collect vintage stamps", **scope})
        decision = r.json()["decisions"][0]
        assert set(doc["components"]["schemas"]["Decision"]["properties"]) == set(decision)
        memory = c.get(f"/v1/memories/{decision['memory_id']}", params=scope).json()["memory"]
        assert set(doc["components"]["schemas"]["Memory"]["required"]) == set(memory)
        hit = c.post("/v1/search", json={"query": "stamps", **scope}).json()["results"][0]
        assert set(doc["components"]["schemas"]["SearchResult"]["properties"]) == set(hit)


def test_a_memory_said_in_another_offset_is_dated_in_it(served):
    srv, keys = served
    scope = {"user_id": "ana", "run_id": uuid.uuid4().hex}
    with srv.client(keys["ana"]) as c:
        r = c.post("/v1/memories", json={"text": "I moved to Osaka for work", **scope,
                                         "valid_from": "2024-03-01T08:00:00+09:00"})
        mid = r.json()["decisions"][0]["memory_id"]
        memory = c.get(f"/v1/memories/{mid}", params=scope).json()["memory"]
        assert (memory["valid_from"], memory["valid_from_offset"]) == ("2024-02-29T23:00:00+00:00", 32400)
        (hit,) = c.post("/v1/search", json={"query": "where did I move", **scope}).json()["results"]
        assert (hit["date"], hit["valid_from_offset"]) == ("1 March 2024", 32400)
        lines = c.post("/v1/context", json={"query": "where did I move", **scope}).json()
        assert "1 March 2024" in str(lines) and "29 February" not in str(lines)


# ---- errors (one store is enough: the mapping is the server's, not the store's) -------------------------------

@pytest.mark.parametrize("payload, field", [
    ({"text": "hello there", "user_id": "ana", "infer": "yes"}, "infer"),
    ({"text": "hello there", "user_id": "ana", "infer": 1}, "infer"),
    ({"text": 42, "user_id": "ana"}, "text"),
    ({"text": "hello there", "user_id": "ana", "metadata": []}, "metadata"),
    ({"text": "hello there", "user_id": "ana", "colour": "red"}, "colour"),
    ({"text": "hello there", "user_id": 7}, "user_id"),
])
def test_wrong_types_and_unknown_fields_are_400_naming_the_field(sqlite_served, payload, field):
    srv, keys = sqlite_served
    with srv.client(keys["ana"]) as c:
        r = c.post("/v1/memories", json=payload)
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["type"] == "InvalidInputError" and field in err["message"]
        assert c.get("/v1/memories", params={"user_id": "ana"}).json()["memories"] == []


def test_every_error_status_is_json_without_a_traceback(sqlite_served):
    srv, keys = sqlite_served
    seen = {}
    with srv.client(keys["ana"]) as c, srv.client() as anon, srv.client("msk_not-a-key") as wrong:
        seen["malformed"] = c.post("/v1/memories", content=b'{"text": "hi", ', headers={"content-type": "application/json"})
        seen["not an object"] = c.post("/v1/search", json=["query"])
        seen["nan"] = c.post("/v1/search", content=b'{"query": "x", "user_id": "ana", "limit": NaN}')
        seen["empty id"] = c.post("/v1/search", json={"query": "x", "user_id": ""})
        seen["no scope"] = c.post("/v1/search", json={"query": "x"})
        seen["bad mode"] = c.post("/v1/search", json={"query": "x", "user_id": "ana", "mode": "fuzzy"})
        seen["auto mode"] = c.post("/v1/search", json={"query": "x", "user_id": "ana", "mode": "auto"})
        seen["bad time"] = c.post("/v1/search", json={"query": "x", "user_id": "ana", "as_of": "last tuesday"})
        seen["query bool"] = c.get("/v1/memories", params={"user_id": "ana", "include_inactive": "yes"})
        seen["query int"] = c.get("/v1/memories", params={"user_id": "ana", "limit": "ten"})
        seen["query unknown"] = c.get("/v1/memories", params={"user_id": "ana", "colour": "red"})
        seen["text and messages"] = c.post("/v1/memories", json={"user_id": "ana", "text": "a",
                                                                 "messages": [{"content": "b"}]})
        seen["no key"] = anon.get("/v1/memories", params={"user_id": "ana"})
        seen["wrong key"] = wrong.get("/v1/memories", params={"user_id": "ana"})
        seen["not bearer"] = c.get("/v1/stats", params={"user_id": "ana"}, headers={"Authorization": "Basic abc"})
        seen["other scope"] = c.get("/v1/memories", params={"user_id": "bob"})
        seen["metrics"] = c.get("/metrics")
        seen["unknown id"] = c.get("/v1/memories/no-such-id", params={"user_id": "ana"})
        seen["unknown rejection"] = c.post("/v1/rejections/nope/restore", json={"user_id": "ana"})
        seen["unknown merge"] = c.post("/v1/merges/nope/undo", json={"user_id": "ana"})
        seen["unknown route"] = c.get("/v1/nothing-here")
        seen["wrong method"] = c.put("/v1/search", json={})
        seen["too large"] = c.post("/v1/memories", json={"text": "x" * 5000, "user_id": "ana"})
    expected = {"malformed": (400, "InvalidInputError"), "not an object": (400, "InvalidInputError"),
                "nan": (400, "InvalidInputError"), "empty id": (400, "ScopeError"), "no scope": (400, "ScopeError"),
                "bad mode": (400, "InvalidInputError"), "auto mode": (400, "ConfigError"),
                "bad time": (400, "InvalidInputError"), "query bool": (400, "InvalidInputError"),
                "query int": (400, "InvalidInputError"), "query unknown": (400, "InvalidInputError"),
                "text and messages": (400, "InvalidInputError"),
                "no key": (401, "UnauthorizedError"), "wrong key": (401, "UnauthorizedError"),
                "not bearer": (401, "UnauthorizedError"), "other scope": (403, "ForbiddenError"),
                "metrics": (403, "ForbiddenError"), "unknown id": (404, "NotFoundError"),
                "unknown rejection": (404, "NotFoundError"), "unknown merge": (404, "NotFoundError"),
                "unknown route": (404, "RouteNotFoundError"), "wrong method": (405, "MethodNotAllowedError"),
                "too large": (413, "BodyTooLargeError")}
    for name, r in seen.items():
        err = r.json()["error"]
        assert (r.status_code, err["type"]) == expected[name], (name, r.status_code, r.text)
        assert "Traceback" not in r.text and err["message"] == err["message"].strip() and "\n" not in err["message"]
        assert not err["message"][0].isupper(), (name, err["message"])
    assert seen["no key"].headers["www-authenticate"] == "Bearer"
    assert "Traceback" not in srv.log()


def test_a_chunked_body_over_the_limit_is_413(sqlite_served):
    srv, keys = sqlite_served

    def chunks():
        for _ in range(10):
            yield b" " * 1000  # 10 kB of whitespace, no Content-Length

    with srv.client(keys["ana"]) as c:
        r = c.post("/v1/search", content=chunks())
        assert r.status_code == 413 and r.json()["error"]["type"] == "BodyTooLargeError"
        assert "4096" in r.json()["error"]["message"]


def test_a_raw_malformed_request_gets_an_answer_not_a_hang(sqlite_served):
    srv, keys = sqlite_served
    host, port = re.match(r"http://([^:]+):(\d+)", srv.url).groups()
    answer: bytes | str
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + keys["ana"].encode()
                  + b"\r\nContent-Length: 6\r\nConnection: close\r\n\r\n{\"q\":\x00")
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
        answer = answer.decode("latin-1")
    assert answer.startswith("HTTP/1.1 400") and "InvalidInputError" in answer


def test_request_ids_are_echoed_or_made_and_logged(sqlite_served):
    srv, keys = sqlite_served
    with srv.client(keys["ana"]) as c:
        r = c.get("/v1/memories", params={"user_id": "ana"}, headers={"X-Request-Id": "trace-abc.123"})
        assert r.headers["x-request-id"] == "trace-abc.123"
        made = c.get("/v1/memories", params={"user_id": "ana"}, headers={"X-Request-Id": "bad id\twith tab"})
        assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
        refused = httpx.get(srv.url + "/v1/stats", headers={"X-Request-Id": "refused-1"})
        assert refused.status_code == 401 and refused.headers["x-request-id"] == "refused-1"
    log = srv.log()
    assert re.search(r"request_id=trace-abc\.123 method=GET path=/v1/memories status=200 ms=[\d.]+ key=ana", log)
    assert f"request_id={made.headers['x-request-id']} " in log
    assert "request_id=refused-1 method=GET path=/v1/stats status=401" in log
    assert keys["ana"] not in log  # a key is never logged


def samples(text: str) -> dict[str, float]:
    """A /metrics page's samples: 'name{labels}' -> value."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def test_health_readiness_and_metrics(sqlite_served):
    srv, keys = sqlite_served
    with srv.client(keys["ops"]) as admin:
        before = samples(admin.get("/metrics").text)
    assert httpx.get(srv.url + "/healthz").json() == {"status": "ok"}
    assert httpx.get(srv.url + "/readyz").json() == {"status": "ready"}
    with srv.client(keys["ana"]) as c:
        c.post("/v1/memories", json={"text": "I am allergic to peanuts", "user_id": "ana", "run_id": "m1"})
        c.post("/v1/memories", json={"text": "I am allergic to peanuts", "user_id": "ana", "run_id": "m1"})
        c.get("/v1/memories/nope", params={"user_id": "ana"})
    with srv.client(keys["ops"]) as admin:
        r = admin.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = r.text
    after = samples(text)

    def grew(series: str) -> float:
        return after[series] - before.get(series, 0.0)

    assert grew('memsieve_http_requests_total{method="GET",route="/v1/memories/{id}",status="404"}') == 1
    assert grew('memsieve_decisions_total{event="ADD"}') == 1
    assert grew('memsieve_decisions_total{event="NOOP"}') == 1
    assert grew('memsieve_http_request_duration_seconds_bucket{method="POST",route="/v1/memories",le="+Inf"}') == 2
    assert after["memsieve_workers"] == 1 and "pid=" not in text
    # every sample line is "name{labels} number"
    for line in text.splitlines():
        assert line.startswith("# ") or re.fullmatch(r'[a-z_]+(\{(\w+="[^"]*",?)*\})? [0-9.e+-]+', line), line


def test_search_shows_a_fold_and_forget_says_it_took_it(served):
    """A text folded into a memory reaches a client with its search hit (``folded``), and a forget
    that names its words says so (``folds``), dry or not, on both stores."""
    srv, keys = served
    scope = {"user_id": "ana", "agent_id": "folds-" + uuid.uuid4().hex[:6]}
    market = "I love going to the farmers market on Saturday mornings to buy fresh vegetables."
    again = "I really love visiting the farmers market every Saturday morning for fresh vegetables and flowers."
    with srv.client(keys["ana"]) as c:
        c.post("/v1/memories/batch", json={"items": ["My sister Ana works as a nurse in Boston.",
                                                     "I adopted a cat named Miso last year."], **scope})
        first = c.post("/v1/memories", json={"text": market, **scope}).json()["decisions"][0]
        later = c.post("/v1/memories", json={"text": again, **scope}).json()["decisions"][0]
        assert later["event"] == "NOOP" and later["memory_id"] == first["memory_id"], later
        hits = c.post("/v1/search", json={"query": "the farmers market", "limit": 3, **scope}).json()["results"]
        (hit,) = [h for h in hits if h["id"] == first["memory_id"]]
        assert [f["id"] for f in hit["folded"]] == [later["rejection_id"]]

        dry = c.post("/v1/forget", json={"what": "the flowers", "dry_run": True, **scope}).json()
        assert dry["removed"] == [] and [f["id"] for f in dry["folds"]] == [later["rejection_id"]]
        assert dry["folds"][0]["forgotten_at"] is None
        done = c.post("/v1/forget", json={"what": "the flowers", **scope}).json()
        assert done["removed"] == [] and done["folds"][0]["forgotten_at"] is not None
        hits = c.post("/v1/search", json={"query": "the farmers market", "limit": 3, **scope}).json()["results"]
        assert [h["folded"] for h in hits if h["id"] == first["memory_id"]] == [[]]
