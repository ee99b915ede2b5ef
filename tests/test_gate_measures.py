"""A measure of one said with "a" or "an" is a number: "about an hour" is not "two hours".

The keyword index drops "an" and keeps "hour", so "My commute takes about an hour" held no
number where "My commute takes two hours" holds 2, and the gate folded the newer, shorter
commute into the older one: a reader saw only "two hours". ``measures_of_one`` reads such a
measure after a word that makes it one ("for", "about", "once", "than": not "have a nice day")
as ``"1 <unit>"`` among a text's value words, and a NOOP needs the memory to say it, whether
or not the two texts line up word for word. The vectors are chosen (TableEmbedder) so that the
later text reaches the NOOP route: what is tested is the rule that decides the fold.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.text.amounts import measures_of_one
from memsieve.text.english import MEASURE_LEADS, ONE_UNITS, ONE_WORDS
from memsieve.text.lexicon import ENGLISH
from memsieve.text.marks import sequence_words
from tests.test_gate_voice import _second


def _measures(text: str) -> list[str]:
    return sorted(measures_of_one(sequence_words(text), ones=ONE_WORDS, units=ONE_UNITS, leads=MEASURE_LEADS))


@pytest.mark.parametrize("text, said", [
    ("My commute takes about an hour.", ["1 hour"]),
    ("I go to the climbing gym once a week.", ["1 week"]),
    ("We've lived here for more than a year.", ["1 year"]),
    ("I practice for an hour each day and run a mile on Sundays.", ["1 hour"]),
    ("It costs about a dollar a day.", ["1 dollar"]),
    ("Have a nice day!", []),
    ("A week ago I adopted a cat.", []),
    ("I run a mile every morning.", []),
])
def test_a_measure_of_one_is_read_after_a_word_that_makes_it_one(text, said):
    assert _measures(text) == said
    assert set(said) <= ENGLISH.marks(text).words


@settings(max_examples=60, deadline=None)
@given(lead=st.sampled_from(sorted(MEASURE_LEADS)), one=st.sampled_from(sorted(ONE_WORDS)),
       unit=st.sampled_from(sorted(ONE_UNITS)), before=st.sampled_from(["I walked", "it took", "we stayed"]))
def test_every_lead_one_and_unit_read_together_say_one_unit(lead, one, unit, before):
    assert _measures(f"{before} {lead} {one} {unit}.") == [f"1 {unit}"]
    # without its lead the same words are no measure ("it took a day off")
    assert _measures(f"{before} {one} {unit}.") == []


@pytest.mark.parametrize("first, later", [
    # a newer, shorter commute said in words: the memory says two hours
    ("My commute to the office takes two hours by train.", "My commute to the office by train takes about an hour."),
    # not lined up with the memory, which says no measure
    ("Audrey goes on road trips with her dogs once every couple of months to help them explore.",
     "Audrey usually walks her dogs for about an hour, letting them explore at their own pace."),
    ("I practice the piano every evening after dinner.", "I practice piano for an hour after dinner."),
])
def test_a_measure_the_memory_does_not_say_is_not_folded(tmp_path, first, later):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert "'1 hour'" in d.reason, d.reason


@pytest.mark.parametrize("first, later", [
    # the controls: the same texts fold where the memory says the measure, or the text says none
    ("My commute to the office takes about an hour by train.", "My commute to the office by train takes about an hour."),
    ("Audrey goes on road trips with her dogs once every couple of months to help them explore.",
     "Audrey usually walks her dogs, letting them explore at their own pace."),
])
def test_a_measure_the_memory_says_or_none_at_all_folds_as_before(tmp_path, first, later):
    a, d = _second(tmp_path, first, later)
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason
