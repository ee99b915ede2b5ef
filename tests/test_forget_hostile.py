"""A request to forget removes what it asks and nothing of anyone else's (review findings): a clause that asks
*not* to forget is left out, a fact the scope does not hold names nothing, and a fact opening with another
person's name ("Nadia's ...") is not the user's."""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.text.lexicon import ENGLISH
from memsieve.write.forgetting import parse_request

FACTS = [
    "My birthday is on November 5.",
    "Nadia's birthday is on June 30.",
    "I ride a green scooter.",
    "Nadia rides a red motorbike.",
    "My phone number is 555-0164.",
    "My brother's email is leo@mail.example.",
    "My brother lives in Coimbra.",
]


@pytest.fixture()
def mem(tmp_path, embedder):
    m = Memory(tmp_path / "f.db", embedder=embedder, gate=GateConfig(profile="none"))
    yield m
    m.close()


def _forget(mem, request, *, purge=False):
    """(what a dry run names, what the request removed, what is left active) in a fresh scope of FACTS."""
    scope = f"s{abs(hash((request, purge))) % 10**8}"
    mem.add(FACTS, user_id=scope)
    dry = sorted(m.text for m in mem.forget(request, user_id=scope, dry_run=True))
    gone = mem.forget(request, user_id=scope, purge=purge)
    left = sorted(m.text for m in mem.get_all(user_id=scope))
    return dry, gone, left


@pytest.mark.parametrize("request_text", ["do not forget my birthday", "never delete my phone number",
                                          "Don't forget where my brother lives."])
def test_a_request_not_to_forget_removes_nothing(mem, request_text):
    dry, gone, left = _forget(mem, request_text)
    assert dry == [] and gone == [] and left == sorted(FACTS)


def test_the_asking_clause_takes_what_the_declined_one_leaves_unsaid(mem):
    dry, gone, _ = _forget(mem, "don't forget my birthday, forget Nadia's")
    assert [m.text for m in gone] == dry == ["Nadia's birthday is on June 30."]
    dry, gone, _ = _forget(mem, "don't forget Nadia's birthday, but forget mine")
    assert [m.text for m in gone] == dry == ["My birthday is on November 5."]


@pytest.mark.parametrize("request_text", ["forget my passport number", "forget my brother's phone number",
                                          "forget Nadia's email", "forget my brother's birthday"])
def test_a_fact_the_scope_does_not_hold_names_nothing(mem, request_text):
    dry, gone, left = _forget(mem, request_text)
    assert dry == [] and gone == [] and left == sorted(FACTS)


def test_a_purge_of_an_absent_fact_erases_nothing(mem):
    _, gone, left = _forget(mem, "forget my brother's phone number", purge=True)
    assert gone == [] and left == sorted(FACTS)


@pytest.mark.parametrize(("request_text", "mine"), [
    ("forget my birthday", "My birthday is on November 5."),
    ("forget what I ride", "I ride a green scooter."),
])
def test_a_request_about_the_user_spares_another_persons_same_fact(mem, request_text, mine):
    dry, gone, left = _forget(mem, request_text)
    assert [m.text for m in gone] == dry == [mine]
    assert "Nadia's birthday is on June 30." in left and "Nadia rides a red motorbike." in left


def test_a_name_typed_in_lower_case_is_still_a_person(mem):
    dry, gone, left = _forget(mem, "forget nadia's birthday")
    assert [m.text for m in gone] == dry == ["Nadia's birthday is on June 30."]
    assert "My birthday is on November 5." in left


def test_what_is_asked_of_a_person_and_said_of_them_is_still_found(mem):
    dry, gone, _ = _forget(mem, "please forget my brother's email")
    assert [m.text for m in gone] == dry == ["My brother's email is leo@mail.example."]
    dry, gone, _ = _forget(mem, "forget everything about my brother")
    assert sorted(m.text for m in gone) == dry == ["My brother lives in Coimbra.", "My brother's email is leo@mail.example."]


def test_the_request_clauses_and_the_padding():
    asking, keeping = ENGLISH.request_clauses("Forget my car, but never forget my bike")
    assert asking == ["Forget my car"] and keeping == ["never forget my bike"]
    assert ENGLISH.request_clauses("forget my phone number and my email") == (
        ["forget my phone number and my email"], [])
    assert parse_request("never forget my birthday").declined
    # what pads a request is not what it asks
    assert parse_request("Oh gosh, thanks, really forget what I said about Ingmar.").terms == ("ingmar",)
    assert parse_request("forget how much I weigh").terms == ("weigh",)
