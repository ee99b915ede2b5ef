"""Who does what a verb says, in the active and the passive (memsieve.text.voice).

"I was hired by Ben" and "I hired Ben" hold the same content words in the same
order, so neither the keyword index nor the word alignment of
``changed_in_place`` tells them apart: the gate folded one into the other. "Ben
hired me" restates the first, though its pronoun changes form and its names
trade places. The vectors are chosen (TableEmbedder) so that every candidate
reaches the NOOP route: what is tested is the rule that decides the fold.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import Memory
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.text.aligned import changed_in_place
from memsieve.text.unmarked import unmarked
from tests.conftest import TableEmbedder, unit
from tests.conftest import GATE_FILLER


def _fold_reasons(first: str, later: str) -> tuple[str, ...]:
    """What folding ``later`` into ``first`` would leave unsaid, as the gate reads it."""
    mine, theirs = ENGLISH.marks(later), ENGLISH.marks(first)
    changed = changed_in_place(later, mine, theirs, share=0.65) or ()
    return tuple(changed) + unmarked(mine, theirs, aligned=bool(changed))


def _second(tmp_path, first: str, later: str, *, lexicon: Lexicon | None = None):
    """The decisions on ``first`` and then ``later``, with vectors that send ``later`` to the
    NOOP route against ``first`` (the lexicon's, English by default, rules decide the fold)."""
    table = TableEmbedder()
    table.table.update({first: unit(1, 0, 0), later: unit(1, 0.02, 0)})
    options = {} if lexicon is None else {"lexicon": lexicon}
    with Memory(tmp_path / "m.db", embedder=table, **options) as m:
        m.add_many(GATE_FILLER, user_id="u")
        (a,) = m.add(first, user_id="u")
        (d,) = m.add(later, user_id="u")
        return a, d


@pytest.mark.parametrize("first, later, verb", [
    ("I hired Ben as my accountant.", "I was hired by Ben as his accountant.", "hire"),
    ("Maria interviewed Tom for the nanny job on Friday.",
     "Maria was interviewed by Tom for the nanny job on Friday.", "interview"),
    ("I picked up Ana from the airport.", "I got picked up by Ana from the airport.", "pick"),
    ("I gave my dad a car for his birthday.", "I was given a car by my dad for my birthday.", "gave"),
    ("She taught him to drive.", "She was taught to drive by him.", "taught"),
])
def test_a_passive_that_swaps_who_does_it_is_not_folded(tmp_path, first, later, verb):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert f"another doer of {verb!r}" in d.reason, d.reason
    assert d.linked_to == a.memory_id


@pytest.mark.parametrize("first, later", [
    ("Ben hired me as his accountant.", "I was hired by Ben as his accountant."),
    ("Tom interviewed Maria for the nanny job on Friday.", "Maria was interviewed by Tom for the nanny job on Friday."),
    ("Ana picked me up from the airport.", "I got picked up by Ana from the airport."),
    ("My dad gave me a car for my birthday.", "I was given a car by my dad for my birthday."),
    ("My older sister bought the painting.", "The painting was bought by my older sister."),
    # the subject's phrase holds a preposition; names trade places by grammar, not by swapping roles
    ("The chef at Nori cooked our dinner.", "Our dinner was cooked by the chef at Nori."),
    ("Yesterday at the bakery Tom interviewed Maria.", "Yesterday at the bakery Maria was interviewed by Tom."),
])
def test_a_passive_that_keeps_who_does_it_still_folds(tmp_path, first, later):
    a, d = _second(tmp_path, first, later)
    assert d.event == "NOOP", d.reason
    assert d.memory_id == a.memory_id


def test_the_doer_is_read_past_auxiliaries_adverbs_and_contractions():
    # "has", "recently" and "'ve been" stand between the doer and the verb; "I" and "me" name one person
    assert _fold_reasons("Ben has recently hired me.", "I've been hired by Ben.") == ()
    assert "another doer of 'hire'" in _fold_reasons("I have recently hired Ben.", "I've been hired by Ben.")
    # a passive with no agent names no doer: the tense and the rest decide as before
    assert not any("doer" in r for r in _fold_reasons("I hired Ben.", "I was hired last year."))


def test_without_agent_words_a_lexicon_reads_no_doers():
    plain = Lexicon(name="plain", pronoun_forms=ENGLISH.pronoun_forms)
    assert plain.marks("I was hired by Ben.").doers == ()
    assert ENGLISH.marks("I was hired by Ben.").doers  # the English lexicon does


NAMES = ["Ana", "Ben", "Chidi", "Dana", "Emil", "Farah", "Goran", "Hana"]
VERBS = [("hired", "hire"), ("interviewed", "interview"), ("invited", "invit"), ("thanked", "thank"),
         ("paid", "paid"), ("taught", "taught"), ("called", "call"), ("helped", "help")]
TAILS = ["", " last week", " on Monday", " at the library", " twice"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(VERBS), st.sampled_from(TAILS),
       st.sampled_from(["was", "got", "had been"]))
def test_passive_against_active_flags_exactly_the_swapped_doer(x, y, verb, tail, aux):
    """For names X != Y: "X was V by Y" differs from "X V Y" in who does it, and restates "Y V X"."""
    if x == y:
        return
    word, term = verb
    passive = f"{x} {aux} {word} by {y}{tail}."
    swapped, same = f"{x} {word} {y}{tail}.", f"{y} {word} {x}{tail}."
    flagged = f"another doer of {term!r}"
    assert flagged in unmarked(ENGLISH.marks(passive), ENGLISH.marks(swapped)), (passive, swapped)
    assert flagged in unmarked(ENGLISH.marks(swapped), ENGLISH.marks(passive)), (swapped, passive)
    assert not any("doer" in r for r in _fold_reasons(same, passive)), (same, passive)
    assert not any("doer" in r for r in _fold_reasons(passive, same)), (passive, same)
