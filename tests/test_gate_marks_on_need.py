"""A memory's marks and readings are read when a fold is first weighed against it, not when it is added.

The gate holds the text of a memory whose marks it has not read; the cache's
size estimate counts that text, a purge or removal drops it, and what the
marks say does not depend on when they were read.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from memsieve import Memory
from memsieve.gate.cache import gate_bytes
from memsieve.gate.config import GateConfig
import memsieve.gate.profiles.kde as kde
from memsieve.gate.scope_gate import Readings, ScopeGate, _readings_bytes, new_threshold
from memsieve.text.cues import find_stated_values
from memsieve.text.lexicon import ENGLISH

D = 8
TEXTS = ["My bike is blue and I ride it to work at 8:30.", "I was hired by Ben in 2019.",
         "Our cat Luna is scared of the neighbour's dog."]


def _gate() -> ScopeGate:
    config = GateConfig()
    return ScopeGate(config, D, threshold=new_threshold(config), sage_tau=None, revision=0)


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(D).astype(np.float32)
    return v / np.linalg.norm(v)


def test_an_added_memory_holds_its_text_until_its_marks_are_first_asked_for():
    g = _gate()
    empty = gate_bytes(g)
    for seq, text in enumerate(TEXTS, start=1):
        g.add(seq, _unit(seq), float("nan"), text)
    assert g.marked_words == 0 and g.unread_bytes > sum(len(t) for t in TEXTS)
    held = gate_bytes(g)
    assert held > empty + g.unread_bytes  # the estimate counts the texts held
    before = g.unread_bytes
    marks = g.marks_of(2)
    assert marks == ENGLISH.marks(TEXTS[1])
    assert g.marks_of(2) is marks  # read once
    assert g.unread_bytes < before and g.marked_words == len(marks.sequence)
    assert g.marks_of(99) is None


def test_a_removed_or_rewritten_memory_leaves_neither_its_text_nor_its_marks():
    g = _gate()
    for seq, text in enumerate(TEXTS, start=1):
        g.add(seq, _unit(seq), float("nan"), text)
    g.marks_of(1)
    g.remove(1)
    g.remove(2)
    assert g.marks_of(1) is None and g.marks_of(2) is None
    assert g.marked_words == 0 and g.marked_doers == 0
    g.replace(3, _unit(7), "Our dog Rex is scared of the neighbour's cat.")
    assert g.marks_of(3) == ENGLISH.marks("Our dog Rex is scared of the neighbour's cat.")
    g.remove(3)
    assert g.unread_bytes == 0 and g.marked_words == 0 and g.marked_doers == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "read", "readings", "remove", "replace"]), st.integers(1, 4),
                          st.sampled_from(TEXTS)), max_size=30))
def test_the_counters_always_equal_what_the_gate_holds(ops):
    g = _gate()
    held: dict[int, str] = {}
    for op, seq, text in ops:
        if op == "add" and seq not in held:
            g.add(seq, _unit(seq), float("nan"), text)
            held[seq] = text
        elif op == "read":
            assert g.marks_of(seq) == (ENGLISH.marks(held[seq]) if seq in held else None)
        elif op == "readings":
            got = g.readings_of(seq)
            assert (got is None) == (seq not in held)
            assert got is None or got.cues == ENGLISH.cues(held[seq])
        elif op == "remove" and seq in held:
            g.remove(seq)
            del held[seq]
        elif op == "replace" and seq in held:
            g.replace(seq, _unit(seq + 10), text)
            held[seq] = text
    read = [g.marks_of(seq) for seq in held]
    assert g.unread_bytes == 0
    assert g.read_bytes == sum(_readings_bytes(g.readings_of(seq)) for seq in held)
    assert g.marked_words == sum(len(m.sequence) for m in read)
    assert g.marked_doers == sum(len(m.doers) for m in read)
    for seq in list(held):
        g.remove(seq)
    assert g.read_bytes == 0 and g.unread_bytes == 0


def test_a_doer_turned_against_a_memory_whose_marks_were_never_read_is_not_folded(tmp_path):
    # Only the marks tell these apart (who hires whom): the memory's are read when the second text
    # is weighed against it, from the text the gate held.
    with Memory(tmp_path / "m.db") as m:
        m.add("I was hired by Ben at the bakery last year.", user_id="ana")
        (d,) = m.add("I hired Ben at the bakery last year.", user_id="ana")
        assert d.event == "ADD" and "another doer of 'hire'" in d.reason, d.reason


def test_a_memory_is_read_when_first_asked_about_and_forgotten_with_it():
    g = _gate()
    text = "Room 101 has 2 printers since last week, not 3 anymore."
    g.add(1, _unit(1), float("nan"), text)
    assert g.readings_of(2) is None
    read = g.readings_of(1)
    assert read == Readings(cues=ENGLISH.cues(text), counts=kde.counted_pairs(kde.value_tokens(text)),
                            named=ENGLISH.identifying_values(text), stated=find_stated_values(text))
    assert read.cues and read.counts and read.named and read.stated  # the text says each kind
    assert g.readings_of(1) is read  # read once
    g.replace(1, _unit(2), "The printers are in Room 102.")
    assert g.readings_of(1).named == ENGLISH.identifying_values("The printers are in Room 102.")
    g.remove(1)
    assert g.readings_of(1) is None and g.unread_bytes == 0


def test_reading_the_marks_first_keeps_the_readings_the_text_gives():
    g = _gate()
    text = "I don't drink coffee anymore, 3 cups was too many."
    g.add(1, _unit(1), float("nan"), text)
    g.marks_of(1)  # lets the text go
    assert g.unread_bytes == 0
    assert g.readings_of(1).cues == ENGLISH.cues(text) and g.readings_of(1).stated == find_stated_values(text)


def test_the_size_estimate_counts_the_readings_read():
    g = _gate()
    g.add(1, _unit(1), float("nan"), "Room 101 has 2 printers since last week, not 3 anymore.")
    before = gate_bytes(g)
    g.readings_of(1)
    assert gate_bytes(g) - before == g.read_bytes > _readings_bytes(Readings(*(frozenset(),) * 4))
