"""Long texts are whole: a text longer than the embedder's window is embedded passage by passage
(memsieve.text.passages), every passage counts in the gate and in dense search, and every way a
memory leaves (delete, purge, update, another process's write) takes its passages with it."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from conftest import TableEmbedder
from memsieve import GateConfig, Memory
from memsieve.text.passages import PART_BASE, WINDOW_CHARS, embed_passages, part_spans, passage_spans
from memsieve.inputs import MAX_TEXT_CHARS, now_iso
from memsieve.scope import Scope

U = {"user_id": "ana"}

# Paragraphs of an assistant's long answers, none about bread.
FILLER = [
    "For your vegetable garden, start tomatoes indoors six weeks before the last frost and move them out "
    "once the nights stay above ten degrees. Water deeply twice a week rather than a little every day, so "
    "the roots grow down. Mulch with straw to keep the soil moist and the weeds down. Basil planted "
    "between the rows keeps some pests away, and marigolds at the edges help too.",
    "About your monthly budget: list fixed costs first (rent, insurance, the phone plan), then set aside "
    "a fifth of what remains for savings before anything else. Track groceries for a month to learn what "
    "you really spend. An emergency fund of three months of expenses is a sound first goal, kept in an "
    "account you cannot reach with a card.",
    "For the half marathon, build up to four runs a week: one long slow run, one tempo run, and two easy "
    "ones. Increase the long run by no more than ten percent a week. Rest days matter as much as the runs. "
    "Practice drinking on the move during long runs, and never try new shoes on race day.",
    "Learning Spanish goes faster with a little every day than with a lot once a week. Read short news "
    "articles, keep a notebook of verbs, and speak aloud even when alone. Watching series with Spanish "
    "subtitles trains the ear. A language exchange partner once a week gives you real conversation.",
    "Your car's brakes squeal because the pads are worn down to their indicators. Replace the pads soon "
    "and have the rotors measured; if they are scored they need resurfacing. Check the brake fluid, which "
    "should be changed every two years, and the tire pressure, which affects stopping distance.",
    "Before the interview, research the company's recent projects and prepare three stories that show "
    "how you solved a hard problem, worked in a team and learned from a failure. Prepare questions for "
    "them too. Arrive ten minutes early, and send a short thank-you note the same evening.",
]
LAST = ("One more thing you told me: the sourdough starter your grandmother gave you in 2019 is called "
        "Clementine. You feed her rye flour and water every Sunday morning, keep her in the fridge during "
        "the week, and bake a country loaf with her for the family lunch.")


def long_text(chars: int = 10_000) -> str:
    paras: list[str] = []
    i = 0
    while sum(len(p) + 2 for p in paras) + len(LAST) < chars:
        paras.append(FILLER[i % len(FILLER)])
        i += 1
    return "\n\n".join(paras + [LAST])


def parts_rows(db) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT COUNT(*) FROM memory_parts").fetchone()[0]
    finally:
        con.close()


# ---- the splitting -------------------------------------------------------------


def test_spans_cover_the_text_at_boundaries_and_a_short_text_is_one_span():
    text = long_text()
    spans = passage_spans(text)
    assert len(text) >= 9_900 and len(spans) > 10
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a, b), (c, d) in zip(spans, spans[1:]):
        assert a < c <= b < d  # in order, overlapping or touching, no gap
    assert max(b - a for a, b in spans) <= 1000
    # Every passage starts at a word (and most at a sentence or paragraph).
    assert all(a == 0 or text[a - 1].isspace() for a, _ in spans)
    assert text.endswith(text[spans[-1][0]:]) and LAST in text[spans[-1][0]:]
    assert passage_spans("x" * WINDOW_CHARS) == [(0, WINDOW_CHARS)]
    vectors, parts = embed_passages(TableEmbedder().embed, ["short", text])
    assert vectors.shape == (2, 32) and parts[0] == [] and [p.index for p in parts[1]] == list(
        range(1, len(spans)))


def test_the_default_limit_takes_a_long_chat_turn(tmp_path):
    assert MAX_TEXT_CHARS == 100_000
    mem = Memory(tmp_path / "m.db", embedder=TableEmbedder())
    (d,) = mem.add("word " * 19_000, **U)  # 95,000 characters: no refusal
    assert d.event == "ADD"
    assert parts_rows(tmp_path / "m.db") == len(passage_spans(("word " * 19_000).strip())) - 1
    mem.close()


# ---- the real embedder -----------------------------------------------------------


@pytest.mark.parametrize("vectors", ["float32", "int8"])
def test_a_question_about_the_last_paragraph_finds_a_10000_character_text(tmp_path, embedder, vectors):
    text = long_text()
    question = "What is the name of the sourdough starter my grandmother gave me?"
    found = {}
    for passages in (True, False):
        mem = Memory(tmp_path / f"{passages}.db", embedder=embedder,
                     gate=GateConfig(passages=passages, vectors=vectors))
        mem.add(["I bake chocolate chip cookies with my nephew on rainy weekends.",
                 "My grandmother lives in Porto and loves crosswords.",
                 "I started a pottery class on Thursday evenings."], **U)
        (d,) = mem.add(text, **U)
        assert d.event == "ADD"
        hits = mem.search(question, mode="dense", limit=3, **U)
        found[passages] = {h.text: h.score for h in hits}
        if passages:
            assert hits[0].text == text, [h.text[:40] for h in hits]
        mem.close()
    # Judged by its opening alone the long text ranks lower, at a lower score.
    assert found[False].get(text, -1.0) < found[True][text]


def test_a_long_text_whose_later_part_is_new_is_not_a_noop_against_its_first_part(tmp_path, embedder):
    # The stored memory is longer than the window: the candidate's opening is all of what it reads.
    first = " ".join([FILLER[0], FILLER[4], FILLER[5], FILLER[0]])
    later = "\n\n".join([first, FILLER[1], FILLER[2], FILLER[3]])
    routes = {}
    # maxcos: meaning alone decides (no information term, cues or values), so only the passages can.
    for name, gate in [("opening", GateConfig(profile="maxcos", tau=0.2, passages=False)),
                       ("passages", GateConfig(profile="maxcos", tau=0.2)), ("default", GateConfig())]:
        mem = Memory(tmp_path / f"{name}.db", embedder=embedder, gate=gate)
        mem.add(first, **U)
        (d,) = mem.add(later, **U)
        routes[name] = (d.event, d.layer)
        mem.close()
    assert routes["opening"] == ("NOOP", "novelty")  # its opening is the stored memory
    assert routes["passages"] == ("ADD", "novelty")  # but the budget, the marathon and the Spanish are new
    assert routes["default"] == ("ADD", "novelty")


def test_short_texts_decide_exactly_as_without_passages(tmp_path, embedder):
    turns = ["I moved to Lisbon in May.", "I relocated to Lisbon this May.", "My sister Rita is a nurse.",
             "Rita, my sister, works as a nurse in Porto.", "I quit my job at the bank.",
             "I no longer work at the bank.", "We adopted a cat named Miso.", "Our cat is called Miso.",
             "x" * 30 + " I like hiking in the Alps every summer with old friends from school."]
    runs = {}
    for passages in (True, False):
        db = tmp_path / f"{passages}.db"
        mem = Memory(db, embedder=embedder, gate=GateConfig(passages=passages))
        decisions = [d for t in turns for d in mem.add(t, **U)]
        hits = mem.search("where do I live", mode="dense", limit=5, **U)
        runs[passages] = ([(d.event, d.layer, d.novelty, d.tau, d.nearest_cos, d.information) for d in decisions],
                          [(h.text, h.score) for h in hits])
        mem.close()
        assert parts_rows(db) == 0
    assert runs[True] == runs[False]
    assert {e for e, *_ in runs[True][0]} >= {"ADD", "NOOP"}


# ---- the lifecycle (chosen vectors: a query is made the last passage's vector) ----------


def _long_memory(mem: Memory, emb: TableEmbedder, text: str) -> tuple[str, str]:
    """Add ``text`` and make a query that is its last passage (and far from its opening)."""
    (d,) = mem.add(text, **U)
    a, b = passage_spans(text)[-1]
    query = "which passage is last?"
    emb.table[query] = emb.table[text[a:b]]
    return d.memory_id, query


def test_delete_and_update_take_the_passages_out_of_search(tmp_path):
    emb = TableEmbedder()
    mem = Memory(tmp_path / "m.db", embedder=emb)
    mem.add(["a short memory", "another short one"], **U)
    memory_id, query = _long_memory(mem, emb, long_text(4000))
    assert mem.search(query, mode="dense", limit=1, **U)[0].id == memory_id
    gate = mem.gates.peek(Scope("ana"))
    assert len(gate.parts) == parts_rows(tmp_path / "m.db") > 0
    mem.update(memory_id, "now a short text", **U)
    assert parts_rows(tmp_path / "m.db") == 0 and len(gate.parts) == 0
    mem.update(memory_id, long_text(4000), **U)  # re-split
    assert len(gate.parts) == parts_rows(tmp_path / "m.db") > 0
    assert mem.search(query, mode="dense", limit=1, **U)[0].id == memory_id
    mem.delete(memory_id, **U)
    assert len(gate.parts) == 0
    assert memory_id not in [h.id for h in mem.search(query, mode="dense", limit=5, **U)]
    mem.close()


def test_a_filtered_dense_search_reads_the_passages_too(tmp_path):
    emb = TableEmbedder()
    mem = Memory(tmp_path / "m.db", embedder=emb)
    mem.add("a short memory", metadata={"k": 1}, **U)
    (d,) = mem.add(long_text(4000), metadata={"k": 1}, **U)
    a, b = passage_spans(long_text(4000))[-1]
    emb.table["q"] = emb.table[long_text(4000)[a:b]]
    hits = mem.search("q", mode="dense", filters={"k": 1}, limit=1, **U)
    assert hits[0].id == d.memory_id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    mem.close()


def test_another_process_sees_the_passages_and_their_removal(tmp_path):
    emb = TableEmbedder()
    db = tmp_path / "m.db"
    reader, writer = Memory(db, embedder=emb), Memory(db, embedder=emb)
    reader.add("the reader's own memory", **U)
    assert reader.search("anything", mode="dense", **U)  # the reader's gate is hydrated now
    memory_id, query = _long_memory(writer, emb, long_text(4000))
    # Caught up through the revision counter, not re-hydrated.
    gate = reader.gates.peek(Scope("ana"))
    assert reader.search(query, mode="dense", limit=1, **U)[0].id == memory_id
    assert reader.gates.peek(Scope("ana")) is gate and len(gate.parts) > 0
    fresh = Memory(db, embedder=emb)  # hydration
    assert fresh.search(query, mode="dense", limit=1, **U)[0].id == memory_id
    writer.delete(memory_id, **U)
    assert memory_id not in [h.id for h in reader.search(query, mode="dense", limit=5, **U)]
    assert len(gate.parts) == 0
    for m in (reader, writer, fresh):
        m.close()


def test_purge_leaves_no_passage_embedding_bytes_in_the_sqlite_file(tmp_path):
    emb = TableEmbedder()
    db = tmp_path / "m.db"
    mem = Memory(db, embedder=emb)
    mem.add("a memory that stays", **U)
    memory_id, _ = _long_memory(mem, emb, long_text(4000))
    con = sqlite3.connect(db)
    blobs = [bytes(r[0]) for r in con.execute("SELECT embedding FROM memory_parts")]
    con.close()
    assert len(blobs) > 2

    def file_bytes() -> bytes:
        return b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name.startswith(db.name))

    assert all(b in file_bytes() for b in blobs)
    mem.purge(memory_id, **U)
    assert parts_rows(db) == 0
    data = file_bytes()
    assert not any(b in data for b in blobs)
    mem.close()
    data = file_bytes()
    assert not any(b[:64] in data for b in blobs)  # not even a fragment


def test_the_gate_counts_a_long_memory_once_among_the_nearest():
    from memsieve.gate.parts import PartRows
    from memsieve.text.passages import Part

    rng = np.random.default_rng(7)
    rows = rng.standard_normal((6, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    parts = PartRows(16, vectors="float32")
    # Memory 5 has four passages all near the query; it must appear once.
    q = rows[0]
    near = [(q + 0.01 * rng.standard_normal(16)).astype(np.float32) for _ in range(4)]
    parts.put(5, [Part(index=i + 1, start=0, end=1, vector=v / np.linalg.norm(v)) for i, v in enumerate(near)])
    own = np.array([1, 2, 3], np.int64), np.array([0.5, 0.4, 0.3], np.float32)
    seqs, cos = parts.nearest_memories(*own, q, 3)
    assert seqs.tolist()[0] == 5 and len(set(seqs.tolist())) == 3 and seqs.tolist()[1:] == [1, 2]
    assert cos[0] > 0.99
    parts.drop(5)
    assert len(parts) == 0 and parts.nearest_memories(*own, q, 3)[0].tolist() == [1, 2, 3]
    assert 5 * PART_BASE + 1 > 5  # keys are derived, never a memory's own seq


def test_postgres_stores_hydrates_and_purges_the_passages(pg_url):
    emb = TableEmbedder()
    mem = Memory(pg_url, embedder=emb)
    mem.add("a memory that stays", **U)
    memory_id, query = _long_memory(mem, emb, long_text(4000))
    fresh = Memory(pg_url, embedder=emb)
    assert fresh.search(query, mode="dense", limit=1, **U)[0].id == memory_id
    n = mem.store._q("SELECT COUNT(*) FROM memory_parts").fetchone()[0]
    assert n == len(passage_spans(long_text(4000))) - 1
    mem.purge(memory_id, **U)
    assert mem.store._q("SELECT COUNT(*) FROM memory_parts").fetchone()[0] == 0
    assert memory_id not in [h.id for h in fresh.search(query, mode="dense", limit=5, **U)]
    for m in (mem, fresh):
        m.close()


# ---- every way a text changes keeps it findable by its parts -------------------------


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_point_in_time_search_reads_the_parts_each_text_had(request, tmp_path, store):
    emb = TableEmbedder()
    mem = Memory(tmp_path / "m.db" if store == "sqlite" else request.getfixturevalue("pg_url"), embedder=emb)
    mem.add(["a short memory", "another short one"], **U)
    memory_id, query = _long_memory(mem, emb, long_text(4000))
    then = now_iso()
    hit = mem.search(query, mode="dense", as_of=then, limit=1, **U)[0]
    assert hit.id == memory_id and hit.score == pytest.approx(1.0, abs=1e-5)
    # Edited since: today's parts are the new text's, and the text at `then` is found by its own.
    new = long_text(5000).replace("Clementine", "Dorothea")
    a, b = passage_spans(new)[-1]
    emb.table["the new last passage"] = emb.embed([new[a:b]])[0]
    mem.update(memory_id, new, **U)
    at_then = {h.id: h.score for h in mem.search("the new last passage", mode="dense", as_of=then, limit=3, **U)}
    assert at_then.get(memory_id, -1.0) < 0.9
    hit = mem.search(query, mode="dense", as_of=then, limit=1, **U)[0]
    assert hit.id == memory_id and hit.score == pytest.approx(1.0, abs=1e-5) and "Clementine" in hit.text
    later = now_iso()
    now = {h.id: h.score for h in mem.search("the new last passage", mode="dense", as_of=later, limit=3, **U)}
    assert now[memory_id] == pytest.approx(1.0, abs=1e-5)
    assert {h.id: h.score for h in mem.search(query, mode="dense", as_of=later, limit=3, **U)}.get(memory_id, -1) < 0.9
    # A purge takes the old text's parts too.
    count = "SELECT COUNT(*) FROM version_parts"
    assert mem.store._q(count).fetchone()[0] == len(passage_spans(long_text(4000))) - 1
    mem.purge(memory_id, **U)
    assert mem.store._q(count).fetchone()[0] == 0
    mem.close()


def test_an_llm_merged_long_text_and_its_undo_keep_their_passages(tmp_path, embedder):
    from scripted_llm import ScriptedLLM

    from memsieve.llm import LLMClient, LLMConfig

    first = long_text(3000)
    second = first + " Truly."
    question = "What is the name of the sourdough starter my grandmother gave me?"
    q = embedder.embed([question])[0]

    def by_parts(text: str) -> float:
        """The question's best cosine over the text and every part the write path cuts from it."""
        pieces = [text] + [text[a:b] for _, a, b in part_spans(text)]
        return float(np.max(embedder.embed(pieces) @ q))

    db = tmp_path / "m.db"
    with ScriptedLLM() as server, Memory(db, embedder=embedder, gate=GateConfig(profile="none")) as mem:
        mem.add(["I bake chocolate chip cookies with my nephew on rainy weekends.",
                 "My grandmother lives in Porto and loves crosswords."], **U)
        mem.add(first, source="t1", **U)
        mem.add(second, source="t2", **U)

        def scores() -> dict[str, float]:
            return {h.text: h.score for h in mem.search(question, mode="dense", limit=4, **U)}

        assert scores()[first] == pytest.approx(by_parts(first), abs=1e-4)
        server.reply(json.dumps({"text": second + " Every single Sunday."}))
        client = LLMClient(LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5.0))
        report = mem.consolidate(llm=client, **U)
        assert [m.status for m in report.merges] == ["merged"]
        merged = report.merges[0].text  # as kept: the merge's whitespace folded
        assert merged.endswith("Every single Sunday.") and len(merged) > 3000
        # The kept member's new text is scored by its parts, not by its opening alone.
        whole = float(embedder.embed([merged])[0] @ q)
        assert by_parts(merged) > whole + 0.05
        assert scores()[merged] == pytest.approx(by_parts(merged), abs=1e-4)
        with Memory(db, embedder=embedder, gate=GateConfig(profile="none")) as other:  # from the store
            assert {h.text: h.score for h in other.search(question, mode="dense", limit=4, **U)}[merged] == \
                pytest.approx(by_parts(merged), abs=1e-4)
        mem.unconsolidate(report.merges[0].id)
        after = scores()
        assert after[first] == pytest.approx(by_parts(first), abs=1e-4)
        assert after[second] == pytest.approx(by_parts(second), abs=1e-4)
    with Memory(db, embedder=embedder, gate=GateConfig(profile="none")) as other:
        found = {h.text: h.score for h in other.search(question, mode="dense", limit=4, **U)}
        assert found[second] == pytest.approx(by_parts(second), abs=1e-4)
        assert found[first] == pytest.approx(by_parts(first), abs=1e-4)
