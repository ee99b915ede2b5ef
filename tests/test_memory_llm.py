"""The band through an LLM, on the Memory API: guarded UPDATE/DELETE, faults recorded, nothing lost.

The decision logic under adversarial output uses the scripted server; the real
llama.cpp server check lives in test_llm_real.py.
"""

from __future__ import annotations

import pytest

from conftest import unit
from memsieve import GateConfig, Memory
from memsieve.llm import LLMConfig
from scripted_llm import ScriptedLLM

# tau fixed at 0.1 with a band of 0.3: anything with novelty in [0.1, 0.4) goes to the LLM.
GATE = GateConfig(profile="maxcos", tau=0.1, delta=0.3)


@pytest.fixture()
def llm_mem(tmp_path, table_embedder):
    table_embedder.table.update({
        "Ana has a dog named Buddy.": unit(1, 0, 0),
        "Ana adopted a second dog, Scout.": unit(1, 0.8, 0),      # cos 0.78 to Buddy: in the band
        "Ana lives in Porto.": unit(0, 0, 1),
        "Ana moved from Porto to Lisbon.": unit(0, 0.75, 1),      # cos 0.8 to Porto: in the band
        "Ana lives in Lisbon now.": unit(0, 0.9, 1),
    })
    with ScriptedLLM() as server:
        m = Memory(tmp_path / "m.db", embedder=table_embedder, gate=GATE,
                   llm=LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5))
        yield m, server, table_embedder
        m.close()


def test_in_range_but_wrong_delete_is_stopped_by_the_target_check(llm_mem):
    m, server, emb = llm_mem
    m.add(["Ana has a dog named Buddy.", "Ana lives in Porto."], user_id="ana")
    # The new dog is about Buddy (cos 0.78, in the band); the model points DELETE at
    # the Porto memory instead: a valid index, the wrong target (cos 0.0).
    seqs_text = ["Ana has a dog named Buddy.", "Ana lives in Porto."]
    server.reply_json({"event": "DELETE", "index": 1, "text": None, "reason": "contradiction"})
    (d,) = m.add("Ana adopted a second dog, Scout.", user_id="ana")
    assert server.requests, "the band must have asked the LLM"
    assert d.event == "ADD" and d.layer == "llm" and d.fault == "guard_rejected"
    assert {it.text for it in m.get_all(user_id="ana")} == set(seqs_text) | {"Ana adopted a second dog, Scout."}
    assert m.faults(user_id="ana")[0]["kind"] == "guard_rejected"


def test_guarded_update_keeps_old_text_in_history(llm_mem):
    m, server, emb = llm_mem
    (porto,) = m.add("Ana lives in Porto.", user_id="ana")
    server.reply_json({"event": "UPDATE", "index": 0, "text": "Ana lives in Lisbon now.", "reason": "moved"})
    (d,) = m.add("Ana moved from Porto to Lisbon.", user_id="ana", source="t9")
    assert d.event == "UPDATE" and d.memory_id == porto.memory_id and d.fault is None
    item = m.get(porto.memory_id)
    assert item.text == "Ana lives in Lisbon now." and "t9" in item.sources
    hist = m.history(porto.memory_id)
    assert hist[-1].event == "UPDATE" and hist[-1].old_text == "Ana lives in Porto."


def test_delete_is_soft_and_the_new_fact_is_kept(llm_mem):
    m, server, emb = llm_mem
    (porto,) = m.add("Ana lives in Porto.", user_id="ana")
    server.reply_json({"event": "DELETE", "index": 0, "text": None, "reason": "she moved"})
    (d,) = m.add("Ana moved from Porto to Lisbon.", user_id="ana")
    assert d.event == "DELETE" and d.memory_id == porto.memory_id and d.added_id not in (None, porto.memory_id)
    old = m.get(porto.memory_id)
    assert not old.is_active and old.valid_to is not None
    assert [it.text for it in m.get_all(user_id="ana")] == ["Ana moved from Porto to Lisbon."]
    assert m.get(d.added_id).text == "Ana moved from Porto to Lisbon." and m.get(d.added_id).is_active
    assert (porto.memory_id, "supersedes") in {(other, kind) for other, kind, _ in m.links(d.added_id)}


@pytest.mark.parametrize("reply", ["not json at all", '{"event": "UPDATE", "index": 7, "text": "x", "reason": "r"}',
                                   '{"event": "MERGE", "index": 0, "reason": "r"}'])
