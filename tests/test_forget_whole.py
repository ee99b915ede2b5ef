"""What one request to forget names: a fact named by its noun, the memory that says all it asks and
not those that share a word of it, and a fact's versions unless the request names a value of one.

"forget Leo's job" names "Leo works as a chef" and not "I work out"; "forget my Tuesday yoga class"
beside "My pottery class is on Tuesdays" names the yoga class only; "forget my sister's phone
number" takes her new number too, which the write path linked to it as an update, while "forget
that I moved to Berlin" spares the move to Hamburg that it updated.
"""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError
from memsieve.text.lexicon import ENGLISH, Lexicon


def _named(mem: Memory, request: str) -> list[str]:
    return sorted(it.text for it in mem.forget(request, user_id="u", dry_run=True))


@pytest.fixture()
def scope_of(tmp_path, embedder):
    """A Memory holding the given texts in user u's scope, with the gate off."""
    made = []

    def make(texts: list[str]) -> Memory:
        m = Memory(tmp_path / f"{len(made)}.db", embedder=embedder, gate=GateConfig(profile="none"))
        made.append(m)
        for text in texts:
            m.add(text, user_id="u")
        return m

    yield make
    for m in made:
        m.close()


@pytest.fixture()
def mem(scope_of):
    return scope_of(["My best friend Leo works as a chef.", "I work out every morning before breakfast.",
                     "Leo's bike is green.", "I live at 22 Birch Road.", "My sister lives in Porto.",
                     "I was born on 4 April 1988.", "My uncle is allergic to cats."])


@pytest.fixture()
def classes(scope_of):
    return scope_of(["My yoga class is on Tuesdays.", "My pottery class is on Tuesdays.",
                     "My yoga class on Saturdays is outdoors.", "Dana flies to Chile in July.",
                     "Dana is afraid of flying."])


def test_a_fact_named_by_its_noun_names_the_memory_that_states_it(mem):
    assert _named(mem, "please forget Leo's job") == ["My best friend Leo works as a chef."]
    assert _named(mem, "forget my address") == ["I live at 22 Birch Road."]
    assert _named(mem, "forget my sister's address") == ["My sister lives in Porto."]
    assert _named(mem, "you can delete my birthday") == ["I was born on 4 April 1988."]
    assert _named(mem, "forget my uncle's allergy") == ["My uncle is allergic to cats."]


def test_a_word_alone_states_no_fact(mem):
    # "I work out" is no job; the user's job is stated nowhere, Leo's is not the user's.
    assert _named(mem, "forget my job") == []
    # A fact no memory states of that person names nothing.
    assert _named(mem, "forget my sister's birthday") == []


def test_the_lexicon_reads_only_the_plain_ways_of_stating_a_fact():
    assert ENGLISH.stated_facts("Tomasz works for a shipping company") == {"job"}
    assert ENGLISH.stated_facts("Tomasz worked out a budget") == frozenset()
    assert ENGLISH.stated_facts("We lived in Brussels before") == frozenset()
    assert ENGLISH.stated_facts("I earn about $90k a year") == ENGLISH.stated_facts("she earns 4,000 euros a month")
    assert ENGLISH.stated_facts("I earn about $90k a year") == {"salari"}
    # A birthplace is no birthday, points are no salary.
    assert ENGLISH.stated_facts("I was born in Peru") == frozenset()
    assert ENGLISH.stated_facts("I was born in May 1990") == {"birthday"}
    assert ENGLISH.stated_facts("I earn 5 points per purchase") == frozenset()


@pytest.mark.parametrize(("value", "says"), [
    ("job", "pairs"), ((("job",),), "pair"), ((("", r"\bworks\b"),), "pair"),
    ((("the", r"\bworks\b"),), "no index term"), ((("job", r"(works"),), "not a valid regular expression"),
])
def test_a_bad_fact_statement_is_refused_naming_it(value, says):
    with pytest.raises(ConfigError, match=says):
        Lexicon(name="mine", fact_statements=value)


def test_a_memory_that_says_it_all_spares_those_that_share_a_word(classes):
    assert _named(classes, "forget my Tuesday yoga class") == ["My yoga class is on Tuesdays."]
    assert _named(classes, "forget that Dana is afraid of flying") == ["Dana is afraid of flying."]


def test_a_request_for_everything_about_it_takes_every_part(classes):
    assert _named(classes, "forget everything about my Tuesday yoga class") == [
        "My pottery class is on Tuesdays.", "My yoga class is on Tuesdays.", "My yoga class on Saturdays is outdoors."]


@pytest.fixture()
def linked(tmp_path, embedder):
    m = Memory(tmp_path / "v.db", embedder=embedder)  # the default gate links an update to what it updates
    kinds = {}
    for text in ["My sister's phone number is 555-1234.", "I walk to work every day.",
                 "My sister has a new number now: 555-9876.", "My sister's address is 4 Elm Road.",
                 "My sister loves tennis.", "I moved to Hamburg in 2018.", "I moved to Berlin in March 2021."]:
        (d,) = m.add(text, user_id="u")
        kinds[text] = d.link_kind
    assert kinds["My sister has a new number now: 555-9876."] == "updates"
    assert kinds["I moved to Berlin in March 2021."] == "updates"
    # The gate links a text to the memory it is close to: her address to her phone number.
    assert kinds["My sister's address is 4 Elm Road."] == "updates"
    yield m
    m.close()


def test_a_fact_goes_with_its_linked_versions(linked):
    assert _named(linked, "forget my sister's phone number") == [
        "My sister has a new number now: 555-9876.", "My sister's phone number is 555-1234."]
    assert _named(linked, "forget where I moved") == ["I moved to Berlin in March 2021.", "I moved to Hamburg in 2018."]


def test_a_link_to_another_fact_of_the_person_is_no_version(linked):
    assert _named(linked, "forget my sister's address") == ["My sister's address is 4 Elm Road."]


def test_a_request_that_names_a_value_spares_the_versions_of_other_values(linked):
    assert _named(linked, "forget that I moved to Berlin") == ["I moved to Berlin in March 2021."]
    # A request for the old value takes the older version only.
    assert _named(linked, "forget my sister's old phone number") == ["My sister's phone number is 555-1234."]
