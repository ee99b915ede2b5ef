"""A thing done against a state now, in texts that do not line up word for word.

"I had our second baby" says every content word but one of "I'm pregnant with our second", and the
information term netted "baby" against "pregnant": the gate folded the birth into the pregnancy. A
text that does not line up with its nearest memory, and says at most ``TENSE_MAX_LACKING`` content
words the memory lacks, is now read for the past against the present (``past_against_present``):
where each says a tense and one says the past alone, the fold would lose it. The vectors are
chosen (TableEmbedder) so that every candidate reaches the NOOP route: what is tested is the rule.
"""

from __future__ import annotations

import pytest

from memsieve.text.lexicon import ENGLISH
from memsieve.text.unmarked import other_tense, past_against_present
from tests.test_gate_voice import _second


@pytest.mark.parametrize("first, later", [
    ("I'm training for the Boston marathon.", "I ran the Boston marathon."),
    ("My daughter is learning to swim.", "My daughter learned to swim."),
    ("We're saving for a new roof.", "We paid for the new roof."),
    # and the other way round: a deed taken back to a state now
    ("I ran the Boston marathon.", "I'm training for the Boston marathon."),
])
def test_a_deed_and_a_state_now_are_not_folded_together(tmp_path, first, later):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert "tense" in d.reason, d.reason


@pytest.mark.parametrize("first, later", [
    # no tense on one side: a verb in the present simple bears no mark
    ("I work as a nurse at the city hospital.", "I'm a nurse at the city hospital."),
    # two tenses on one side say no change of one
    ("I keep my passport in the top drawer of the desk.", "My passport is kept in the desk's top drawer."),
    # "have got" is "have"
    ("I have three siblings.", "I've got 3 siblings."),
])
def test_a_restatement_in_another_form_still_folds(tmp_path, first, later):
    a, d = _second(tmp_path, first, later)
    assert d.event == "NOOP", d.reason
    assert d.memory_id == a.memory_id


def test_past_against_present_needs_a_tense_on_both_sides_and_the_past_alone_on_one():
    marks = ENGLISH.marks
    deed, state, plain = marks("I had our second baby."), marks("I'm pregnant with our second."), marks("I can sing.")
    assert past_against_present(deed, state) == ["the past tense"]
    assert past_against_present(state, deed) == ["the present tense"]
    assert past_against_present(deed, plain) == [] and past_against_present(plain, deed) == []
    both = marks("My passport is kept in the drawer.")
    assert both.tense == {"past", "present"} and past_against_present(both, state) == []
    # the rule for texts that line up is looser: the past against no tense at all counts there
    assert other_tense(deed, plain) == ["the past tense"]


def test_have_got_reads_as_have():
    assert ENGLISH.marks("I've got two cats.").tense == frozenset()
    assert ENGLISH.marks("She has got a new car.").tense == frozenset()
    assert ENGLISH.marks("I got a new car.").tense == {"past"}
