"""A request to forget met by add(infer=True): the LLM's DELETE request behind the
write path's guard, with the deterministic rule beside it (scripted server)."""

from __future__ import annotations

import math

import pytest

from conftest import unit
from memsieve import GateConfig, Memory
from memsieve.write.forgetting import parse_request
from memsieve.llm import LLMConfig
from scripted_llm import ScriptedLLM

DEBT = "I owe my colleague Ingmar 200 euros."
DESK = "My colleague Pilar sits by the window."
PARAPHRASED = "Please forget what I said about the money I borrowed."
NAMED = "Please forget what I said about Ingmar."


@pytest.fixture()
def llm_mem(tmp_path, table_embedder):
    # The paraphrased request's subject sits at cosine 0.4 to DEBT: above the
    # guard's 0.35, below the rule's 0.45 fallback, so only the model can name it.
    table_embedder.table.update({DEBT: unit(1, 0, 0), DESK: unit(0, 1, 0),
                                 parse_request(PARAPHRASED).subject: unit(0.4, 0, math.sqrt(1 - 0.16))})
    with ScriptedLLM() as server:
        m = Memory(tmp_path / "f.db", embedder=table_embedder, gate=GateConfig(profile="none"),
                   llm=LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5))
        m.add([DEBT, DESK], user_id="u")
        yield m, server
        m.close()


def _active(m):
    return sorted(it.text for it in m.get_all(user_id="u"))


def test_the_llm_names_what_the_rule_misses_and_the_delete_is_soft(llm_mem):
    m, server = llm_mem
    server.reply_json({"event": "DELETE", "index": 0, "text": None, "reason": "the debt is the money"})
    (d,) = m.add(PARAPHRASED, user_id="u", infer=True)
    assert len(server.requests) == 1 and server.unscripted == 0  # no extraction call: nothing else was said
    prompt = server.requests[0]["messages"][1]["content"]
    assert "<request>" in prompt and DEBT in prompt and "forget" in server.requests[0]["messages"][0]["content"]
    assert (d.event, d.layer, d.text) == ("DELETE", "llm", DEBT) and "LLM: the debt is the money" in d.reason
    assert _active(m) == [DESK]
    assert m.history(d.memory_id)[-1].layer == "llm"  # soft: restorable from its history
    assert m.get(d.memory_id).text == DEBT


def test_a_delete_aimed_at_an_unrelated_memory_is_refused_by_the_guard(llm_mem):
    m, server = llm_mem
    server.reply_json({"event": "DELETE", "index": 1, "text": None, "reason": "forget it"})
    assert m.add(PARAPHRASED, user_id="u", infer=True) == []
    assert _active(m) == [DEBT, DESK]
    assert m.faults(user_id="u")[0]["kind"] == "guard_rejected"


@pytest.mark.parametrize("reply", ['{"event": "DELETE", "index": 7}', "not json at all",
                                   '{"event": "NOOP", "index": null, "text": null, "reason": "none"}'])
def test_a_model_that_fails_or_declines_never_keeps_what_the_rule_names(llm_mem, reply):
    m, server = llm_mem
    server.reply(reply)
    (d,) = m.add(NAMED, user_id="u", infer=True)
    assert (d.event, d.layer, d.text) == ("DELETE", "forget", DEBT)
    assert _active(m) == [DESK]


def test_a_reminder_is_a_fact_for_extraction_not_a_request_to_forget(llm_mem):
    m, server = llm_mem
    server.reply_json({"facts": ["The user must call the plumber on Monday"]})
    (d,) = m.add("Don't forget to call the plumber on Monday.", user_id="u", infer=True)
    assert d.event == "ADD" and "facts" in str(server.requests[0]["response_format"])
    assert _active(m) == sorted([DEBT, DESK, "The user must call the plumber on Monday"])
