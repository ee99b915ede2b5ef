"""The gated write path end to end, on a real SQLite file and the real embedder."""

from __future__ import annotations

import math

import numpy as np
import pytest

import memsieve
from memsieve import GateConfig, Memory


def test_first_text_is_added_with_full_explanation(mem):
    (d,) = mem.add("I just moved to Lisbon for a new job.", user_id="ana", source="t1")
    assert d.event == "ADD" and d.layer == "novelty"
    assert math.isinf(d.novelty) and d.nearest_id is None
    item = mem.get(d.memory_id)
    assert item.text == "I just moved to Lisbon for a new job." and item.user_id == "ana"
    assert item.sources == ["t1"] and item.is_active


def test_exact_duplicate_is_a_recorded_noop_that_touches_the_memory(mem):
    (first,) = mem.add("I am allergic to peanuts.", user_id="ana", source="t1")
    (dup,) = mem.add("  i am ALLERGIC to peanuts.  ", user_id="ana", source="t2")
    assert dup.event == "NOOP" and dup.layer == "exact"
    assert dup.memory_id == first.memory_id and dup.rejection_id
    item = mem.get(first.memory_id)
    assert item.seen_count == 2 and item.sources == ["t1", "t2"]
    (rej,) = mem.rejections(user_id="ana")
    assert rej.id == dup.rejection_id and rej.layer == "exact" and rej.nearest_id == first.memory_id
    events = [h.event for h in mem.history(first.memory_id)]
    assert events == ["ADD", "NOOP"]


def test_paraphrase_is_gated_by_novelty_and_distinct_fact_is_added(mem):
    mem.add("I just moved to Lisbon for a new job at a robotics startup.", user_id="ana")
    (near,) = mem.add("I moved to Lisbon for a new job at a robotics startup.", user_id="ana")
    (far,) = mem.add("My favourite book is The Left Hand of Darkness.", user_id="ana")
    assert near.event == "NOOP" and near.layer == "novelty"
    assert near.novelty < near.tau and near.nearest_cos > 0.9
    assert far.event == "ADD" and far.novelty >= far.tau + far.delta
    for d in (near, far):
        assert d.kappa > 0 and math.isfinite(d.kappa) and d.tau > 0


def test_candidates_of_one_call_are_gated_against_each_other(mem):
    ds = mem.add(["Marta is my sister.", "Marta is my sister.", "I surf at Carcavelos."], user_id="ana")
    assert [d.event for d in ds] == ["ADD", "NOOP", "ADD"]
    assert ds[1].memory_id == ds[0].memory_id
    assert len(mem.get_all(user_id="ana")) == 2


def test_scopes_never_see_each_other(mem):
    a = mem.add("I live in Porto.", user_id="ana")
    b = mem.add("I live in Porto.", user_id="bob")
    c = mem.add("I live in Porto.", user_id="ana", agent_id="helper")
    assert [x[0].event for x in (a, b, c)] == ["ADD", "ADD", "ADD"]
    assert [r.text for r in mem.search("Porto", user_id="bob")] == ["I live in Porto."]
    assert mem.rejections(user_id="ana") == []
    # ids that would collide under a '|'-joined key stay apart
    x = mem.add("Scope collision probe.", user_id="a|b")
    y = mem.add("Scope collision probe.", user_id="a", agent_id="b")
    assert x[0].event == y[0].event == "ADD"


@pytest.mark.parametrize("bad", ["", "   ", 42, None, ["ok", ""], [], "x" * 100_001, {"role": "user"}])
def test_bad_text_raises_typed_error_and_writes_nothing(mem, bad):
    mem.add("An existing memory.", user_id="ana")
    before = (len(mem.get_all(user_id="ana")), len(mem.rejections(user_id="ana")))
    with pytest.raises(memsieve.InvalidTextError) as info:
        mem.add(bad, user_id="ana")
    assert str(info.value)[0].islower()
    assert (len(mem.get_all(user_id="ana")), len(mem.rejections(user_id="ana"))) == before