def test_bad_llm_output_stores_the_fact_and_records_the_fault(llm_mem, reply):
    m, server, emb = llm_mem
    m.add("Ana lives in Porto.", user_id="ana")
    server.reply(reply)
    (d,) = m.add("Ana moved from Porto to Lisbon.", user_id="ana")
    assert d.event == "ADD" and d.fault is not None
    assert len(m.get_all(user_id="ana")) == 2
    assert m.faults(user_id="ana")[0]["kind"] == d.fault
    assert m.stats(user_id="ana")["llm"]["calls"] >= 1


def test_llm_down_is_a_recorded_fault_not_a_lost_fact(llm_mem):
    m, server, emb = llm_mem
    m.add("Ana lives in Porto.", user_id="ana")
    server.fail(500)
    (d,) = m.add("Ana moved from Porto to Lisbon.", user_id="ana")
    assert d.event == "ADD" and d.fault == "llm_error"


def test_outside_the_band_no_llm_is_called(llm_mem):
    m, server, emb = llm_mem
    m.add(["Ana lives in Porto.", "Ana has a dog named Buddy."], user_id="ana")
    m.add("Ana lives in Porto!", user_id="ana")   # unknown text: random vector, far: ADD
    assert server.requests == []


def test_infer_and_band_through_a_real_llama_server(tmp_path, embedder, llama_server):
    """The whole path with a real OpenAI-compatible server: structure, not content."""
    cfg = LLMConfig(base_url=llama_server.base_url, model=llama_server.model_id, timeout=120, retries=0,
                    max_tokens=160)
    m = Memory(tmp_path / "real.db", embedder=embedder, llm=cfg,
               gate=GateConfig(profile="maxcos", tau=0.02, delta=0.9))  # nearly everything is in the band
    ds = m.add([{"role": "user", "content": "I moved to Lisbon last May and I work as a nurse."}],
               user_id="ana", infer=True)
    decisions = ds + m.add("I work as a nurse in a Lisbon hospital.", user_id="ana")
    for d in decisions:
        _assert_recorded(m, d)
    st = m.stats(user_id="ana")
    assert st["llm"]["calls"] >= 1 and st["llm"]["prompt_tokens"] > 0
    # whatever the model said, every candidate is accounted for and nothing vanished
    n_cands = len(ds) + 1
    assert sum(st["events"].values()) == n_cands
    assert len(m.faults(user_id="ana")) == sum(1 for x in decisions if x.fault)
    m.close()


def _assert_recorded(m: Memory, d) -> None:
    """Whatever the model decided, the decision left the trace its event promises."""
    if d.event == "NOOP":
        rejected = {r.id: r.text for r in m.rejections(user_id="ana")}
        assert rejected.get(d.rejection_id) == d.text
    elif d.event == "ADD":
        assert m.get(d.memory_id).text == d.text and m.get(d.memory_id).is_active
    elif d.event == "UPDATE":
        assert m.history(d.memory_id)[-1].event == "UPDATE"
    else:
        assert d.event == "DELETE" and not m.get(d.memory_id).is_active and m.get(d.added_id).is_active


def test_a_long_update_text_is_found_by_its_last_passage(llm_mem, tmp_path):
    from test_passages import long_text

    from memsieve.text.passages import passage_spans

    m, server, emb = llm_mem
    (porto,) = m.add("Ana lives in Porto.", user_id="ana")
    text = long_text(4000)
    a, b = passage_spans(text)[-1]
    emb.table["the update's last passage"] = emb.embed([text[a:b]])[0]
    server.reply_json({"event": "UPDATE", "index": 0, "text": text, "reason": "moved, and more"})
    (d,) = m.add("Ana moved from Porto to Lisbon.", user_id="ana")
    assert d.event == "UPDATE" and d.memory_id == porto.memory_id
    hit = m.search("the update's last passage", mode="dense", limit=1, user_id="ana")[0]
    assert hit.id == porto.memory_id and hit.score == pytest.approx(1.0, abs=1e-5)
    with Memory(tmp_path / "m.db", embedder=emb, gate=GATE) as other:  # the passages are in the store too
        hit = other.search("the update's last passage", mode="dense", limit=1, user_id="ana")[0]
        assert hit.id == porto.memory_id and hit.score == pytest.approx(1.0, abs=1e-5)
