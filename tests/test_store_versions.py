"""Point-in-time reads: an updated memory's old text and vector stay readable for the time they held."""

from __future__ import annotations

import time

import numpy as np

from memsieve import Scope
from memsieve.inputs import now_iso
from memsieve.store.base import CandidatesRow


def _tick() -> str:
    # ISO times have microseconds; a pause makes "before" and "after" distinct.
    time.sleep(0.002)
    t = now_iso()
    time.sleep(0.002)
    return t


def test_candidates_at_a_time_hold_the_text_and_vector_of_that_time(mem):
    (d,) = mem.add("I live in Lisbon", user_id="ana")
    (other,) = mem.add("My sister Marta plays the cello", user_id="ana")
    lisbon_vec = mem.embed(["I live in Lisbon"])[0]
    t_lisbon = _tick()
    mem.update(d.memory_id, "I live in Porto")
    t_porto = _tick()
    mem.update(d.memory_id, "I live in Braga")
    porto_vec, braga_vec = mem.embed(["I live in Porto", "I live in Braga"])
    scope = Scope.of("ana")

    for as_of, text, vec in ((t_lisbon, "I live in Lisbon", lisbon_vec), (t_porto, "I live in Porto", porto_vec),
                             (None, "I live in Braga", braga_vec), (now_iso(), "I live in Braga", braga_vec)):
        found = mem.store.candidates(scope, as_of=as_of)
        assert isinstance(found, CandidatesRow)
        assert found.seqs.dtype == np.int64 and found.matrix.dtype == np.float32
        assert found.matrix.shape == (2, 384) and found.matrix.flags.c_contiguous
        by_text = dict(zip(found.texts, range(2)))
        assert set(by_text) == {text, "My sister Marta plays the cello"}, as_of
        np.testing.assert_allclose(found.matrix[by_text[text]], vec, atol=1e-6)
        assert found.metadata == [{}, {}]
        items = mem.store.items_at([int(s) for s in found.seqs], as_of) if as_of else None
        if items is not None:
            assert sorted(i.text for i in items.values()) == sorted(found.texts)
            assert {i.id for i in items.values()} == {d.memory_id, other.memory_id}
    assert mem.get(d.memory_id).text == "I live in Braga"  # the current row is untouched by the reads


def test_a_memory_created_after_the_time_is_not_a_candidate_and_one_deleted_after_is(mem):
    (early,) = mem.add("I live in Lisbon", user_id="ana", metadata={"k": 1})
    t = _tick()
    mem.add("I work as a nurse", user_id="ana")
    mem.update(early.memory_id, "I live in Porto")
    mem.delete(early.memory_id)
    found = mem.store.candidates(Scope.of("ana"), as_of=t)
    assert found.texts == ["I live in Lisbon"] and found.metadata == [{"k": 1}]
    now = mem.store.candidates(Scope.of("ana"), as_of=None)
    assert now.texts == ["I work as a nurse"]


def test_items_at_a_time_before_any_update_is_the_current_row(mem):
    (d,) = mem.add("I live in Lisbon", user_id="ana")
    seq = int(mem.store.candidates(Scope.of("ana"), as_of=None).seqs[0])
    assert mem.store.items_at([seq], now_iso())[seq].text == "I live in Lisbon"
    assert mem.store.items_at([], now_iso()) == {}
    assert mem.store.items_at([seq + 1000], now_iso()) == {}


def test_two_updates_in_one_instant_keep_the_text_before_both(mem):
    (d,) = mem.add("I live in Lisbon", user_id="ana")
    t = _tick()
    scope = Scope.of("ana")
    seq = int(mem.store.candidates(scope, as_of=None).seqs[0])
    same = now_iso()
    vecs = mem.embed(["I live in Porto", "I live in Braga"])
    with mem.store.transaction(scope) as tx:
        tx.update_memory_text(seq, text="I live in Porto", text_hash="p", embedding=vecs[0], now=same)
        tx.update_memory_text(seq, text="I live in Braga", text_hash="b", embedding=vecs[1], now=same)
    assert mem.store.candidates(scope, as_of=t).texts == ["I live in Lisbon"]
    assert mem.store.candidates(scope, as_of=same).texts == ["I live in Braga"]


def test_reads_and_marks_by_seq_take_more_seqs_than_one_statement_can_bind(mem):
    from memsieve.store.sql_records import SEQ_BATCH

    ds = mem.add(["I live in Lisbon", "My sister Marta plays the cello", "Our dog is afraid of thunder"],
                 user_id="ana")
    assert [d.event for d in ds] == ["ADD"] * 3
    scope = Scope.of("ana")
    real = [int(s) for s in mem.store.candidates(scope, as_of=None).seqs]
    many = list(range(10_000_000, 10_000_000 + 40 * SEQ_BATCH)) + real + real  # 36k seqs, duplicates too
    assert sorted(mem.store.ids_for_seqs(many).values()) == sorted(d.memory_id for d in ds)
    assert set(mem.store.items_for_seqs(many)) == set(real)
    assert set(mem.store.items_at(many, now_iso())) == set(real)
    with mem.store.transaction(scope) as tx:
        tx.mark_changed(scope, many, 99)
    assert mem.store.changes_since(scope, 98, 384).seqs.tolist() == sorted(real)
