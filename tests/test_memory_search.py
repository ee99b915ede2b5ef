"""Reading: dense, keyword, hybrid, filters, as_of, and the hnswlib path."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import numpy as np
import pytest

import memsieve
from memsieve import Memory

FACTS = [
    "Ana is allergic to peanuts.",
    "Ana moved to Lisbon in March.",
    "Ana's sister Marta visits next month.",
    "Ana surfs at Carcavelos beach on weekends.",
    "Ana's favourite book is The Left Hand of Darkness.",
]


@pytest.fixture()
def filled(mem):
    for i, f in enumerate(FACTS):
        mem.add(f, user_id="ana", metadata={"topic": "health" if i == 0 else "life"}, source=f"t{i}")
    return mem


def test_dense_search_ranks_the_relevant_fact_first(filled):
    hits = filled.search("What food should Ana avoid?", user_id="ana", limit=3)
    assert hits[0].text == FACTS[0]
    assert len(hits) == 3 and hits[0].score >= hits[1].score >= hits[2].score
    assert hits[0].sources == ["t0"]


def test_keyword_search_uses_full_text(filled):
    hits = filled.search("Carcavelos", user_id="ana", mode="keyword")
    assert [h.text for h in hits] == [FACTS[3]]
    assert filled.search("AND OR NEAR *", user_id="ana", mode="keyword") == []


def test_hybrid_fuses_both(filled):
    hits = filled.search("Marta sister visit", user_id="ana", mode="hybrid", limit=2)
    assert hits[0].text == FACTS[2] and hits[0].score > 0


def test_metadata_filters(filled):
    hits = filled.search("Lisbon", user_id="ana", filters={"topic": "health"})
    assert [h.text for h in hits] == [FACTS[0]]


def test_unknown_mode_is_a_config_error(filled):
    with pytest.raises(memsieve.ConfigError, match="unknown search mode"):
        filled.search("x", user_id="ana", mode="fuzzy")


def test_as_of_sees_what_was_known_then(mem):
    (d,) = mem.add("Ana works at a robotics startup.", user_id="ana")
    time.sleep(0.01)
    between = datetime.now(timezone.utc)
    time.sleep(0.01)
    mem.delete(d.memory_id)
    assert mem.search("robotics", user_id="ana") == []
    old = mem.search("robotics", user_id="ana", as_of=between)
    assert [h.id for h in old] == [d.memory_id]
    assert mem.search("robotics", user_id="ana", as_of="2000-01-01T00:00:00") == []


def test_empty_scope_searches_to_nothing(mem):
    assert mem.search("anything", user_id="nobody") == []


def test_hnsw_index_matches_exact_scan_and_survives_restart(tmp_path, table_embedder):
    rng = np.random.default_rng(7)
    texts = [f"t{i}" for i in range(300)]
    for t in texts:
        v = rng.standard_normal(table_embedder.dim)
        table_embedder.table[t] = v / np.linalg.norm(v)
    exact = Memory(tmp_path / "exact.db", embedder=table_embedder, gate=memsieve.GateConfig(profile="none"))
    indexed = Memory(tmp_path / "idx.db", embedder=table_embedder, gate=memsieve.GateConfig(profile="none"),
                     index_min_size=50)
    for m in (exact, indexed):
        m.add(texts, user_id="u")
    gate = indexed.gates.peek(memsieve.Scope.of("u"))
    assert gate.index is not None and gate.index.count == 300
    for q in texts[:20]:
        a = [h.id and h.text for h in exact.search(q, user_id="u", limit=5)]
        b = [h.text for h in indexed.search(q, user_id="u", limit=5)]
        assert a[0] == b[0] == q
    indexed.close()
    exact.close()
    # the saved index is reused when its revision matches, and rebuilt when stale
    m = Memory(tmp_path / "idx.db", embedder=table_embedder, gate=memsieve.GateConfig(profile="none"),
               index_min_size=50)
    assert m.search("t5", user_id="u", limit=1)[0].text == "t5"
    m.close()
    import sqlite3

    con = sqlite3.connect(tmp_path / "idx.db")
    con.execute("UPDATE scopes SET revision = revision + 1")
    con.commit()
    con.close()
    m = Memory(tmp_path / "idx.db", embedder=table_embedder, gate=memsieve.GateConfig(profile="none"),
               index_min_size=50)
    assert m.search("t9", user_id="u", limit=1)[0].text == "t9"
    m.close()
