"""Band policies and their links, the sage profile through Memory, and an indexed scope's
delete and replace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memsieve import GateConfig, Memory, Scope

from conftest import TableEmbedder, unit

STORED = "Ana keeps bees."
CLOSE = "Ana keeps two hives of bees."  # cosine 0.7 to STORED: novelty 0.3


def _band_memory(tmp_path, policy):
    emb = TableEmbedder(table={STORED: unit(1, 0), CLOSE: unit(0.7, math.sqrt(1 - 0.49))})
    # maxcos: novelty = 1 - cosine; the band is [0.1, 0.6)
    gate = GateConfig(profile="maxcos", tau=0.1, delta=0.5, band_policy=policy)
    m = Memory(tmp_path / f"{policy}.db", embedder=emb, gate=gate)
    (first,) = m.add(STORED, user_id="ana")
    return m, first


def test_band_add_link_adds_and_links_to_the_nearest(tmp_path):
    m, first = _band_memory(tmp_path, "add_link")
    (d,) = m.add(CLOSE, user_id="ana")
    assert (d.event, d.layer) == ("ADD", "band")
    assert d.novelty == pytest.approx(0.3, abs=1e-5) and d.linked_to == first.memory_id
    assert d.link_kind == "near" and "links it" in d.reason
    assert m.links(d.memory_id) == [(first.memory_id, "near", pytest.approx(0.7, abs=1e-5))]
    assert m.links(first.memory_id)[0][:2] == (d.memory_id, "near")
    m.close()


def test_band_add_adds_without_a_link(tmp_path):
    m, first = _band_memory(tmp_path, "add")
    (d,) = m.add(CLOSE, user_id="ana")
    assert (d.event, d.layer, d.linked_to) == ("ADD", "band", None)
    assert m.links(d.memory_id) == [] and m.links(first.memory_id) == []
    assert len(m.get_all(user_id="ana")) == 2
    m.close()


def test_band_noop_keeps_a_restorable_rejection(tmp_path):
    m, first = _band_memory(tmp_path, "noop")
    (d,) = m.add(CLOSE, user_id="ana")
    assert (d.event, d.layer) == ("NOOP", "band") and d.memory_id == first.memory_id
    (rej,) = m.rejections(user_id="ana")
    assert rej.id == d.rejection_id and rej.text == CLOSE and rej.layer == "band"
    restored = m.restore(rej.id)
    assert restored.text == CLOSE and len(m.get_all(user_id="ana")) == 2
    m.close()


# ---- band policy "fold" (the default) ------------------------------------------

GARDEN = "Ana keeps bees in the garden behind her house."


def _fold_memory(tmp_path, table, *, profile="memsieve"):
    emb = TableEmbedder(table=table)
    # A fixed tau of 0 with a band of 2 puts every candidate after the first in the semantic band,
    # so what is tested is the policy's own rule, not where the threshold happens to sit.
    gate = GateConfig(profile=profile, tau=0.0, delta=2.0) if profile == "memsieve" else \
        GateConfig(profile=profile, tau=0.0, delta=2.0, band_policy="fold")
    m = Memory(tmp_path / f"fold-{profile}.db", embedder=emb, gate=gate)
    (first,) = m.add(GARDEN, user_id="ana", source="s1")
    assert first.event == "ADD"
    return m, first


def test_fold_is_the_default_band_policy():
    assert GateConfig().band_policy == "fold"


def test_fold_folds_a_band_text_that_says_nothing_new_and_keeps_it_restorable(tmp_path):
    said_again = "Behind her house, in the garden, Ana keeps bees."
    m, first = _fold_memory(tmp_path, {GARDEN: unit(1, 0), said_again: unit(0.9, math.sqrt(1 - 0.81))})
    (d,) = m.add(said_again, user_id="ana", source="s2")
    assert (d.event, d.layer, d.memory_id) == ("NOOP", "band", first.memory_id)
    assert "band policy 'fold' folds it" in d.reason and "says everything it says" in d.reason
    (kept,) = m.get_all(user_id="ana")
    assert kept.sources == ["s1", "s2"]  # the folded text's source is findable on the memory
    (rej,) = m.rejections(user_id="ana")
    assert rej.text == said_again and rej.layer == "band"
    assert m.restore(rej.id).text == said_again and len(m.get_all(user_id="ana")) == 2
    m.close()


def test_fold_adds_a_band_text_with_a_number_its_nearest_memory_lacks(tmp_path):
    counted = "Ana keeps 12 bees in the garden behind her house."
    m, first = _fold_memory(tmp_path, {GARDEN: unit(1, 0), counted: unit(0.95, math.sqrt(1 - 0.9025))})
    (d,) = m.add(counted, user_id="ana")
    assert (d.event, d.layer) == ("ADD", "band")
    assert d.linked_to == first.memory_id and d.link_kind == "updates"
    assert "band policy 'fold' adds it" in d.reason
    m.close()


def test_fold_adds_another_subject_that_carries_new_information(tmp_path):
    room_a = "Room 101 has the booking code 4411 on the booking sheet."
    room_b = "Room 102 has the booking code 5523 on the booking sheet."
    emb = TableEmbedder(table={room_a: unit(1, 0), room_b: unit(0.97, math.sqrt(1 - 0.97 ** 2))})
    m = Memory(tmp_path / "rooms.db", embedder=emb, gate=GateConfig(tau=0.0, delta=2.0))
    (a,) = m.add(room_a, user_id="ana")
    (b,) = m.add(room_b, user_id="ana")
    # another room is another fact: stored, and linked as a neighbour, never as room 101's newer version
    assert (b.event, b.layer, b.linked_to, b.link_kind) == ("ADD", "band", a.memory_id, "near")
    m.close()


def test_fold_adds_a_band_text_whose_words_only_the_nearest_memories_together_hold(tmp_path):
    honey = "Ana sells honey at the market."
    both = "Ana sells honey and keeps bees in the garden behind her house."
    m, first = _fold_memory(tmp_path, {GARDEN: unit(1, 0, 0), honey: unit(0, 1, 0), both: unit(0.9, 0.3, 0.3)})
    m.add(honey, user_id="ana")
    (d,) = m.add(both, user_id="ana")
    # folded into GARDEN alone, "sells honey" would be unsaid by the memory a reader sees
    assert d.nearest_id == first.memory_id and (d.event, d.layer) == ("ADD", "band")
    m.close()


def test_fold_under_a_profile_without_the_information_term_is_add_link(tmp_path):
    said_again = "Behind her house, in the garden, Ana keeps bees."
    m, first = _fold_memory(tmp_path, {GARDEN: unit(1, 0), said_again: unit(0.9, math.sqrt(1 - 0.81))},
                            profile="maxcos")
    (d,) = m.add(said_again, user_id="ana")
    assert (d.event, d.layer, d.linked_to) == ("ADD", "band", first.memory_id)
    m.close()


def test_the_sage_profile_through_memory(tmp_path):
    rng = np.random.default_rng(3)
    texts = [f"note {i}" for i in range(12)]
    table = {t: rng.standard_normal(32) for t in texts}
    table["a copy of note 0"] = table["note 0"]
    m = Memory(tmp_path / "sage.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="sage"))
    taus = [m.add(t, user_id="s")[0].tau for t in texts]
    assert all(d <= 50.0 for d in [m.stats(user_id="s")["kappa"]])
    # tau0 + tau_min until the scope has two vectors to measure a density from, then
    # SAGE's EMA decays once per add() call towards tau* (about tau_min in practice)
    assert taus[0] == taus[1] == pytest.approx(0.55)
    assert taus[-1] < taus[3] < taus[2] < taus[1]
    kappa = m.stats(user_id="s")["kappa"]
    (dup,) = m.add("a copy of note 0", user_id="s")
    # SAGE's score, computed here independently: log-mean-exp over all N, clipped
    u = np.array([table[t] / np.linalg.norm(table[t]) for t in texts])
    sims = u @ u[0]
    lse = np.log(np.sum(np.exp(kappa * (sims - sims.max())))) + kappa * sims.max()
    expected = 1.0 - np.clip((lse - np.log(len(texts))) / kappa, -1.0, 1.0)
    assert dup.kappa == pytest.approx(kappa) and dup.novelty == pytest.approx(expected, abs=1e-4)
    assert dup.nearest_cos == pytest.approx(1.0, abs=1e-5)
    assert m.stats(user_id="s")["profile"] == "sage"
    m.close()


def test_an_indexed_scope_deletes_and_replaces(tmp_path):
    emb = TableEmbedder(dim=32)
    m = Memory(tmp_path / "idx.db", embedder=emb, gate=GateConfig(profile="none"), index_min_size=5)
    ids = [d.memory_id for d in m.add([f"indexed fact {i}" for i in range(12)], user_id="i")]
    gate = m.gates.peek(Scope.of("i"))
    assert gate.index is not None
    m.delete(ids[3])
    assert "indexed fact 3" not in [h.text for h in m.search("indexed fact 3", user_id="i", limit=12)]
    m.update(ids[5], "a completely different sentence")
    (top,) = m.search("a completely different sentence", user_id="i", mode="dense", limit=1)
    assert top.id == ids[5] and top.score == pytest.approx(1.0, abs=1e-4)
    old = m.search("indexed fact 5", user_id="i", mode="dense", limit=1)[0]
    assert old.id != ids[5]
    assert len(m.search("indexed fact", user_id="i", mode="dense", limit=50)) == 11
    m.close()
