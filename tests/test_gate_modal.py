"""A plan, a wish, a try or a near miss is not the thing done (``Lexicon.modal_words``).

"I quit my job at the bank" says every content word of "I'm planning to quit my job at the bank",
so the information term found nothing new in it and the gate folded the deed into the plan: the
reader saw only the plan. A text that says a modal word or phrase ("planning", "almost", "going
to", "I'd like to") and one that says none now differ, either way round and whether or not the two
line up word for word. The vectors are chosen (TableEmbedder) so that every candidate reaches the
NOOP route: what is tested is the rule that decides the fold.
"""

from __future__ import annotations

import pytest

from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.text.unmarked import read_unaligned
from tests.test_gate_voice import _second


@pytest.mark.parametrize("first, later, unsaid", [
    ("I'm planning to repaint the garden shed.", "I repainted the garden shed.", "without 'planning'"),
    ("I hope to visit my grandmother in Krakow.", "I visit my grandmother in Krakow.", "without 'hope'"),
    ("We were going to paint the fence blue.", "We painted the fence blue.", "without 'going to'"),
    ("I nearly lost my wallet on the tram.", "I lost my wallet on the tram.", "without 'nearly'"),
    ("I tried to bake sourdough at home.", "I baked sourdough at home.", "without 'tried'"),
    ("I should renew my passport.", "I renewed my passport.", "without 'should'"),
    # a thing scheduled or booked is planned, not done
    ("I'm scheduled for a hip replacement in March.", "I had a hip replacement in March.",
     "without 'scheduled for'"),
    ("My cousin is scheduled to defend her thesis.", "My cousin defended her thesis.", "without 'scheduled to'"),
    ("I'm booked for a tattoo on my forearm.", "I got a tattoo on my forearm.", "without 'booked for'"),
    # and the other way round: the later text takes the deed back to a plan
    ("I repainted the garden shed.", "I'm planning to repaint the garden shed.", "planning"),
    ("I lost my wallet on the tram.", "I almost lost my wallet on the tram.", "almost"),
])
def test_a_plan_and_a_deed_are_not_folded_together(tmp_path, first, later, unsaid):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert unsaid in d.reason, d.reason
    assert d.linked_to == a.memory_id


@pytest.mark.parametrize("first, later", [
    ("I'm planning to repaint the garden shed.", "I plan to repaint the garden shed."),
    ("I want to adopt a greyhound.", "I'd like to adopt a greyhound."),
    ("I plan to retile the bathroom in spring.", "In spring I plan to retile the bathroom."),
])
def test_two_plans_or_two_deeds_still_fold(tmp_path, first, later):
    a, d = _second(tmp_path, first, later)
    assert d.event == "NOOP", d.reason
    assert d.memory_id == a.memory_id


def test_scheduling_something_is_a_deed_being_scheduled_for_it_a_plan():
    assert ENGLISH.marks("I scheduled a call with the landlord for Monday.").modal == frozenset()
    assert ENGLISH.marks("The call is scheduled for Monday.").modal == {"scheduled for"}


def test_modal_phrases_are_read_through_contractions_and_going_alone_is_no_plan():
    assert ENGLISH.marks("I'd like to learn the cello.").modal == {"would like"}
    assert ENGLISH.marks("I'm gonna learn the cello.").modal == {"gonna"}
    assert ENGLISH.marks("How is it going? I like the cello.").modal == frozenset()
    assert ENGLISH.marks("I learn the cello.").modal == frozenset()
    plan, deed = ENGLISH.marks("I was going to buy a bike."), ENGLISH.marks("I bought a bike.")
    assert read_unaligned(deed, plan) == ["without 'going to'"]
    assert read_unaligned(plan, deed) == ["going to"]


def test_a_lexicon_without_modal_words_reads_none():
    assert Lexicon(name="plain").marks("I'm planning to quit.").modal == frozenset()