def test_missing_or_invalid_scope_is_a_clear_error(mem):
    with pytest.raises(memsieve.ScopeError, match="at least one of user_id, agent_id or run_id"):
        mem.add("text")
    with pytest.raises(memsieve.ScopeError, match="user_id must be a string"):
        mem.add("text", user_id=7)
    with pytest.raises(memsieve.ScopeError, match="empty"):
        mem.search("text", user_id=" ")


class _BadEmbedder:
    name = "bad"

    def __init__(self, dim: int, mode: str) -> None:
        self.dim, self.mode = dim, mode

    def embed(self, texts):
        out = np.ones((len(texts), self.dim), dtype=np.float32)
        if self.mode == "nan":
            out[0, 0] = np.nan
        elif self.mode == "wrong_dim":
            out = np.ones((len(texts), self.dim + 1), dtype=np.float32)
        elif self.mode == "zero":
            out[:] = 0
        elif self.mode == "raises":
            raise RuntimeError("backend down")
        return out


@pytest.mark.parametrize("mode", ["nan", "wrong_dim", "zero", "raises"])
def test_bad_custom_embedder_output_is_rejected_before_writing(tmp_path, mode):
    m = Memory(tmp_path / "m.db", embedder=_BadEmbedder(8, mode))
    with pytest.raises(memsieve.EmbedderError):
        m.add("hello", user_id="u")
    assert m.store.count_active(memsieve.Scope.of("u")) == 0
    assert m.rejections(user_id="u") == []
    m.close()


def test_update_keeps_history_and_delete_is_soft(mem):
    (d,) = mem.add("I work at a robotics startup.", user_id="ana")
    mem.update(d.memory_id, "I work at a robotics company in Lisbon.")
    assert mem.get(d.memory_id).text == "I work at a robotics company in Lisbon."
    hist = mem.history(d.memory_id)
    assert [h.event for h in hist] == ["ADD", "UPDATE"]
    assert hist[1].old_text == "I work at a robotics startup."
    mem.delete(d.memory_id)
    item = mem.get(d.memory_id)
    assert not item.is_active and item.expired_at is not None and item.text.endswith("Lisbon.")
    assert mem.search("robotics company", user_id="ana") == []
    assert mem.get_all(user_id="ana") == []
    assert len(mem.get_all(user_id="ana", include_inactive=True)) == 1
    assert [h.event for h in mem.history(d.memory_id)] == ["ADD", "UPDATE", "DELETE"]
    with pytest.raises(memsieve.NotFoundError):
        mem.get("no-such-id")


def test_deleting_the_original_lets_the_same_fact_in_again(mem):
    (d,) = mem.add("My cat is called Tofu.", user_id="ana")
    mem.delete(d.memory_id)
    (again,) = mem.add("My cat is called Tofu.", user_id="ana")
    assert again.event == "ADD" and again.memory_id != d.memory_id


def test_restore_stores_a_rejected_candidate(mem):
    mem.add("I like green tea.", user_id="ana")
    (noop,) = mem.add("I like green tea!", user_id="ana")
    assert noop.event == "NOOP"
    item = mem.restore(noop.rejection_id)
    assert item.text == "I like green tea!" and item.is_active
    (rej,) = mem.rejections(user_id="ana")
    assert rej.restored_memory_id == item.id
    assert [h.event for h in mem.history(item.id)] == ["RESTORE"]
    assert mem.restore(noop.rejection_id).id == item.id  # idempotent
    assert mem.stats(user_id="ana")["events"]["RESTORE"] == 1


def test_rejection_filters(mem):
    mem.add(["Tea.", "Tea.", "I like green tea.", "I like green tea!"], user_id="ana")
    layers = {r.layer for r in mem.rejections(user_id="ana")}
    assert layers == {"exact", "novelty"}
    assert all(r.layer == "exact" for r in mem.rejections(user_id="ana", layer="exact"))
    assert mem.rejections(user_id="ana", since="2999-01-01T00:00:00") == []


