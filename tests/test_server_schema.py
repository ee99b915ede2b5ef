"""The OpenAPI document says what the service accepts, and the service does what it says.

Rules the document states but the request checker leaves to their owners (a
scope id's pattern, a text's, "name a scope", "text or messages") are compared
with those owners here, and schemathesis drives a real ``memsieve serve``
process with requests generated from the document the process serves: every
request the document allows must be answered with a success or a documented
status other than 400 (positive_data_acceptance), every request it forbids
must be refused (negative_data_rejection), no 5xx, every response must match
its published schema, and a 405 must name the path's methods (Allow).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serve_helper import ServeProcess, make_keys

from memsieve.errors import InvalidInputError, ScopeError
from memsieve.inputs import check_text
from memsieve.scope import ID_PATTERN, MAX_ID_CHARS, Scope
from memsieve.server import api, shapes

HERE = Path(__file__).resolve().parent

# Text of every kind but lone surrogates (which UTF-8 JSON cannot carry and the pattern leaves out):
# spaces of several scripts, C0 and C1 controls, NUL, combining marks.
_chars = st.characters(exclude_categories=("Cs",)) | st.sampled_from(
    [" ", "\t", "\n", "\x00", "\x1f", "\x7f", "\x85", "\x9f", "\xa0", "\u3000", "\u2028", "\u0301",
     "\u00ad", "\u200b", "\u202e", "\u2066", "\ufeff"])
texts = st.text(_chars, max_size=40)


def _scope_ok(value: str) -> bool:
    try:
        Scope.of(user_id=value)
    except ScopeError:
        return False
    return True


def _text_ok(value: str) -> bool:
    try:
        check_text(value, where="text")
    except InvalidInputError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_published_id_pattern_is_the_rule_scope_enforces(value):
    assert (re.search(ID_PATTERN, value) is not None) == _scope_ok(value)


def test_the_published_id_length_is_the_rule_scope_enforces():
    schema = shapes.SCOPE_PROPS["user_id"]
    assert schema["maxLength"] == MAX_ID_CHARS and schema["minLength"] == 1
    assert _scope_ok("u" * MAX_ID_CHARS) and not _scope_ok("u" * (MAX_ID_CHARS + 1))
    # NFC can shorten an id, never lengthen it past what the raw length says
    assert len(unicodedata.normalize("NFC", "e\u0301" * 200)) == 200 and _scope_ok("e\u0301" * 200)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_published_text_pattern_is_the_rule_the_memory_enforces(value):
    assert (re.search(shapes.TEXT_PATTERN, value) is not None) == _text_ok(value)


def test_every_body_that_needs_a_scope_says_so_and_by_id_bodies_do_not():
    scoped = {ep.operation_id for ep in api.ENDPOINTS if ep.body is not None and "not" in ep.body}
    assert scoped == {"addMemory", "addMemories", "search", "context", "forget", "consolidate"}
    doc = api.openapi_document(version="test", router=False, llm=False)
    add = doc["paths"]["/v1/memories"]["post"]["requestBody"]
    assert add["required"] is True
    body = add["content"]["application/json"]["schema"]
    assert body["properties"]["infer"]["enum"] == [False]
    search = doc["paths"]["/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "auto" not in search["properties"]["mode"]["enum"]
    with_both = api.openapi_document(version="test", router=True, llm=True)
    body = with_both["paths"]["/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "auto" in body["properties"]["mode"]["enum"]
    # the checked schema is never narrowed: the handler answers 400 with the fix
    assert "auto" in shapes.SEARCH_MODE["enum"]


def test_a_405_names_every_method_of_the_path():
    assert api.methods_of("/v1/memories/0193") == ["GET", "HEAD", "PATCH", "DELETE"]
    assert api.methods_of("/v1/memories/batch") == ["POST"]
    assert api.methods_of("/v1/memories/") == ["POST", "GET", "HEAD"]
    assert api.methods_of("/v1/nothing") == []


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("schema")
    keys = make_keys(tmp / "keys.json", ops={"admin": True})
    with ServeProcess(tmp / "m.db", tmp / "keys.json") as srv:
        yield srv, keys["ops"], tmp


def test_a_405_on_a_live_server_carries_the_allow_header(served):
    srv, key, _ = served
    with srv.client(key) as c:
        r = c.request("OPTIONS", "/v1/memories/0193")
        assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, PATCH, DELETE"
        assert r.json()["error"]["type"] == "MethodNotAllowedError"
        assert c.put("/v1/memories/batch").headers["allow"] == "POST"
        # a literal path is not an id: GET, PATCH and DELETE on it are refused, not looked up
        for method in ("GET", "PATCH", "DELETE"):
            r = c.request(method, "/v1/memories/batch", params={"user_id": "u"})
            assert r.status_code == 405 and r.headers["allow"] == "POST", (method, r.status_code, r.text)
        assert c.post("/v1/memories/batch", json={"items": ["a fact"], "user_id": "u"}).status_code == 200


def test_an_integral_number_is_an_integer_and_a_fraction_is_not(served):
    srv, key, _ = served
    with srv.client(key) as c:
        ok = c.post("/v1/search", json={"query": "tea", "user_id": "ana", "limit": 3.0})
        assert ok.status_code == 200, ok.text
        bad = c.post("/v1/search", json={"query": "tea", "user_id": "ana", "limit": 2.5})
        assert bad.status_code == 400 and "limit" in bad.json()["error"]["message"]


def test_a_batch_item_with_both_content_and_text_is_refused(served):
    srv, key, _ = served
    with srv.client(key) as c:
        r = c.post("/v1/memories/batch", json={"user_id": "ana", "items": [{"content": "tea", "text": ""}]})
        assert r.status_code == 400 and "both 'content' and 'text'" in r.json()["error"]["message"]
        assert c.get("/v1/memories", params={"user_id": "ana"}).json()["memories"] == []


def test_schemathesis_finds_the_service_as_its_document_says(served):
    srv, key, tmp = served
    with srv.client(key) as c:
        (tmp / "openapi.json").write_text(json.dumps(c.get("/openapi.json").json()))
    env = dict(os.environ, SCHEMATHESIS_HOOKS="schemathesis_hooks",
               PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # use_after_free: a deleted memory stays readable by id, by design (deletes are soft).
    # missing_required_header: the key goes on every request with -H, so a request "without" it has it.
    cmd = [sys.executable, "-m", "schemathesis.cli", "run", str(tmp / "openapi.json"), "--url", srv.url,
           "-H", f"Authorization: Bearer {key}", "--checks", "all",
           "--exclude-checks", "use_after_free,missing_required_header",
           "--max-examples", "15", "--seed", "20261204", "--workers", "1", "--no-color",
           # the coverage phase sends a batch at its item cap (500) in one-item transactions: slow on a loaded machine
           "--request-timeout", "180"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, cwd=tmp)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.search(r"\d+ generated, \d+ passed", done.stdout), done.stdout[-2000:]
