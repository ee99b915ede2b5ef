"""A request to forget erases only whom and what it names (review findings, second round).

Four ways a request named more than it asked, each a class tested across several cases:

- a person's name matched a word of the same stem or spelling ("forget Mark" took "I'm marking exams" and
  "a good mark"; "forget Jack" a car "jack");
- a relation matched a compound that is another person ("my mother" took "my mother-in-law", "my wife"
  "my ex-wife");
- what a name owns was read as the name ("forget Tom's dog" took "Tom lives in Leeds" and "Tom's
  brother's dog");
- a request that asks *not* to forget, in words other than "don't forget X" ("I don't want you to forget",
  "remember my birthday, don't forget it", "no wait, keep it"), was taken as asking.

With ``purge=True`` each of these was an irreversible erasure of something the user never named.
"""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.write.forgetting import parse_request


@pytest.fixture()
def mem(tmp_path, embedder):
    m = Memory(tmp_path / "p.db", embedder=embedder, gate=GateConfig(profile="none"))
    yield m
    m.close()


def _named(mem, facts, request):
    """What a dry run of ``request`` names, over ``facts`` in a scope of their own."""
    scope = f"s{abs(hash((tuple(facts), request))) % 10**9}"
    decisions = mem.add(facts, user_id=scope)
    assert all(d.event == "ADD" for d in decisions), [d.reason for d in decisions]
    return sorted(m.text for m in mem.forget(request, user_id=scope, dry_run=True))


# A name that is also a common word: the name goes, the word stays.
NAMES = [
    ("Mark", ["Mark lives in Leeds.", "I'm marking exams this week.", "I got a good mark in chemistry."]),
    ("Jack", ["Jack works at the bank.", "I keep a car jack in the trunk."]),
    ("Bill", ["Bill coaches the rowing team.", "I paid the electricity bill on Monday."]),
    ("Rose", ["Rose is allergic to peanuts.", "I planted a red rose by the fence."]),
    ("Frank", ["Frank drives a blue van.", "I was frank with my landlord about the leak."]),
]


@pytest.mark.parametrize("name,facts", NAMES, ids=[n for n, _ in NAMES])
def test_a_name_is_not_a_word_of_its_spelling(mem, name, facts):
    assert _named(mem, facts, f"forget everything about {name}") == [facts[0]]
    assert _named(mem, facts, f"forget {name}") == [facts[0]]


def test_a_name_in_a_text_that_capitalizes_nothing_is_still_found(mem):
    facts = ["mark lives in leeds.", "I drive a grey Volvo."]
    assert _named(mem, facts, "forget everything about Mark") == [facts[0]]


# A compound relation is another person: "mother" is not "mother-in-law", "wife" not "ex-wife".
COMPOUNDS = [
    ("mother", "mother-in-law", "name", "My {}'s name is Maria."),
    ("wife", "ex-wife", "workplace", "My {} works at the city hospital."),
    ("husband", "ex-husband", "car", "My {} drives an old Saab."),
    ("sister", "sister-in-law", "home", "My {} lives in Porto."),
    ("boss", "ex-boss", "hobby", "My {} plays the cello on weekends."),
]


@pytest.mark.parametrize("plain,compound,_,template", COMPOUNDS, ids=[c for _, c, _, _ in COMPOUNDS])
def test_a_compound_relation_is_another_person(mem, plain, compound, _, template):
    facts = [template.format(plain), template.format(compound)]
    assert _named(mem, facts, f"forget everything about my {plain}") == [facts[0]]
    assert _named(mem, facts, f"forget everything about my {compound}") == [facts[1]]


def test_a_compound_relation_is_one_person_of_the_request():
    query = parse_request("forget where my ex-wife works")
    assert query.about.who == "person" and query.about.terms == {"ex-wife"}
    assert "wife" not in query.what_terms and "ex" not in query.what_terms


# What a name owns is not the name: "Tom's dog" is neither Tom nor Tom's brother's dog.
@pytest.mark.parametrize("name,pet", [("Tom", "dog"), ("Priya", "cat"), ("Lukas", "horse")])
def test_what_a_name_owns_is_asked_apart_from_the_name(mem, name, pet):
    facts = [f"{name}'s {pet} is twelve years old.", f"{name} lives in Leeds.",
             f"{name}'s brother's {pet} is a rescue."]
    assert _named(mem, facts, f"forget {name}'s {pet}") == [facts[0]]
    assert _named(mem, facts, f"forget everything about {name}'s brother's {pet}") == [facts[2]]
    assert _named(mem, facts, f"forget everything about {name}") == sorted(facts)


