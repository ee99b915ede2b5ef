"""Values the index cannot tell apart: one said of another noun, an amount with a fraction, a letter.

Three kinds of change hold every content word of the memory they would be folded into:

- a value said with words the memory says of another value ("My brother lives in Austin"
  against "My brother lives in Denver and my sister lives in Austin"; memsieve.text.clauses);
- an amount said with a fraction word ("a pound and a half" against "half a pound";
  memsieve.text.amounts);
- a grade or letter the index drops or folds ("an A" against "a B"; ``written_values``).

The sentences are written for this file.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import fold_pair
from memsieve.errors import ConfigError
from memsieve.text.amounts import amounts
from memsieve.text.clauses import said_of_another
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.text.marks import clause_ids, sequence_words, unread_values, written_values


def _moved(first: str, later: str) -> tuple[str, ...]:
    return said_of_another(sequence_words(later), ENGLISH.marks(later), ENGLISH.marks(first), ENGLISH.filler_words)


def _amounts(text: str) -> list[str]:
    return sorted(amounts(sequence_words(text), fractions=dict(ENGLISH.fraction_words), ones=ENGLISH.one_words,
                          times=ENGLISH.clock_words))


# ---- a value said of another noun ---------------------------------------------------------------

@pytest.mark.parametrize("first, later, value", [
    ("My daughter is 7 and my son is 4.", "My son is 7.", "7"),
    ("I swim on Tuesdays and run on Saturdays.", "I run on Tuesdays.", "tuesdays"),
    ("My manager is Priya and my mentor is Tomasz.", "My mentor is Priya.", "priya"),
    ("The rent is 1200 and the deposit is 2400.", "The deposit is 1200.", "1200"),
    ("We flew to Lisbon in May. We drove to Porto in June.", "We drove to Porto in May.", "may"),
])
def test_a_value_said_of_another_noun_is_found(first, later, value):
    got = _moved(first, later)
    assert got and got[0].startswith(repr(value))


@pytest.mark.parametrize("first, later", [
    # a part of the memory, said with its own words
    ("My daughter is 7 and my son is 4.", "My son is 4."),
    ("I swim on Tuesdays and run on Saturdays.", "I swim on Tuesdays."),
    # names joined by "and" before one verb are one clause
    ("Maya and Leo moved to Oslo.", "Leo moved to Oslo."),
    # a word the memory says in a clause with no value is the value of nothing there
    ("I adopted Biscuit in 2021, and I adore him.", "I adore Biscuit."),
    # a memory with one value
    ("My son is 4 and loves trains.", "My son loves trains."),
])
def test_a_part_of_the_memory_moves_no_value(first, later):
    assert _moved(first, later) == ()


def test_clause_ids_end_at_sentences_and_joints_not_at_a_decimal_point():
    ids = clause_ids("It costs 3.50 and takes 8:30 hours; fine. Done", ENGLISH.clause_joints)
    words = sequence_words("It costs 3.50 and takes 8:30 hours; fine. Done")
    assert len(ids) == len(words)
    assert dict(zip(words, ids)) == {"it": 0, "costs": 0, "3": 0, "50": 0, "and": 1, "takes": 1, "8": 1,
                                     "30": 1, "hours": 1, "fine": 2, "done": 3}


_PEOPLE = st.sampled_from(["brother", "sister", "boss", "aunt", "neighbour"])
_CITIES = st.sampled_from(["Denver", "Austin", "Leeds", "Osaka", "Quito"])


@settings(max_examples=150, deadline=None)
@given(_PEOPLE, _PEOPLE, _CITIES, _CITIES, st.booleans())
def test_a_value_moves_only_when_the_text_pairs_it_with_the_other_clauses_noun(p1, p2, c1, c2, swap):
    """Whatever the words: a text that says one clause of the memory moves nothing, and one that
    says the first person with the second city moves it exactly when the two clauses differ."""
    memory = f"My {p1} lives in {c1} and my {p2} lives in {c2}."
    assert _moved(memory, f"My {p1} lives in {c1}.") == ()
    assert _moved(memory, f"My {p2} lives in {c2}.") == ()
    assert _moved(memory, memory) == ()
    text = f"My {p1} lives in {c2}." if swap else f"My {p2} lives in {c1}."
    assert bool(_moved(memory, text)) == (p1 != p2 and c1 != c2)


# ---- amounts with a fraction --------------------------------------------------------------------

@pytest.mark.parametrize("text, said", [
    ("Bake it for an hour and a half.", ["1.5"]),
    ("Bake it for half an hour.", ["0.5"]),
    ("It took three and a half weeks.", ["3.5"]),
    ("Add a quarter cup of sugar.", ["0.25"]),
    ("About three quarters of the class came.", ["0.75"]),
    ("We meet at half past seven.", []),
    ("The bus leaves at a quarter to nine.", []),
])
def test_amounts_read_the_value_a_fraction_phrase_says(text, said):
    assert _amounts(text) == said


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=99), st.sampled_from(["hours", "miles", "cups", "years"]))
def test_n_and_a_half_is_n_plus_one_half(n, unit):
    assert _amounts(f"it was {n} and a half {unit}") == [f"{n + 0.5:g}"]
    assert _amounts(f"it was {n} {unit}") == []


# ---- letters ------------------------------------------------------------------------------------

def test_letters_alone_inside_a_sentence_are_written_values():
    assert written_values("A friend said I got an A and he got a C.") == frozenset({"A", "C"})
    assert written_values("I think so.") == frozenset()
    assert unread_values(frozenset({"A"}), frozenset({"B"})) == ["A"]
    assert unread_values(frozenset({"A"}), frozenset({"A"})) == []


# ---- the gate -----------------------------------------------------------------------------------

@pytest.mark.parametrize("first, later", [
    # each of these was folded before the three rules
    ("My manager is Priya and my mentor is Tomasz.", "My mentor is Priya."),
    ("The rent is 1200 and the deposit is 2400.", "The deposit is 1200."),
    ("We flew to Lisbon in May. We drove to Porto in June.", "We drove to Porto in May."),
    ("I swim on Tuesdays and run on Saturdays.", "I run on Tuesdays."),
    ("Bake it for half an hour.", "Bake it for an hour and a half."),
    ("The hike took two and a half hours.", "The hike took a half hour."),
    ("The soup needs half a cup of cream.", "The soup needs a cup and a half of cream."),
    ("Our backup is plan B.", "Our backup is plan A."),
    ("I got a C in statistics.", "I got an A in statistics."),
])
def test_the_gate_does_not_fold_these_changes(tmp_path, table_embedder, first, later):
    _, d, text = fold_pair(tmp_path, table_embedder, first, later)
    assert d.event != "NOOP", d.reason
    assert text == later


@pytest.mark.parametrize("first, later", [
    ("My daughter is 7 and my son is 4.", "My son is 4."),
    ("The soup needs half a cup of cream.", "The soup needs half a cup of cream!"),
    ("I got an A in statistics, and a B in French.", "I got an A in statistics."),
])
def test_the_gate_still_folds_these_repeats(tmp_path, table_embedder, first, later):
    _, d, text = fold_pair(tmp_path, table_embedder, first, later)
    assert d.event == "NOOP", d.reason
    assert text == first


@pytest.mark.parametrize("pairs", [(("half", 1.5),), (("two words", 0.5),), ("half",), (("half", True),)])
def test_a_bad_fraction_word_is_refused(pairs):
    with pytest.raises(ConfigError, match="fraction_words"):
        Lexicon(name="x", fraction_words=pairs)
