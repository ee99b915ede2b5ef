"""A purge erases what other records say of the text: an LLM's reason or raw reply that quotes it (whole,
JSON-escaped or in part), the gate's reasons that quote its words, and the embedding an older index in
another open Memory still holds."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np

from memsieve import GateConfig, Memory
from memsieve.llm import LLMConfig
from memsieve.store.sql_purge import ERASED_REASON, quote_marks, quoted_in

from conftest import unit
from scripted_llm import ScriptedLLM

# A fixed tau with a wide band: every later add in the scope asks the LLM.
GATE = GateConfig(profile="maxcos", tau=0.01, delta=1.9)
SECRET = 'My locker code is "Zyx7731" at the gym.'
OTHER = "My locker at the gym has a new code."


def _bytes_of(db: Path) -> bytes:
    """Every file of the store: the database, its WAL, and the hnswlib index folder beside it."""
    files = [f for f in glob.glob(str(db) + "*") + glob.glob(str(db) + "*/*") if os.path.isfile(f)]
    return b"".join(Path(f).read_bytes() for f in files)


def _llm_memory(tmp_path, table_embedder, server):
    table_embedder.table.update({SECRET: unit(1, 0, 0), OTHER: unit(1, 0.3, 0)})
    return Memory(tmp_path / "q.db", embedder=table_embedder, gate=GATE,
                  llm=LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5))


def test_an_llm_reason_in_another_memorys_history_that_quotes_the_text_is_erased(tmp_path, table_embedder):
    with ScriptedLLM() as server:
        m = _llm_memory(tmp_path, table_embedder, server)
        (a,) = m.add(SECRET, user_id="ana")
        server.reply_json({"event": "ADD", "index": None, "text": None,
                           "reason": "differs from memory 0 (My locker code is Zyx7731 at the gym)"})
        (b,) = m.add(OTHER, user_id="ana")
        assert b.event == "ADD" and b.layer == "llm"
        assert "Zyx7731" in m.history(b.memory_id)[-1].reason
        m.purge(a.memory_id, user_id="ana")
        assert [h.reason for h in m.history(b.memory_id)] == [ERASED_REASON]
        assert m.get(b.memory_id).text == OTHER  # the other memory's own text is its own
        m.close()
    assert b"zyx7731" not in _bytes_of(tmp_path / "q.db").lower()


def test_a_faults_raw_reply_that_quotes_the_text_as_json_is_erased(tmp_path, table_embedder):
    with ScriptedLLM() as server:
        m = _llm_memory(tmp_path, table_embedder, server)
        (a,) = m.add(SECRET, user_id="ana")
        # An unknown event is a fault, kept with the raw reply, which JSON-escapes the text's quotes.
        server.reply_json({"event": "MERGE", "index": 0, "reason": f"same as {SECRET}"})
        m.add(OTHER, user_id="ana")
        (fault,) = m.faults(user_id="ana")
        assert '\\"Zyx7731\\"' in fault["raw"]
        m.purge(a.memory_id, user_id="ana")
        (fault,) = m.faults(user_id="ana")
        assert fault["raw"] is None and fault["detail"] == ERASED_REASON
        m.close()
    assert b"zyx7731" not in _bytes_of(tmp_path / "q.db").lower()


def test_the_gates_reason_quoting_a_folded_texts_words_is_erased_with_it(tmp_path, table_embedder):
    # A paraphrase that rebuilds the sentence folds (one that puts a word in place of another is a change).
    cat, kitty = "Ana has a small grey cat named Pip.", "Pip is what Ana calls her little grey kitty."
    table_embedder.table.update({cat: unit(1, 0, 0), kitty: unit(1, 0.02, 0)})
    m = Memory(tmp_path / "n.db", embedder=table_embedder)
    (a,) = m.add(cat, user_id="ana")
    (noop,) = m.add(kitty, user_id="ana")
    assert noop.event == "NOOP" and noop.memory_id == a.memory_id
    assert any("kitty" in h.reason for h in m.history(a.memory_id))
    m.purge(a.memory_id, user_id="ana")
    assert all("kitty" not in h.reason for h in m.history(a.memory_id))
    assert [h.event for h in m.history(a.memory_id)][-1] == "PURGE"
    m.close()
    assert b"kitty" not in _bytes_of(tmp_path / "n.db").lower()


def test_an_older_index_in_another_memory_is_not_saved_over_a_purge(tmp_path, table_embedder):
    db = tmp_path / "ix.db"
    secret, other = "The safe code is hidden in the Plumvantic cookbook.", "I sail near Cascais on weekends."
    table_embedder.table.update({secret: unit(1, 0.5, 0.25), other: unit(0, 1, 0)})
    first = Memory(db, embedder=table_embedder, index_min_size=1)
    (a,) = first.add(secret, user_id="ana")
    first.add(other, user_id="ana")
    assert first.search("cookbook", user_id="ana", mode="dense")  # the first Memory now holds the index
    vector = table_embedder.embed([secret])[0].astype(np.float32).tobytes()
    second = Memory(db, embedder=table_embedder, index_min_size=1)
    second.purge(a.memory_id, user_id="ana")
    second.close()
    assert vector not in _bytes_of(db)
    first.close()  # its index reflects an older revision: dropped, not saved
    assert vector not in _bytes_of(db)
    again = Memory(db, embedder=table_embedder, index_min_size=1)
    assert [h.text for h in again.search("sail", user_id="ana", mode="dense")] == [other]
    again.close()


def test_quote_marks_find_a_text_whole_escaped_by_sentence_and_by_its_codes_only():
    marks = quote_marks([SECRET])
    assert quoted_in(marks, "DIFFERS FROM memory 0 (my locker code is zyx7731 at the gym)")
    assert quoted_in(marks, '{"reason": "My locker code is \\"Zyx7731\\" at the gym."}')
    assert quoted_in(marks, "the code was zyx7731")
    assert not quoted_in(marks, "the user keeps a locker at the gym")
    assert not quoted_in(marks, None) and quote_marks([""]) == set()


def test_a_purge_drops_the_text_from_the_readers_memo_caches(tmp_path, table_embedder):
    from memsieve.text import fold
    from memsieve.text.lexicon import ENGLISH
    from memsieve.text.when_told import dates_past

    m = Memory(tmp_path / "memo.db", embedder=table_embedder)
    (a,) = m.add("Zoë's locker code 4471 is hidden behind the Qüarzel poster.", user_id="ana")
    # Said again: exact dedup compares its written value with the memory's marks, which the gate reads then.
    m.add("Zoë's locker code 4471 is hidden behind the Qüarzel poster.", user_id="ana")
    ENGLISH.tells_of_event("I read the Qüarzel poster's code yesterday.")  # a text the event reading dates
    memos = (ENGLISH._derived.marks, ENGLISH._derived.cues, fold._fold_short, dates_past)
    assert all(memo.cache_info().currsize > 0 for memo in memos)
    m.purge(a.memory_id, user_id="ana")
    assert [memo.cache_info().currsize for memo in memos] == [0, 0, 0, 0]
    m.close()
