"""A request to forget that names a fact by its noun ("Leo's job") names the memory that states it in
plain words ("Leo works as a chef"), and no memory that only shares a word ("I work out")."""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError
from memsieve.text.lexicon import ENGLISH, Lexicon


def _named(mem: Memory, request: str) -> list[str]:
    return sorted(it.text for it in mem.forget(request, user_id="u", dry_run=True))


@pytest.fixture()
def mem(tmp_path, embedder):
    m = Memory(tmp_path / "f.db", embedder=embedder, gate=GateConfig(profile="none"))
    for text in ["My best friend Leo works as a chef.", "I work out every morning before breakfast.",
                 "Leo's bike is green.", "I live at 22 Birch Road.", "My sister lives in Porto.",
                 "I was born on 4 April 1988.", "My uncle is allergic to cats."]:
        m.add(text, user_id="u")
    yield m
    m.close()


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
