"""Consolidation with an LLM merge, against the scripted adversarial server: guards refuse drift."""

from __future__ import annotations

import json

import pytest
from scripted_llm import ScriptedLLM

from memsieve import GateConfig, Memory
from memsieve.llm import LLMClient, LLMConfig

U = {"user_id": "ana"}
DUPES = [("I love hiking in the mountains on weekends", "t1"), ("I love hiking in the mountains on weekends.", "t2")]


@pytest.fixture()
def server():
    with ScriptedLLM() as s:
        yield s


@pytest.fixture()
def mem(tmp_path, embedder):
    m = Memory(tmp_path / "m.db", embedder=embedder, gate=GateConfig(profile="none"))
    for text, source in DUPES:
        m.add(text, source=source, **U)
    yield m
    m.close()


def client(server) -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5.0))


def active_texts(mem) -> list[str]:
    return sorted(i.text for i in mem.get_all(**U))


def test_a_drifting_merge_is_refused_and_recorded(server, mem):
    server.reply(json.dumps({"text": "The user supports a football club and watches every match"}))
    before = active_texts(mem)
    report = mem.consolidate(llm=client(server), **U)
    assert report.merges == [] and len(report.refused) == 1
    assert "drifts from member" in report.refused[0].reason
    assert active_texts(mem) == before
    faults = mem.faults(**U)
    assert [f["kind"] for f in faults] == ["consolidation_refused"] and "football" in faults[0]["raw"]
    assert "<memory index=0>" in server.requests[0]["messages"][1]["content"]


def test_a_merge_that_drops_a_member_detail_is_refused(server, embedder, tmp_path):
    with Memory(tmp_path / "d.db", embedder=embedder, gate=GateConfig(profile="none")) as mem:
        # The older says nothing the newer lacks, so the pair may merge.
        mem.add("I love hiking in the mountains on weekends with my friend Sam", **U)
        mem.add("I love hiking in the mountains on weekends with my old friend Sam", **U)
        # Close to both members (cosines 0.87 and 0.92, above the guard's 0.8) but Sam is gone.
        server.reply(json.dumps({"text": "I love hiking in the mountains on weekends with my friend"}))
        report = mem.consolidate(llm=client(server), **U)
        assert report.merges == [] and "drops 1 content term(s)" in report.refused[0].reason
        assert len(mem.get_all(**U)) == 2


def test_a_faithful_merge_is_applied_and_undone(server, mem):
    merged = "I love hiking in the mountains on weekends, every weekend"
    server.reply(json.dumps({"text": merged}))
    report = mem.consolidate(llm=client(server), **U)
    assert [m.status for m in report.merges] == ["merged"] and report.merges[0].text == merged
    kept = mem.get(report.merges[0].kept_id)
    assert kept.text == merged and kept.sources == ["t2", "t1"]
    assert mem.search("hiking", limit=1, **U)[0].text == merged
    mem.unconsolidate(report.merges[0].id)
    assert active_texts(mem) == sorted(t for t, _ in DUPES)
    assert mem.search("hiking", limit=1, **U)[0].text in {t for t, _ in DUPES}


def test_a_failing_endpoint_leaves_the_cluster_alone(server, mem):
    server.fail(500)
    report = mem.consolidate(llm=client(server), **U)
    assert report.merges == [] and "merge call failed" in report.refused[0].reason
    assert len(mem.get_all(**U)) == 2


def test_a_dry_run_with_an_llm_proposes_the_text_and_writes_nothing(server, mem):
    server.reply(json.dumps({"text": "I love hiking in the mountains on weekends, always"}))
    report = mem.consolidate(llm=client(server), dry_run=True, **U)
    assert report.merges[0].status == "proposed" and report.merges[0].text.endswith("always")
    assert len(mem.get_all(**U)) == 2 and mem.faults(**U) == []


@pytest.mark.parametrize("merged", ["I don't love hiking in the mountains on weekends",
                                    "I never love hiking in the mountains on weekends"])
def test_a_merge_that_holds_every_term_but_says_it_otherwise_is_refused(server, mem, merged):
    """Every member term is in the merged text, yet folding a member into it leaves a denial
    unsaid, as the gate refuses such a NOOP: the guard reads the marks too (review finding: an
    LLM text that swapped two people's ages passed the term check)."""
    server.reply(json.dumps({"text": merged}))
    before = active_texts(mem)
    report = mem.consolidate(llm=client(server), **U)
    assert report.merges == [] and "says 1 thing(s) of member" in report.refused[0].reason
    assert active_texts(mem) == before


def test_a_merge_that_swaps_values_is_refused():
    from memsieve.consolidation.llm_merge import LLMMerger
    from memsieve.text.lexicon import ENGLISH

    class Member:
        def __init__(self, text):
            import numpy as np

            self.item = type("Item", (), {"text": text, "id": "m"})()
            self.vector = np.ones(4, dtype=np.float32) / 2

    import numpy as np

    members = [Member("Lena is 38 and Marco is 41."), Member("Lena is 38 and Marco is 41!")]
    cluster = type("Cluster", (), {"members": members, "kind": "duplicates", "kept": members[0]})()
    merger = LLMMerger(None, lambda t: np.ones(4, dtype=np.float32) / 2)
    vec = np.ones(4, dtype=np.float32) / 2
    assert merger.guard(cluster, "Lena is 41 and Marco is 38.", vec) is None  # the terms alone pass
    assert "otherwise" in merger.guard(cluster, "Lena is 41 and Marco is 38.", vec, marks=ENGLISH.marks)


def test_undo_after_an_edit_put_back_restores_the_text_from_before_the_merge(server, mem):
    """Review finding: the undo took the kept memory's latest superseded text, which after an edit and
    its reversal is the edit's predecessor, not the text the merge replaced."""
    before = {i.id: i.text for i in mem.get_all(**U)}
    merged = "I love hiking in the mountains on weekends, every weekend"
    server.reply(json.dumps({"text": merged}))
    report = mem.consolidate(llm=client(server), **U)
    kept = report.merges[0].kept_id
    mem.update(kept, "I love hiking in the Dolomites on weekends", **U)
    mem.update(kept, merged, **U)  # put back, as the conflict error advises
    mem.unconsolidate(report.merges[0].id)
    assert {i.id: i.text for i in mem.get_all(**U)} == before


def test_a_repeat_folded_into_the_kept_memory_does_not_block_the_undo(server, mem):
    """Review finding: a NOOP into the kept memory (a sighting and a source) made the merge impossible to
    undo, with advice that could not help. The undo now keeps the sighting and its source."""
    server.reply(json.dumps({"text": "I love hiking in the mountains on weekends, every weekend"}))
    report = mem.consolidate(llm=client(server), **U)
    kept = report.merges[0].kept_id
    again = mem.add("I love hiking in the mountains on weekends, every weekend", source="t3", **U)[0]
    assert again.event == "NOOP" and again.memory_id == kept
    back = mem.unconsolidate(report.merges[0].id)
    assert back and active_texts(mem) == sorted(t for t, _ in DUPES)
    assert "t3" in mem.get(kept).sources
