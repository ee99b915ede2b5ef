"""Filters and as_of restrict the candidates before ranking, in every mode, on every store."""

from __future__ import annotations

import time

import pytest

from memsieve import GateConfig, Memory
from memsieve.inputs import now_iso

MODES = ("dense", "keyword", "hybrid")


@pytest.fixture(params=["sqlite", "postgres"])
def open_mem(request, tmp_path, embedder):
    made = []

    def make(**kwargs):
        target = tmp_path / "r.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
        m = Memory(target, embedder=embedder, gate=GateConfig(profile="none"), **kwargs)
        made.append(m)
        return m

    yield make
    for m in made:
        m.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_filtered_search_returns_min_of_limit_and_matches(open_mem, mode):
    m = open_mem()
    m.add([{"role": "user", "content": f"I drank coffee number {i} today."} for i in range(100)], user_id="c")
    m.add([{"role": "assistant", "content": f"Coffee tip {i}: grind the beans fresh."} for i in range(3)],
          user_id="c")
    for limit in (1, 3, 10):
        hits = m.search("coffee", user_id="c", mode=mode, limit=limit, filters={"role": "assistant"})
        assert len(hits) == min(limit, 3)
        assert all(h.metadata["role"] == "assistant" for h in hits)


@pytest.mark.parametrize("mode", MODES)
def test_as_of_sees_the_text_and_vector_that_held_then(open_mem, mode):
    m = open_mem()
    (d,) = m.add("I live in Lisbon.", user_id="u")
    m.add("My sister works at a bakery.", user_id="u")
    time.sleep(0.01)
    t = now_iso()
    time.sleep(0.01)
    m.update(d.memory_id, "I live in Porto.")
    past = m.search("Where do I live? Lisbon", user_id="u", mode=mode, as_of=t, limit=5)
    texts = [h.text for h in past]
    assert "I live in Lisbon." in texts and "I live in Porto." not in texts
    now = [h.text for h in m.search("Where do I live? Porto", user_id="u", mode=mode, limit=5)]
    assert "I live in Porto." in now and "I live in Lisbon." not in now
    if mode == "dense":
        # the vector that held then, not today's: the old text scores as an exact match
        (top,) = m.search("I live in Lisbon.", user_id="u", mode=mode, as_of=t, limit=1)
        assert top.text == "I live in Lisbon." and top.score == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_as_of_and_filters_together(open_mem, mode):
    m = open_mem()
    m.add([{"role": "user", "content": f"Tea note {i}."} for i in range(5)], user_id="t")
    time.sleep(0.01)
    t = now_iso()
    time.sleep(0.01)
    m.add([{"role": "assistant", "content": f"Tea note from the assistant {i}."} for i in range(4)], user_id="t")
    hits = m.search("tea note", user_id="t", mode=mode, as_of=t, filters={"role": "assistant"}, limit=10)
    assert hits == []
    hits = m.search("tea note", user_id="t", mode=mode, filters={"role": "assistant"}, limit=10)
    assert len(hits) == 4
    hits = m.search("tea note", user_id="t", mode=mode, as_of=t, filters={"role": "user"}, limit=3)
    assert len(hits) == 3 and all(h.metadata["role"] == "user" for h in hits)