# A request that asks to keep, in any of the ways people say it, names nothing.
KEEPS = [
    "I don't want you to forget my birthday",
    "Don't you dare forget my birthday!",
    "please do not ever delete my birthday",
    "make sure my birthday is not forgotten",
    "remember my birthday, don't forget it",
    "forgetting my birthday would be terrible",
    "it would be awful if you forgot my birthday",
    "can you forget my birthday? no wait, keep it",
    "forget my birthday. Actually, never mind",
    # not a request at all: a question, a complaint, someone else's words, what may be asked one day
    "did you forget my birthday?",
    "why have you deleted my birthday?",
    "you forgot my birthday last year",
    "my sister said forget my birthday",
    "he told me to delete my birthday from the calendar",
    "I didn't ask you to forget my birthday",
    "maybe tomorrow I'll ask you to delete my birthday",
]


@pytest.mark.parametrize("request_text", KEEPS)
def test_a_request_to_keep_names_nothing(mem, request_text):
    facts = ["My birthday is on March 3rd.", "I work as a nurse."]
    assert _named(mem, facts, request_text) == []


def test_a_request_to_keep_is_not_purged(mem):
    facts = ["My birthday is on March 3rd.", "I work as a nurse."]
    mem.add(facts, user_id="k")
    assert mem.forget("I don't want you to forget my birthday", user_id="k", purge=True) == []
    assert sorted(m.text for m in mem.get_all(user_id="k")) == sorted(facts)


@pytest.mark.parametrize("request_text", ["forget my birthday", "please forget my birthday, keep my job",
                                          "don't keep my birthday anymore", "forget my birthday, thanks"])
def test_a_request_to_forget_still_names_its_fact(mem, request_text):
    facts = ["My birthday is on March 3rd.", "I work as a nurse."]
    assert _named(mem, facts, request_text) == [facts[0]]


def _rows_saying(path, word):
    """Every (table, column) of the SQLite file whose text holds ``word``."""
    import sqlite3

    found = []
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
            for col in cols:
                try:
                    hit = conn.execute(f"SELECT count(*) FROM '{table}' WHERE CAST(\"{col}\" AS TEXT) LIKE ?",
                                       (f"%{word}%",)).fetchone()[0]
                except sqlite3.DatabaseError:
                    continue
                if hit:
                    found.append((table, col))
    return found


@pytest.mark.parametrize("name,old,new", [
    ("Zorblax", "My neighbour Zorblax lives at 4417 Elmwood Lane.", "My neighbour lives next door to me."),
    ("Quillon", "I bank with Quillon Savings in Leeds.", "I moved my account to a local credit union."),
])
def test_a_purge_by_description_reaches_what_a_memory_said_before_an_update(tmp_path, embedder, name, old, new):
    path = tmp_path / "v.db"
    mem = Memory(path, embedder=embedder, gate=GateConfig(profile="none"))
    try:
        target = mem.add(old, user_id="u")[0].memory_id
        other = mem.add("I enjoy painting watercolours on weekends.", user_id="u")[0].memory_id
        mem.update(target, new, user_id="u")
        assert ("memory_versions", "text") in _rows_saying(path, name)  # the check can see an earlier text
        assert [m.id for m in mem.forget(f"forget everything about {name}", user_id="u", dry_run=True)] == []
        named = mem.forget(f"forget everything about {name}", user_id="u", purge=True, dry_run=True)
        assert [m.id for m in named] == [target]
        gone = mem.forget(f"forget everything about {name}", user_id="u", purge=True)
        assert [m.id for m in gone] == [target] and gone[0].text == ""
        assert [m.id for m in mem.get_all(user_id="u")] == [other]
    finally:
        mem.close()
    assert _rows_saying(path, name) == []


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_the_earlier_texts_are_read_on_both_stores(request, tmp_path, embedder, store):
    target_db = tmp_path / "e.db" if store == "sqlite" else request.getfixturevalue("pg_url")
    mem = Memory(target_db, embedder=embedder, gate=GateConfig(profile="none"))
    try:
        target = mem.add("My cousin Ilvermorn repairs clocks in Ghent.", user_id="u")[0].memory_id
        kept = mem.add("My cousin Ada repairs bicycles in Delft.", user_id="u")[0].memory_id
        mem.update(target, "My cousin repairs clocks for a living.", user_id="u")
        gone = mem.forget("forget everything about Ilvermorn", user_id="u", purge=True)
        assert [m.id for m in gone] == [target]
        assert [m.id for m in mem.get_all(user_id="u")] == [kept]
        assert all("Ilvermorn" not in (h.old_text or "") + (h.new_text or "")
                   for h in mem.history(target, user_id="u"))
    finally:
        mem.close()


