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
from memsieve.text.marks import other_doers
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
    (verb, doer, passive), *_ = ENGLISH.marks("I've hired Ben.").doers
    assert (verb, passive) == ("hire", False)
    assert doer == frozenset({hash("i/me/my")})
    # "is" before a progressive is passed over; before a participle it makes a passive with no doer
    assert [v for v, _, _ in ENGLISH.marks("My grandmother is knitting.").doers] == ["knit"]
    assert ENGLISH.marks("My grandmother is hired.").doers == ()


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
_DOER = st.tuples(st.sampled_from(["hire", "knit", "pay"]), _HASHES, st.booleans())


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
