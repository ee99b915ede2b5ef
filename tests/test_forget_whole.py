"""What one request to forget takes: the memory that says all it asks and not those that share a word
of it; a fact's versions with it, unless the request names a value of one.

"forget my Tuesday yoga class" beside "My pottery class is on Tuesdays" names the yoga class only;
"forget my sister's phone number" takes her new number too, which the write path linked to it as
an update, while "forget that I moved to Berlin" spares the move to Hamburg that it updated.
"""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory


def _named(mem: Memory, request: str) -> list[str]:
    return sorted(it.text for it in mem.forget(request, user_id="u", dry_run=True))


@pytest.fixture()
def classes(tmp_path, embedder):
    m = Memory(tmp_path / "c.db", embedder=embedder, gate=GateConfig(profile="none"))
    for text in ["My yoga class is on Tuesdays.", "My pottery class is on Tuesdays.",
                 "My yoga class on Saturdays is outdoors.", "Dana flies to Chile in July.",
                 "Dana is afraid of flying."]:
        m.add(text, user_id="u")
    yield m
    m.close()


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
