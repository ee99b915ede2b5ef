"""Who gives, who gets and whose it is: changes that keep every content word.

"My nephew is knitting a scarf for me" says what "I'm knitting a scarf for my nephew" says
with the knitter and the receiver traded; "a present from my aunt" and "a present for my
aunt" differ in one preposition; "my boss's wife" and "my wife's boss" in the order of two
neighbours. None adds a content word, so the information term sees nothing new, and the
gate used to fold each into the other. The vectors are chosen (TableEmbedder) so that every
candidate reaches the NOOP route: what is tested is the rule that decides the fold.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.text.contractions import Contractions
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.text.unmarked import other_doers
from memsieve.text.voice import doers_differ
from tests.test_gate_voice import _second


@pytest.mark.parametrize("first, later, verb", [
    ("I'm knitting a scarf for my nephew.", "My nephew is knitting a scarf for me.", "knit"),
    ("I'm teaching my daughter to swim this summer.", "My daughter is teaching me to swim this summer.", "teach"),
    ("I've been coaching my brother for the marathon.", "My brother has been coaching me for the marathon.",
     "coach"),
    ("We drove our neighbours to the station.", "Our neighbours drove us to the station.", "drove"),
    # not traded, taken over: the speaker now does what someone else did
    ("My wife is walking the dog this week.", "I'm walking the dog this week.", "walk"),
    ("My father pays the electricity bill.", "I pay the electricity bill.", "pay"),
])
def test_the_speaker_in_place_of_someone_else_is_not_folded(tmp_path, first, later, verb):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert f"another doer of {verb!r}" in d.reason, d.reason
    assert d.linked_to == a.memory_id


@pytest.mark.parametrize("first, later, state", [
    # said after "be" with no agent, a state is held of the subject before "be"
    ("I'm nervous about my daughter's exam.", "My daughter is nervous about my exam.", "nervous"),
    ("My wife was promoted last month.", "I was promoted last month.", "promot"),
    ("I'm allergic to peanuts.", "My son is allergic to peanuts.", "allerg"),
    ("My boss is impressed with the report.", "I'm really impressed with the report.", "impress"),
    # a name opening the sentence: the index reads names mid-sentence only
    ("Dmitri was promoted to head chef in March.", "I was promoted to head chef in March.", "promot"),
    ("Kai: Lorna was laid off in the spring.", "Kai: I was laid off in the spring.", "laid"),
    ("Ingrid has been vegetarian for six years.", "I've been vegetarian for six years.", "vegetarian"),
    # being a noun: its determiner and its owner are passed over to the "be"
    ("Kofi is my landlord.", "I'm Kofi's landlord.", "landlord"),
    ("My brother is a paramedic in Bristol.", "I'm a paramedic in Bristol.", "paramed"),
    # two people, neither the speaker, trade the state
    ("Our puppy is afraid of the neighbour's cat.", "The neighbour's cat is afraid of our puppy.", "afraid"),
])
def test_a_state_held_of_the_speaker_in_place_of_someone_else_is_not_folded(tmp_path, first, later, state):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert "another doer of" in d.reason and state in d.reason, d.reason


@pytest.mark.parametrize("first, later", [
    ("I'm allergic to peanuts.", "I am allergic to peanuts, sadly."),
    ("I'm a paramedic in Bristol.", "I am a paramedic in Bristol."),
    ("My neighbour is a nurse.", "My neighbour works as a nurse."),
    # "he" is the one the text names, not someone new
    ("My brother is allergic to cats.", "My brother says he is allergic to cats."),
    # a state and a deed are not compared: "hired by" names who hired, not who was hired
    ("I was hired last spring.", "I was hired by Dana last spring."),
])
def test_a_state_held_of_the_same_one_is_no_other_doer(first, later):
    mine, theirs = ENGLISH.marks(later), ENGLISH.marks(first)
    assert other_doers(mine, theirs) == [] and other_doers(theirs, mine) == []


@pytest.mark.parametrize("first, later, word", [
    ("The flowers on the table are from my husband.", "The flowers on the table are for my husband.", "for"),
    ("I bought the concert tickets from Priya.", "I bought the concert tickets for Priya.", "for"),
    ("I'm playing chess against my cousin on Sunday.", "I'm playing chess with my cousin on Sunday.", "with"),
    ("I moved the boxes to the garage.", "I moved the boxes from the garage.", "from"),
    # the same prepositions, each said once, in the other order
    ("I'm driving from Glasgow to Leeds on Friday.", "I'm driving to Glasgow from Leeds on Friday.", "to"),
])
def test_a_preposition_put_in_place_of_another_is_not_folded(tmp_path, first, later, word):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert repr(word) in d.reason, d.reason


@pytest.mark.parametrize("first, later", [
    ("My boss's wife runs a bakery in town.", "My wife's boss runs a bakery in town."),
    ("My cousin's neighbour plays the cello.", "My neighbour's cousin plays the cello."),
])
def test_owner_and_owned_trading_places_is_not_folded(tmp_path, first, later):
    _, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason


@pytest.mark.parametrize("first, later, owned", [
    # the owner the memory names is left out: the thing is now the speaker's
    ("My cousin's daughter starts university in September.", "My daughter starts university in September.",
     "daughter"),
    ("Our neighbour's dog barks at the postman.", "Our dog barks at the postman.", "dog"),
    ("My aunt's flat in Porto has a balcony.", "My flat in Porto has a balcony.", "flat"),
    # or put as the speaker's own
    ("Leo's bike was stolen from the station.", "My bike was stolen from the station.", "bike"),
    # the owner named elsewhere, as no owner, says nothing of whose the thing is
    ("My aunt's neighbours keep chickens in the garden.", "My neighbours keep chickens in the garden, my aunt says.",
     "neighbours"),
])
def test_an_owner_the_text_drops_is_not_folded(tmp_path, first, later, owned):
    a, d = _second(tmp_path, first, later)
    assert d.event == "ADD", d.reason
    assert f"whose {owned!r}" in d.reason, d.reason


@pytest.mark.parametrize("first, later", [
    # "her" names the one the memory names
    ("Anna's birthday is on the third of May.", "Her birthday is on the third of May."),
    # the text names an owner of its own
    ("My colleague Omar's desk is by the window.", "My colleague's desk is by the window."),
    # the owner kept, the rest restated
    ("My cousin's daughter starts university in September.",
     "My cousin's daughter starts at university in September."),
])
def test_an_owner_kept_or_named_by_a_pronoun_is_folded(tmp_path, first, later):
    _, d = _second(tmp_path, first, later)
    assert d.event == "NOOP", d.reason


@pytest.mark.parametrize("first, later", [
    # "with" rebuilds the sentence here, in place of no other preposition
    ("Sam and I go climbing on Tuesdays.", "I go climbing with Sam on Tuesdays."),
    # "he" names the one the text names: no one traded places
    ("Omar loves cooking for his family.", "Omar says he loves cooking for his family."),
    # one doer spelt two ways
    ("My neighbour's dog barks all night.", "My neighbor's dog barks all night long."),
    # the same doer in the progressive and the simple present
    ("I'm knitting a scarf for my nephew.", "I knit a scarf for my nephew."),
])
def test_restatements_are_not_read_as_another_doer(tmp_path, first, later):
    mine, theirs = ENGLISH.marks(later), ENGLISH.marks(first)
    assert other_doers(mine, theirs) == [] and other_doers(theirs, mine) == []
    if "with" in later:
        _, d = _second(tmp_path, first, later)
        assert d.event == "NOOP", d.reason


def test_a_contracted_pronoun_is_its_verbs_doer():
    # "I've" holds the subject: it is not passed over as the auxiliary "have"
    (verb, doer, how), *_ = ENGLISH.marks("I've hired Ben.").doers
    assert (verb, how) == ("hire", "active")
    assert doer == frozenset({hash("i/me/my")})
    # "is" before a progressive is passed over; before a participle with no agent it makes a state,
    # held of the subject before "is"
    assert [(v, how) for v, _, how in ENGLISH.marks("My grandmother is knitting.").doers] == [("knit", "active")]
    (verb, holder, how), = ENGLISH.marks("My grandmother is hired.").doers
    (_, doer, _), *_ = ENGLISH.marks("My grandmother hired Ben.").doers
    assert (verb, how) == ("hire", "state") and holder == doer
    (_, me, how), *_ = ENGLISH.marks("I'm worried.").doers
    assert how == "state" and me == frozenset({hash("i/me/my")})


def test_contractions_come_from_the_lexicon():
    c = Contractions(ENGLISH.contractions, possessive_ending=ENGLISH.possessive_ending,
                     hosts=ENGLISH.contraction_hosts)
    assert c.split("don't") == ("do", "not") and c.split("it's") == ("it", "is")
    assert c.split("tom's") is None  # a possessive
    # a lexicon without contractions reads "don't" as one word: no denial is split from it
    plain = Lexicon(name="plain", polarity_words={"not"})
    assert "not" not in plain.marks("I don't smoke").words
    assert "not" in ENGLISH.marks("I don't smoke").words


def test_a_lexicon_rejects_malformed_contractions():
    from memsieve.errors import ConfigError
    with pytest.raises(ConfigError, match="contractions"):
        Lexicon(name="bad", contractions={"nt"})
    with pytest.raises(ConfigError, match="possessive_ending"):
        Lexicon(name="bad", possessive_ending=7)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="progressive_ending"):
        Lexicon(name="bad", progressive_ending=" ")
    # endings are read as the words are, folded and lowercased
    curly = Lexicon(name="curly", possessive_ending="\u2019S", progressive_ending="ING",
                    contractions={"\u2019s/is"}, contraction_hosts={"it"})
    assert (curly.possessive_ending, curly.progressive_ending) == ("'s", "ing")
    assert curly.contractions == frozenset({"'s/is"})


@pytest.mark.parametrize("kwargs, named", [
    ({"groups": ["nt"]}, "'nt'"),
    ({"groups": ["'m/"]}, "\"'m/\""),
    ({"groups": [3]}, "3"),
    ({"groups": "'m/am"}, "contractions"),
    ({"groups": None}, "contractions"),
    ({"groups": ["'s/is"], "possessive_ending": None}, "possessive_ending"),
    ({"groups": ["'s/is"], "hosts": "it"}, "hosts"),
    ({"groups": ["'s/is"], "hosts": [1]}, "hosts"),
])
def test_contractions_built_directly_refuse_malformed_groups(kwargs, named):
    # Built without a lexicon, the same groups are checked: a typed error naming the fault,
    # never an IndexError or TypeError from inside the split.
    from memsieve.errors import ConfigError
    groups = kwargs.pop("groups")
    with pytest.raises(ConfigError) as err:
        Contractions(groups, **kwargs)
    assert named in str(err.value) and str(err.value)[0].islower()


def test_without_role_prepositions_a_lexicon_folds_the_traded_preposition(tmp_path):
    from dataclasses import replace
    first, later = "The flowers on the table are from my husband.", "The flowers on the table are for my husband."
    _, d = _second(tmp_path, first, later, lexicon=replace(ENGLISH, role_prepositions=frozenset()))
    assert d.event == "NOOP", d.reason


_HASHES = st.frozensets(st.integers(0, 5), min_size=1, max_size=2)
_DOER = st.tuples(st.sampled_from(["hire", "knit", "pay"]), _HASHES, st.sampled_from(["active", "passive", "state"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_DOER, max_size=3, unique_by=lambda d: d[0]), st.lists(_DOER, max_size=3, unique_by=lambda d: d[0]),
       st.frozensets(st.integers(0, 5)), st.frozensets(st.integers(0, 5)))
def test_doers_differ_the_same_way_round_either_way(text, memory, speakers, people):
    """Which verbs have another doer does not depend on which side is the memory, and a verb
    both sides give a shared doer never has another."""
    there = doers_differ(text, memory, speakers=speakers, people=people)
    back = doers_differ(memory, text, speakers=speakers, people=people)
    assert set(there) == set(back)
    theirs = {v: d for v, d, _ in memory}
    assert not any(theirs[v] & d for v, d, _ in text if v in there)