# One request that names two of the user's own things asks for each.
OWN = ["My address is 12 Oak Street.", "My job is nursing at St Mary's.", "My phone number is 555-0101.",
       "My favourite food is sushi.", "My mother's name is Maria.", "My dentist is Dr Okafor on Hill Road."]


@pytest.mark.parametrize("request_text,expected", [
    ("forget my address and my job", [0, 1]),
    ("please forget my address, my job and my phone number", [0, 1, 2]),
    ("forget my phone number & my favourite food", [2, 3]),
    ("forget my address", [0]),
])
def test_a_request_naming_two_of_the_users_things_forgets_each(mem, request_text, expected):
    assert _named(mem, OWN, request_text) == sorted(OWN[i] for i in expected)


@pytest.mark.parametrize("request_text", ["forget the name and the number of my dentist",
                                          "forget my mom and my dad's anniversary",
                                          "don't forget my address and my job"])
def test_an_and_that_does_not_join_two_things_of_the_users_keeps_the_request_whole(request_text):
    from memsieve.write.forgetting import parse_request, parse_requests

    assert parse_requests(request_text) == [parse_request(request_text)]


def test_a_purge_of_two_things_erases_both_and_nothing_else(mem):
    mem.add(OWN, user_id="two")
    gone = mem.forget("forget my address and my job", user_id="two", purge=True)
    assert sorted(m.id for m in gone) == sorted(m.id for m in gone if m.text == "") and len(gone) == 2
    assert sorted(m.text for m in mem.get_all(user_id="two")) == sorted(OWN[2:])


def test_a_request_with_no_words_of_its_own_names_nothing(mem):
    """'Will' is a word the index drops: the request has nothing to match, and the nearest memory in
    meaning ("my will") is a guess that a purge could not undo."""
    facts = ["Will is moving to Lisbon in May.", "I wrote my will last year.", "I will visit the dentist."]
    assert _named(mem, facts, "forget everything about Will") == []
    assert _named(mem, facts, "please forget it") == []


@pytest.mark.parametrize("name,thing,owner", [("Omar", "car", "father"), ("Kofi", "phone number", "sister"),
                                              ("Lena", "flat", "boss")])
def test_a_thing_of_a_persons_is_not_the_same_thing_of_someone_they_own(mem, name, thing, owner):
    facts = [f"{name}'s {thing} is new.", f"{name}'s {owner}'s {thing} is old.", f"{name} lives in Leeds."]
    assert _named(mem, facts, f"forget {name}'s {thing}") == [facts[0]]


def test_what_the_assistant_knows_is_the_requests_framing(mem):
    facts = ["Sandy is allergic to shellfish.", "The beach near my flat is sandy and quiet."]
    assert _named(mem, facts, "forget everything you know about Sandy") == [facts[0]]


def test_a_purge_spares_what_a_merge_joined_that_the_request_tells_apart(tmp_path, embedder):
    """A merge closes an older version into the newer; a purge by description reaches the members retired
    into what it erases only when the request names them too: "my gate code 4472" spares the 4471 the
    merge retired, "my locker code" takes both of its versions."""
    mem = Memory(tmp_path / "m.db", embedder=embedder, gate=GateConfig(profile="none"))
    try:
        for text in ["My gate code is 4471.", "My gate code is 4472.", "My locker code is 1234.",
                     "My locker code is 5678.", "I swim on Tuesdays."]:
            mem.add(text, user_id="u")
        merged = [m for m in mem.consolidate(user_id="u").merges if m.status == "merged"]
        assert sorted(m.kind for m in merged) == ["versions", "versions"]
        gone = mem.forget("forget my gate code 4472", user_id="u", purge=True)
        assert len(gone) == 1 and gone[0].text == ""
        left = {m.text for m in mem.get_all(user_id="u", include_inactive=True)}
        assert "My gate code is 4471." in left and "My gate code is 4472." not in left
        gone = mem.forget("forget my locker code", user_id="u", purge=True)
        assert len(gone) == 2 and all(m.text == "" for m in gone)
        left = {m.text for m in mem.get_all(user_id="u", include_inactive=True)}
        assert not {"My locker code is 1234.", "My locker code is 5678."} & left
        assert "I swim on Tuesdays." in left
    finally:
        mem.close()