def test_stats_counts_events_and_layers(mem):
    mem.add(["A fact about rain.", "A fact about rain.", "Snow fell in Oslo in May."], user_id="ana")
    st = mem.stats(user_id="ana")
    assert st["events"] == {"ADD": 2, "NOOP": 1}
    assert st["layers"]["exact"] == 1 and st["layers"]["novelty"] == 2
    assert st["active_memories"] == 2 and st["rejections"] == 1
    assert st["tau"] > 0 and st["kappa"] > 0 and st["store_bytes"] > 0
    from memsieve.embedding.onnx import _providers_for

    assert st["embedder"]["dim"] == 384 and st["embedder"]["provider"] == _providers_for("auto")[0]
    # The CPU provider runs the packaged model's fused graph (memsieve.embedding.fused_graph).
    assert st["embedder"]["fused"] is (st["embedder"]["provider"] == "CPUExecutionProvider")


def test_gate_state_resumes_after_restart(tmp_path, embedder):
    path = tmp_path / "m.db"
    m = Memory(path, embedder=embedder)
    texts = [f"Fact number {i}: {w} happened on day {i}." for i, w in
             enumerate(["rain", "a concert", "a hike", "a move", "a wedding", "a promotion", "a trip"])]
    for t in texts:
        m.add(t, user_id="u")
    before = m.stats(user_id="u")
    m.close()
    m2 = Memory(path, embedder=embedder)
    after = m2.stats(user_id="u")
    assert after["tau"] == pytest.approx(before["tau"]) and after["kappa"] == pytest.approx(before["kappa"])
    (d,) = m2.add(texts[0].replace("Fact number 0", "Fact number 0 again"), user_id="u")
    assert d.event == "NOOP", d.reason
    m2.close()


def test_threshold_responds_to_deletions(tmp_path, table_embedder):
    from conftest import unit

    table_embedder.table.update({"a": unit(1, 0), "b": unit(0, 1), "a2": unit(1, 0, 0.6), "b2": unit(0, 1, 0, 0.6)})
    m = Memory(tmp_path / "m.db", embedder=table_embedder, gate=GateConfig(gamma=0.1, tau_min=0.0, delta=0.0))
    m.add(["a", "b"], user_id="u")
    tau_sparse = m.stats(user_id="u")["tau"]
    ds = m.add(["a2", "b2"], user_id="u")
    assert [d.event for d in ds] == ["ADD", "ADD"]
    # closer neighbours mean a denser scope, so the threshold tightens ...
    assert m.stats(user_id="u")["tau"] < tau_sparse
    for d in ds:
        m.delete(d.memory_id)
    # ... and deleting them restores it exactly.
    assert m.stats(user_id="u")["tau"] == pytest.approx(tau_sparse, abs=1e-12)
    m.close()


def test_unrelated_texts_are_always_added_however_many(tmp_path):
    """Nearly orthogonal vectors (unrelated texts) must never look redundant, at any scope size."""
    from conftest import TableEmbedder

    m = Memory(tmp_path / "o.db", embedder=TableEmbedder(dim=384))
    events = [d.event for i in range(400) for d in m.add(f"unrelated {i}", user_id="u")]
    assert events.count("ADD") == 400
    m.close()


def test_the_threshold_does_not_feed_on_itself(tmp_path):
    """Clustered input: the stored fraction stays put as the scope grows (no runaway tau)."""
    from conftest import TableEmbedder

    rng = np.random.default_rng(3)
    emb = TableEmbedder(dim=64)
    centers = rng.standard_normal((30, 64))
    for i in range(900):
        v = centers[i % 30] + 0.35 * rng.standard_normal(64)
        emb.table[f"c{i}"] = v / np.linalg.norm(v)
    m = Memory(tmp_path / "c.db", embedder=emb)
    added = [d.event != "NOOP" for i in range(900) for d in m.add(f"c{i}", user_id="u")]
    first, last = np.mean(added[300:600]), np.mean(added[600:])
    assert 0.05 < last and abs(first - last) < 0.25, (first, last)
    m.close()
