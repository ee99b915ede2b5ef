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