def test_a_purge_by_an_earlier_value_spares_the_memory_that_holds_another_now(tmp_path, embedder):
    mem = Memory(tmp_path / "n.db", embedder=embedder, gate=GateConfig(profile="none"))
    try:
        appt = mem.add("My dentist appointment is on Monday at 9.", user_id="u")[0].memory_id
        mem.update(appt, "My dentist appointment is on Friday at 9.", user_id="u")
        phone = mem.add("My phone number is 555-1234.", user_id="u")[0].memory_id
        assert mem.forget("forget my Monday dentist appointment", user_id="u", purge=True, dry_run=True) == []
        assert mem.forget("forget my old phone number", user_id="u", purge=True, dry_run=True) == []
        assert {m.id for m in mem.get_all(user_id="u")} == {appt, phone}
    finally:
        mem.close()



@pytest.mark.parametrize("request_text,expected", [
    ("forget everything except my birthday", []),
    ("forget my job, not my birthday", [1]),
    ("forget my job but not my birthday", [1]),
    ("forget my job instead of my birthday", [1]),
    ("forget my job rather than my birthday", [1]),
    ("forget my job other than my birthday", [1]),
])
def test_what_a_request_excepts_is_kept_and_lends_it_no_words(mem, request_text, expected):
    facts = ["My birthday is on March 3rd.", "My job is nursing at St Mary's."]
    assert _named(mem, facts, request_text) == sorted(facts[i] for i in expected)


@pytest.mark.parametrize("text,asks", [("did you forget my birthday?", False),
                                       ("my sister said forget my birthday", False),
                                       ("please forget my birthday", True),
                                       ("could you please delete my phone number?", True)])
def test_a_chat_message_is_a_request_to_forget_only_when_it_asks(text, asks):
    from memsieve.text.lexicon import ENGLISH

    assert ENGLISH.is_forget_request(text) is asks


@pytest.mark.parametrize("request_text,expected", [
    ("forget where carlos lives", 0),
    ("forget greg phone number", 2),
    ("forget the phone number of greg", 2),
    ("forget where I live", 1),
])
def test_a_name_typed_in_lower_case_is_the_persons_the_scope_names(mem, request_text, expected):
    """Read as the user's own, "where carlos lives" took "I live in Quito"; the scope's memories say
    who Carlos is ("my friend Carlos"), and the request is read again with the name as a name."""
    facts = ["My friend Carlos lives in Lima.", "I live in Quito.", "Greg's phone number is 555-0101.",
             "My phone number is 555-2222."]
    assert _named(mem, facts, request_text) == [facts[expected]]


def test_words_said_of_someone_else_are_not_guessed_among_the_users_own(mem):
    facts = ["Zelda's locker is number 18 by the pool.", "I keep my towel in the car."]
    assert _named(mem, facts, "forget zelda locker") in ([facts[0]], [])


@pytest.mark.parametrize("request_text,expected", [
    ("forget my brother's Tesla", [1]),
    ("forget where my sister lives", [3]),
    ("forget where my wife's sister lives", [4]),
])
def test_a_thing_or_a_relation_of_a_relations_is_not_the_users_own(mem, request_text, expected):
    facts = ["I drive a Tesla.", "My brother's Tesla is red.", "I subscribe to Spotify Premium.",
             "My sister lives in Porto.", "My wife's sister lives in Braga."]
    assert _named(mem, facts, request_text) == sorted(facts[i] for i in expected)


@pytest.mark.parametrize("request_text,expected", [
    ("forget my mom's birthday", 0), ("forget my mother's birthday", 0), ("forget where my dad works", 2),
    ("forget where my father works", 2), ("forget everything about my mum", 0),
])
@pytest.mark.parametrize("spelled", ["formal", "familiar"])
def test_a_familiar_relation_word_names_the_same_person(mem, request_text, expected, spelled):
    facts = (["My mother's birthday is on May 2.", "My birthday is on March 3.", "My father works at the port.",
              "My mother-in-law lives in Braga."] if spelled == "formal" else
             ["My mom's birthday is on May 2.", "My birthday is on March 3.", "My dad works at the port.",
              "My mother-in-law lives in Braga."])
    assert _named(mem, facts, request_text) == [facts[expected]]
