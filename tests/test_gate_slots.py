"""A rebuilt sentence that puts a word where its memory had another is no NOOP.

A text that moves a clause and changes one word ("Most evenings I knit scarves" after "I knit
hats most evenings") does not line up with its memory word for word, so the information term
nets the new word against the one dropped, as it would a paraphrase's. What tells the two apart
is the slot: a change keeps the words around the word it changes, a paraphrase rebuilds around
others. memsieve.text.aligned.swapped_in_slot finds such words; the gate reads them only where
the text says at most two content words its nearest memory lacks (kde.SLOT_MAX_LACKING).

The sentences are written for this file; the gate's own decisions on rebuilt sentences are
tested with the other words put in place, in tests/test_gate_restated.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.text.aligned import swapped_in_slot
from memsieve.text.lexicon import ENGLISH
from memsieve.text.marks import sequence_words


def _slots(first: str, later: str) -> tuple[str, ...]:
    return swapped_in_slot(sequence_words(later), ENGLISH.marks(later), ENGLISH.marks(first),
                           ENGLISH.filler_words, forms=ENGLISH.verb_form_hashes)


@pytest.mark.parametrize("first, later, word", [
    ("I knit hats most evenings.", "Most evenings I knit scarves.", "scarves"),
    ("On Fridays my partner cooks lasagna.", "My partner cooks curry on Fridays.", "curry"),
    ("I walk the dog before breakfast.", "Before breakfast I feed the dog.", "feed"),
    ("Every summer we rent a cabin by the lake.", "We rent a houseboat by the lake every summer.", "houseboat"),
    ("Our landlord is Mr. Okafor.", "Mr. Brennan is our landlord.", "brennan"),
    ("I'm teaching a yoga class at the gym.", "I taught a yoga class at the gym.", "taught"),
])
def test_a_word_in_a_dropped_words_slot_is_found(first, later, word):
    assert word in _slots(first, later)


@pytest.mark.parametrize("first, later", [
    # rebuilt around other words: a paraphrase
    ("I'm afraid of heights.", "Heights scare me."),
    ("I really enjoy hiking in the mountains.", "Hiking in the mountains is something I love."),
    # one verb in two voices: the voice rules read it ("gave" / "was given")
    ("My aunt gave me a bike for my birthday.", "I was given a bike by my aunt for my birthday."),
    # more or fewer words for one thing, and a hedge
    ("The choir meets on Thursday evenings.", "On Thursday evenings the choir gets together."),
    ("The drive takes about three hours.", "The drive is roughly three hours."),
    # nothing dropped, or nothing new
    ("I bought a kettle yesterday.", "Yesterday I bought a kettle."),
    ("My sister lives in Lisbon.", "My sister lives in Lisbon with her wife."),
])
def test_a_rebuilt_sentence_with_no_word_in_a_slot_has_none(first, later):
    assert _slots(first, later) == ()


_WORDS = st.sampled_from(["tea", "coffee", "my", "the", "walk", "dog", "every", "morning", "I", "drink",
                          "on", "Sundays", "bake", "bread", "we", "a", "park", "visit"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=12), st.lists(_WORDS, min_size=1, max_size=12))
def test_slot_words_are_new_content_words_of_the_text(first, later):
    a, b = " ".join(first), " ".join(later)
    got = _slots(a, b)
    said = set(sequence_words(b))
    held = set(ENGLISH.marks(a).sequence)
    for w in got:
        assert w in said
        # never a word the memory says, never a stopword
        marks = ENGLISH.marks(w)
        assert marks.terms == b"\x01" and marks.sequence[0] not in held
    assert _slots(a, a) == ()
