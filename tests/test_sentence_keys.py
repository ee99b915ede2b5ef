"""Sentence keys: a short text that says several things gets a vector for each sentence after its first
(memsieve.text.passages.key_spans); dense search finds the memory by its best key, the gate never reads
them, and they live and leave with their memory (update, delete, purge, another process's write)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TableEmbedder
from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError
from memsieve.scope import Scope
from memsieve.text.passages import KEY_BASE, KEY_MIN_CHARS, WINDOW_CHARS, is_key, key_spans, part_spans

U = {"user_id": "ana"}

TURN = ("Thanks for the tips on the garden, the tomatoes are doing great this year. "
        "By the way, I finally finished restoring the 1967 Vespa that my uncle left me in March. "
        "Anyway, what should I plant next to the basil?")


def key_rows(db) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT part FROM memory_parts ORDER BY memory_seq, part")]
    finally:
        con.close()


# ---- the splitting -------------------------------------------------------------


def test_keys_are_the_sentences_after_the_first_with_short_ones_joined():
    spans = key_spans(TURN)
    pieces = [TURN[a:b] for a, b in spans]
    assert pieces == ["By the way, I finally finished restoring the 1967 Vespa that my uncle left me in March. ",
                      "Anyway, what should I plant next to the basil?"]
    # A short sentence joins the next one; a short last one joins the one before.
    text = "Hi. Ok. I moved to Lisbon in May with my partner and our two cats. Yes. Sure."
    (only,) = key_spans("Thanks again for all of that, really helpful! " + text)
    assert text[text.index("Hi."):] in ("Thanks again for all of that, really helpful! " + text)[slice(*only)]
    assert key_spans("One sentence only, and it says just one thing about my week.") == []
    assert key_spans("x" * (WINDOW_CHARS + 1) + ". And more words that follow after it.") == []  # passages
    numbers = [n for n, _, _ in part_spans(TURN)]
    assert numbers == [KEY_BASE + 1, KEY_BASE + 2] and all(is_key(n) for n in numbers)
    assert part_spans(TURN, keys=False) == []
    assert not any(is_key(n) for n, _, _ in part_spans("long words here. " * 200))


_SENTENCES = st.lists(st.text(alphabet="abc de", min_size=0, max_size=60), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(_SENTENCES, st.sampled_from([". ", "! ", "? ", "\n", "; "]))
def test_keys_tile_the_text_after_its_first_sentence(sentences, sep):
    text = sep.join(sentences)
    spans = key_spans(text)
    if not spans:
        return
    start = spans[0][0]
    assert start > 0 and spans[-1][1] == len(text)
    for (a, b), (c, d) in zip(spans, spans[1:]):
        assert a < b == c < d  # in order, touching, no gap, no overlap
    assert "".join(text[a:b] for a, b in spans) == text[start:]
    # Every key but possibly the last says enough on its own; the first sentence is never a key.
    assert all(len(text[a:b].strip()) >= KEY_MIN_CHARS for a, b in spans[:-1])
    assert len(text[:start].strip()) >= KEY_MIN_CHARS


def test_sentence_keys_must_be_a_bool():
    with pytest.raises(ConfigError, match="sentence_keys must be True or False"):
        GateConfig(sentence_keys="yes")  # type: ignore[arg-type]


# ---- the real embedder -----------------------------------------------------------


def test_a_memory_scores_its_best_key_in_dense_search(tmp_path, embedder):
    question = "What year is the Vespa I restored?"
    scores = {}
    for keys in (True, False):
        mem = Memory(tmp_path / f"{keys}.db", embedder=embedder, gate=GateConfig(sentence_keys=keys))
        mem.add(["I bake chocolate chip cookies with my nephew on rainy weekends.", TURN], **U)
        hit = next(h for h in mem.search(question, mode="dense", limit=5, **U) if h.text == TURN)
        scores[keys] = hit.score
        mem.close()
    q = embedder.embed([question])[0]
    pieces = [TURN] + [TURN[a:b] for a, b in key_spans(TURN)]
    cos = embedder.embed(pieces) @ q
    assert scores[False] == pytest.approx(float(cos[0]), abs=1e-5)
    assert scores[True] == pytest.approx(float(cos.max()), abs=1e-5)
    assert cos.max() > cos[0] + 0.05  # the Vespa sentence is nearer the question than the whole turn


def test_the_gate_decides_exactly_as_without_keys(tmp_path, embedder):
    turns = [TURN, "I restored my uncle's old 1967 Vespa this spring. It runs well now, and I ride it to work.",
             "I moved to Lisbon in May. My partner found a job at the aquarium there, so we packed up.",
             "We relocated to Lisbon this May. My partner works at the aquarium now.",
             "My sister Rita is a nurse. She works nights at the hospital in Porto and sleeps in the day.",
             "Rita, my sister, is a nurse in Porto.", "I quit my job at the bank.",
             "I have tried three different Korean restaurants in town. The second one was my favourite.",
             "I have tried four different Korean restaurants in town so far. Still the second is best."]
    runs = {}
    for keys in (True, False):
        db = tmp_path / f"{keys}.db"
        mem = Memory(db, embedder=embedder, gate=GateConfig(sentence_keys=keys))
        decisions = [d for t in turns for d in mem.add(t, **U)]
        runs[keys] = [(d.event, d.layer, d.reason, d.novelty, d.tau, d.nearest_cos, d.information)
                      for d in decisions]
        rows = key_rows(db)
        assert (len(rows) > 0) is keys and all(is_key(p) for p in rows)
        mem.close()
    assert runs[True] == runs[False]
    events = [e for e, *_ in runs[True]]
    assert "ADD" in events and set(events) - {"ADD"}, events  # the set exercises more than one branch


# ---- the lifecycle (chosen vectors: a query is made one key's vector) ----------


def _keyed(mem: Memory, emb: TableEmbedder, text: str = TURN) -> tuple[str, str]:
    """Add ``text`` and make a query that is its last key's vector (and far from the whole text)."""
    (d,) = mem.add(text, **U)
    a, b = key_spans(text)[-1]
    query = "which sentence is last?"
    emb.table[query] = emb.table[text[a:b]]
    return d.memory_id, query


