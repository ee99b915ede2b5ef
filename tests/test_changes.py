"""Change cues, subject terms and the word-rarity prior: the pure pieces of the
information-aware gate and of freshness at read."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memsieve.text import ENGLISH
from memsieve.text.english import CUES
from memsieve.text.rarity import COMMON_WEIGHT

change_cues, subject_terms, word_rarity = ENGLISH.cues, ENGLISH.subject_terms, ENGLISH.rarity


def test_each_cue_group_is_found_on_word_boundaries():
    assert change_cues("I don't go to Ironworks anymore.") == {"n't", "anymore"}
    assert change_cues("Jonas and I aren\u2019t together any more.") == {"n't", "any more"}
    assert change_cues("Uncle Viktor retired and closed the shop.") == {"retired", "closed"}
    assert change_cues("The rent went up in May.") == {"went up"}
    # substrings of other words are not cues: "know" holds "now", "notes" holds "not"
    assert change_cues("I know the notes of this piano.") == frozenset()
    assert change_cues("My favourite cuisine is Italian.") == frozenset()


@given(st.sampled_from(sorted({c for g in CUES.values() for c in g} - {"n't"})),
       st.sampled_from(["", "Well, ", "I "]), st.sampled_from(["", " it.", ", then."]))
def test_every_listed_cue_is_found_in_any_surrounding(cue, before, after):
    assert cue in change_cues(f"{before}{cue.upper() if len(cue) > 3 else cue}{after}")


def test_subject_terms_name_who_a_fact_is_about_not_what_it_says():
    assert subject_terms("My sister Lena works as a dentist.") >= {"sister", "lena"}
    assert "dentist" not in subject_terms("My sister Lena works as a dentist.")
    assert "lena" in subject_terms("Lena, my sister, lives in Graz.")
    assert subject_terms("Ana moved to Lisbon in March.") == {"ana"}
    # a name that is the object of the fact is what changed, not who it is about
    assert subject_terms("I quit Fenwick Insurance last week.") == frozenset()


def test_rarity_is_low_for_common_words_and_full_for_rare_or_unknown_ones():
    assert word_rarity("give") == COMMON_WEIGHT and word_rarity("days") == COMMON_WEIGHT
    assert word_rarity("sesame") == 1.0 and word_rarity("neonatal") == 1.0  # not a whole vocabulary word
    assert COMMON_WEIGHT < word_rarity("replacement") < 1.0
    assert word_rarity("GIVE") == word_rarity("give")
