"""``memsieve serve``'s LLM and router options: ``infer`` and the band's CRUD step through a real
llama.cpp server, ``mode: "auto"`` through a saved router, and malformed options refused at start."""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory, Scope
from memsieve.router import (CalibrationSample, NearestCentroidClassifier, QueryRouter, RoutedSearch,
                             build_routing_table)

from serve_helper import ServeProcess, cli, make_keys

pytestmark = pytest.mark.slow


def test_infer_and_the_band_go_to_the_llm_the_server_was_given(tmp_path, llama_server):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    extra = ("--llm-base-url", llama_server.base_url, "--llm-model", llama_server.model_id)
    with ServeProcess(tmp_path / "mem.db", tmp_path / "keys.json", extra=extra) as srv, \
            srv.client(keys["ana"], timeout=300) as c:
        r = c.post("/v1/memories", json={"messages": [{"role": "user", "content": "I moved to Lisbon last May and "
                                                                                  "I work as a nurse."}],
                                         "infer": True, "user_id": "ana"})
        assert r.status_code == 200, r.text
        decided = r.json()["decisions"]
        assert decided and all(d["event"] in ("ADD", "UPDATE", "DELETE", "NOOP") for d in decided)
        stats = c.get("/v1/stats", params={"user_id": "ana"}).json()["stats"]
        assert stats["llm"] is None and sum(stats["events"].values()) == len(decided)  # the server's, not ana's
        with srv.client(keys["ops"]) as admin:
            assert admin.get("/v1/stats", params={"user_id": "ana"}).json()["stats"]["llm"]["calls"] >= 1
        faults = c.get("/v1/faults", params={"user_id": "ana"})
        assert faults.status_code == 200
    with Memory(tmp_path / "mem.db") as m:  # whatever the model got wrong, the route lists exactly that
        assert faults.json()["faults"] == [dict(f, raw=f.get("raw")) for f in m.faults(user_id="ana")]


def test_without_an_llm_infer_is_a_400_that_names_the_option(tmp_path):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"}, bob={"user_id": "bob"})
    with Memory(tmp_path / "mem.db") as m, m.store.transaction(Scope.of("ana")) as tx:
        tx.add_fault(Scope.of("ana"), kind="invalid_json", detail="no JSON object", raw="{oops", now="2026-01-01")
    with ServeProcess(tmp_path / "mem.db", tmp_path / "keys.json") as srv, srv.client(keys["ana"]) as c:
        assert c.get("/v1/faults", params={"user_id": "ana"}).json() == {"faults": [
            {"kind": "invalid_json", "detail": "no JSON object", "raw": "{oops", "created_at": "2026-01-01"}]}
        with srv.client(keys["bob"]) as cb:
            assert cb.get("/v1/faults", params={"user_id": "bob"}).json() == {"faults": []}
            assert cb.get("/v1/faults", params={"user_id": "ana"}).status_code == 403
        r = c.post("/v1/memories", json={"text": "I moved to Lisbon", "infer": True, "user_id": "ana"})
        assert r.status_code == 400 and r.json()["error"]["type"] == "ConfigError"
        r = c.post("/v1/search", json={"query": "where", "mode": "auto", "user_id": "ana"})
        assert r.status_code == 400 and "router" in r.json()["error"]["message"]


def test_mode_auto_takes_the_saved_routers_route(tmp_path, embedder):
    facts = ["Ana moved to Lisbon in May 2021.", "Ana adopted a grey cat called Pixel.",
             "Ana started learning the cello in 2019.", "Ana's favourite food is grilled sardines."]
    questions = {"temporal": ["When did Ana move to Lisbon?", "When did Ana start the cello?"],
                 "single-hop": ["What is Ana's favourite food?", "What is the cat called?"]}
    texts = [q for qs in questions.values() for q in qs]
    labels = [c for c, qs in questions.items() for _ in qs]
    clf = NearestCentroidClassifier(min_margin=0.0).fit(embedder.embed(texts), labels)
    samples = ([CalibrationSample("temporal", "keyword", 2.0, 1.0)] * 10
               + [CalibrationSample("temporal", "dense", 1.0, 0.0)] * 10
               + [CalibrationSample("single-hop", "dense", 1.0, 1.0)] * 10
               + [CalibrationSample("single-hop", "keyword", 1.0, 0.0)] * 10)
    router = QueryRouter(build_routing_table(samples, preset="maximize-accuracy", fallback={}), clf)
    router.save(tmp_path / "router.json")
    db = tmp_path / "mem.db"
    with Memory(db, embedder=embedder, gate=GateConfig(profile="none")) as m:
        for f in facts:
            m.add(f, user_id="ana")
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    with ServeProcess(db, tmp_path / "keys.json", extra=("--router", str(tmp_path / "router.json"))) as srv, \
            srv.client(keys["ana"]) as c, Memory(db, embedder=embedder) as local:
        routed = RoutedSearch.from_router(local, QueryRouter.load(tmp_path / "router.json"))
        for q in ["When did Ana move to Lisbon?", "What is the cat called?"]:
            r = c.post("/v1/search", json={"query": q, "mode": "auto", "limit": 2, "user_id": "ana"})
            assert r.status_code == 200, r.text
            expected, decision = routed.search(q, user_id="ana", limit=2)
            assert [h["id"] for h in r.json()["results"]] == [h.id for h in expected], decision


@pytest.mark.parametrize("args,says", [
    (("--llm-base-url", "localhost:8080"), "--llm-base-url takes an http(s) URL"),
    (("--llm-api-key-env", "MY KEY"), "--llm-api-key-env takes the name"),
    (("--router", "/nonexistent/router.json"), "no router file at"),
])
def test_malformed_llm_and_router_options_stop_the_start(tmp_path, args, says):
    make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    r = cli("serve", "--db", str(tmp_path / "m.db"), "--create", "--keys", str(tmp_path / "keys.json"), "--port", "0",
            *args)
    assert r.returncode == 2 and says in r.stderr, r.stderr