def test_keys_survive_reopening_and_leave_with_update_delete_and_purge(tmp_path):
    emb = TableEmbedder()
    db = tmp_path / "m.db"
    mem = Memory(db, embedder=emb)
    mem.add(["a short memory", "another short one"], **U)
    memory_id, query = _keyed(mem, emb)
    first = mem.search(query, mode="dense", limit=1, **U)[0]
    assert first.id == memory_id and first.score == pytest.approx(1.0, abs=1e-5)
    gate = mem.gates.peek(Scope("ana"))
    assert len(gate.keys) == len(key_rows(db)) == 2 and len(gate.parts) == 0
    mem.close()
    mem = Memory(db, embedder=emb)  # hydration
    assert mem.search(query, mode="dense", limit=1, **U)[0].score == pytest.approx(1.0, abs=1e-5)
    mem.update(memory_id, "now one plain sentence about nothing in particular at all.", **U)
    gate = mem.gates.peek(Scope("ana"))
    assert key_rows(db) == [] and len(gate.keys) == 0
    assert all(h.score < 0.9 for h in mem.search(query, mode="dense", limit=5, **U))
    mem.update(memory_id, TURN, **U)  # keyed again
    assert len(gate.keys) == len(key_rows(db)) == 2
    assert mem.search(query, mode="dense", limit=1, **U)[0].id == memory_id
    mem.delete(memory_id, **U)
    assert len(gate.keys) == 0
    assert memory_id not in [h.id for h in mem.search(query, mode="dense", limit=5, **U)]
    assert len(key_rows(db)) == 2  # a delete is soft: the rows stay for a restore
    other_id, _ = _keyed(mem, emb, "A different turn about the weather this week. " + TURN)
    assert len(key_rows(db)) == 5 and len(gate.keys) == 3
    mem.purge(other_id, **U)
    assert len(key_rows(db)) == 2 and len(gate.keys) == 0
    mem.purge(memory_id, **U)
    assert key_rows(db) == []
    mem.close()


def test_a_filtered_dense_search_reads_the_keys_too(tmp_path):
    emb = TableEmbedder()
    mem = Memory(tmp_path / "m.db", embedder=emb)
    mem.add("a short memory", metadata={"k": 1}, **U)
    unfiltered_id, query = _keyed(mem, emb)  # no metadata: a filter on k leaves it out
    hits = mem.search(query, mode="dense", filters={"k": 1}, limit=2, **U)
    assert unfiltered_id not in [h.id for h in hits] and all(h.score < 0.9 for h in hits)
    text = "Another turn about the week, nothing special. " + TURN
    (d,) = mem.add(text, metadata={"k": 1}, **U)
    a, b = key_spans(text)[-2]
    emb.table["q2"] = emb.table[text[a:b]]
    hits = mem.search("q2", mode="dense", filters={"k": 1}, limit=1, **U)
    assert hits[0].id == d.memory_id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    mem.close()


def test_another_process_sees_the_keys_and_their_removal(tmp_path):
    emb = TableEmbedder()
    db = tmp_path / "m.db"
    reader, writer = Memory(db, embedder=emb), Memory(db, embedder=emb)
    reader.add("the reader's own memory", **U)
    assert reader.search("anything", mode="dense", **U)  # the reader's gate is hydrated now
    memory_id, query = _keyed(writer, emb)
    gate = reader.gates.peek(Scope("ana"))
    hit = reader.search(query, mode="dense", limit=1, **U)[0]
    assert hit.id == memory_id and hit.score == pytest.approx(1.0, abs=1e-5)
    # Caught up through the revision counter, not re-hydrated; the keys went to the keys' rows.
    assert reader.gates.peek(Scope("ana")) is gate and len(gate.keys) == 2 and len(gate.parts) == 0
    writer.delete(memory_id, **U)
    assert memory_id not in [h.id for h in reader.search(query, mode="dense", limit=5, **U)]
    assert len(gate.keys) == 0
    for m in (reader, writer):
        m.close()


def test_keys_cost_one_embedding_per_extra_sentence_in_the_same_call(tmp_path):
    emb = TableEmbedder()
    mem = Memory(tmp_path / "m.db", embedder=emb)
    calls = emb.calls
    mem.add([TURN, "a short memory"], **U)
    assert emb.calls == calls + 1  # whole texts and keys in one embedding call
    assert set(emb.table) >= {TURN[a:b] for a, b in key_spans(TURN)}
    mem.close()
    emb2 = TableEmbedder()
    off = Memory(tmp_path / "off.db", embedder=emb2, gate=GateConfig(sentence_keys=False))
    off.add([TURN, "a short memory"], **U)
    assert not set(emb2.table) & {TURN[a:b] for a, b in key_spans(TURN)}
    off.close()
