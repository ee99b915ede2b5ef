"""The Lexicon: one object holds a language's words, and the gate, search and forgetting read it."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from conftest import TableEmbedder, unit
from memsieve import ConfigError, GateConfig, Memory, _core
from memsieve.text import ENGLISH, Lexicon
from memsieve.text.fold import fold, words
from memsieve.text.rarity import COMMON_WEIGHT
from memsieve.write.forgetting import parse_request

GERMAN = Lexicon(name="german", change_cues={"nicht mehr", "umgezogen"}, relations={"schwester"},
                 request_words={"bitte", "vergiss", "was", "ich", "über", "gesagt", "habe", "den", "die"},
                 old_words={"alte", "alten"}, forget_request=r"\bvergiss\b",
                 not_a_forget_request=r"\bnicht vergessen\b")

STORED, SAID = "Ich wohne in Berlin.", "Ich wohne nicht mehr in Berlin."


def _memory(lexicon: Lexicon | None = None) -> Memory:
    # Both texts get one vector: close in meaning, so only a change cue can keep the second.
    embedder = TableEmbedder(table={STORED: unit(1.0), SAID: unit(1.0)})
    options = {} if lexicon is None else {"lexicon": lexicon}
    return Memory(":memory:", embedder=embedder, gate=GateConfig(info_tau=2.0), **options)


def test_the_default_lexicon_is_english():
    with _memory() as mem:
        assert mem.lexicon is ENGLISH
    assert Lexicon.english() == ENGLISH and hash(Lexicon.english()) == hash(ENGLISH)
    assert dataclasses.replace(ENGLISH, change_cues=ENGLISH.change_cues | {"umgezogen"}) != ENGLISH


def test_a_cue_of_another_language_is_what_the_gate_calls_a_change():
    with _memory() as mem:
        mem.add(STORED, user_id="u")
        (english,) = mem.add(SAID, user_id="u")
    with _memory(GERMAN) as mem:
        (first,) = mem.add(STORED, user_id="u")
        (german,) = mem.add(SAID, user_id="u")
    # English knows no German cue: the words put in place are what keeps the text (not a change)
    assert english.event == "ADD" and "says a change" not in english.reason, english.reason
    assert "'nicht'" in english.reason and "'mehr'" in english.reason
    assert german.event == "ADD" and german.layer == "band" and german.linked_to == first.memory_id
    assert "says a change" in german.reason and "nicht mehr" in german.reason


def test_forget_requests_are_read_in_the_lexicons_language():
    asked = "Bitte vergiss, was ich über Marco gesagt habe."
    assert GERMAN.is_forget_request(asked) and not ENGLISH.is_forget_request(asked)
    assert ENGLISH.is_forget_request("Please forget what I said about Marco.")
    assert not GERMAN.is_forget_request("Please forget what I said about Marco.")
    assert not GERMAN.is_forget_request("Bitte nicht vergessen: vergiss die Milch nicht")
    assert parse_request(asked, lexicon=GERMAN).terms == ("marco",)
    assert parse_request("vergiss den alten Vertrag", lexicon=GERMAN).wants_old
    assert not parse_request("vergiss den Vertrag", lexicon=GERMAN).wants_old
    with _memory(GERMAN) as mem:
        mem.add("Marco wohnt in Graz.", user_id="u")
        mem.add("Ich spiele gern Schach.", user_id="u")
        gone = mem.forget(asked, user_id="u")
        assert [m.text for m in gone] == ["Marco wohnt in Graz."]
        assert [m.text for m in mem.get_all(user_id="u")] == ["Ich spiele gern Schach."]


def test_subject_terms_read_the_lexicons_relation_words():
    assert "schwester" in GERMAN.subject_terms("Meine Schwester Lena wohnt in Graz.")
    assert "lena" in GERMAN.subject_terms("Meine Schwester Lena wohnt in Graz.")
    assert "schwester" not in ENGLISH.subject_terms("Meine Schwester Lena wohnt in Graz.")


def test_rarity_comes_from_the_lexicons_vocabulary():
    assert ENGLISH.rarity("give") == COMMON_WEIGHT
    assert dataclasses.replace(ENGLISH, vocabulary=None).rarity("give") == 1.0
    with pytest.raises(ConfigError, match="not a file"):
        dataclasses.replace(ENGLISH, vocabulary="/nonexistent/tokenizer.json")


def test_answers_are_remembered_per_lexicon():
    text = "We moved to Porto and I don't drive anymore."
    assert ENGLISH.cues(text) is ENGLISH.cues(text)
    mine = dataclasses.replace(ENGLISH, change_cues={"porto"})
    assert ENGLISH.cues(text) == {"moved", "n't", "anymore"} and mine.cues(text) == {"porto", "n't"}


def test_a_lexicon_survives_pickling_with_fresh_caches():
    again = pickle.loads(pickle.dumps(GERMAN))
    assert again == GERMAN and again.cues(SAID) == {"nicht mehr"}
    assert pickle.loads(pickle.dumps(ENGLISH)).rarity("give") == COMMON_WEIGHT


def test_a_lexicon_is_checked_where_it_is_given():
    with pytest.raises(ConfigError, match="lexicon must be a memsieve.text.Lexicon"):
        Memory(":memory:", embedder=TableEmbedder(), lexicon="english")
    with pytest.raises(ConfigError, match="lexicon change_cues must be a collection of strings"):
        Lexicon(name="x", change_cues="moved")
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        Lexicon(name="x", forget_request="(")
    with pytest.raises(ConfigError, match="name"):
        Lexicon(name="")
    with pytest.raises(ConfigError, match="pronoun_forms holds 'i', not one-word forms apart by '/'"):
        Lexicon(name="x", pronoun_forms={"i"})
    with pytest.raises(ConfigError, match="word_forms holds 'a/ an'.*like 'a/an'"):
        Lexicon(name="x", word_forms={"a/ an"})
    with pytest.raises(ConfigError, match="verb_pasts holds 'buy'.*like 'buy/bought'"):
        Lexicon(name="x", verb_pasts={"buy"})
    with pytest.raises(ConfigError, match="verb_kin holds 'go'.*like 'go/visit'"):
        Lexicon(name="x", verb_kin={"go"})
    # entries are folded and lowercased as the texts they are matched on
    assert Lexicon(name="x", change_cues={"Umgezogen", "NO  longer", "caf\u00e9"}).change_cues == {
        "umgezogen", "no longer", "cafe"}


def test_curly_apostrophes_fold_as_the_rust_tokenizer_folds_them():
    for apostrophe in ("\u2019", "\u2018", "\u02bc"):
        assert ENGLISH.cues(f"Jonas and I aren{apostrophe}t together anymore.") == {"n't", "anymore"}
        assert ENGLISH.is_forget_request(f"Please don{apostrophe}t keep my address.")
        assert not ENGLISH.is_forget_request(f"Don{apostrophe}t forget to call mum.")


_LETTERS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\u00e9\u00e8\u00ea\u00eb\u00e1\u00e0\u00e2"
            "\u00e4\u00e3\u00e5\u00ed\u00ee\u00ef\u00f3\u00f4\u00f6\u00f5\u00fa\u00fc\u00f1\u00e7\u00fd\u00ff"
            "\u00c9\u00dc\u00d1\u00c7\u00c5\u00df\u00f8\u00e6\u0153\u0130\ufb01\ufb02\uff21\uff42\u1e9e")


@given(st.text(_LETTERS, min_size=1, max_size=8), st.sampled_from(["", "'", "\u2019", "\u2018", "\u02bc"]),
       st.text(_LETTERS, min_size=1, max_size=4))
def test_fold_is_the_rust_normalization(head, apostrophe, tail):
    word = head + (apostrophe + tail if apostrophe else "")
    surfaces = [surface for _, surface, _ in _core.tokenize_kinds(word)]
    assert len(surfaces) <= 1
    if surfaces:  # nothing when the word is a stopword
        assert surfaces[0] == fold(word).lower()
        if surfaces[0].isascii():
            assert words(word) == surfaces


def test_importing_the_gate_or_the_lexicon_does_not_load_the_embedder():
    code = ("import sys, memsieve.text, memsieve.gate\n"
            "from memsieve.text import ENGLISH\n"
            "assert ENGLISH.rarity('give') < 1.0\n"
            "print(sorted(m for m in sys.modules if m.startswith('memsieve.embedding')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize("text, who, terms", [
    ("I like tea.", "user", set()), ("My mother likes tea with lemon.", "person", {"mother"}),
    ("Tomas, my roommate, plays the cello.", "person", {"toma", "roommat"}),
    ("My wife's boss is very relaxed.", "person", {"boss"}), ("I visit my sister every Easter.", "user", set()),
    ("My dog weighs 30 kilos.", "person", {"dog"}), ("The wifi password is hunter2.", "user", set()),
    ("She is afraid of the dark.", "other", set()),
])
def test_the_lexicon_reads_whom_a_text_is_about(text, who, terms):
    got = ENGLISH.subject(text)
    assert (got.who, set(got.terms)) == (who, terms)


def test_a_requests_subject_leaves_its_asking_out():
    assert ENGLISH.request_subject("forget that I like tea")[1].who == "user"
    assert ENGLISH.request_subject("Please forget what I told you about my brother's job")[1].terms == {"brother"}
    assert ENGLISH.request_subject("forget what I said about Jonas")[1].names == {"jona"}
    assert ENGLISH.request_subject("forget her birthday")[1].who == "other"
    assert parse_request("forget everything about my boss").person_only
    # A lexicon without self words reads no "ich" (an unknown opening word is only maybe a person), and
    # forgetting then names by the words alone (test_forget_requests_are_read_in_the_lexicons_language).
    assert not GERMAN.subject("Ich wohne in Berlin.").sure


def test_a_verbs_forms_are_read_as_the_index_reads_them():
    english = Lexicon.english()
    # "leave" is the index's "leav"; "did" is a word the index drops, so "do" has no form to add
    assert english.with_verb_forms(frozenset({"leav", "desk"})) == {"leav", "left", "desk"}
    assert english.with_verb_forms(frozenset({"swam"})) == {"swim", "swam", "swum"}
    # and of its kin: "where did I go first?" asks about "I visited ..." and "I flew to ..."
    assert {"visit", "fli", "flew", "went"} <= english.with_verb_forms(frozenset({"go"}))
    assert english.with_verb_forms(frozenset({"watch"})) == {"watch", "see", "saw", "seen"}
    assert english.with_verb_forms(frozenset({"cat"})) == {"cat"}
    assert Lexicon(name="x").with_verb_forms(frozenset({"buy"})) == {"buy"}
