"""A NOOP folds a text into its nearest memory alone: that memory must say every value of the text.

Numbers, dates, names and counted things ("5 gyms", "2 cats") that the memory
a NOOP would fold into does not say are new information, whatever the other
neighbours say; list numbering states nothing.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import GateConfig, Memory, _core
from memsieve.text.fold import without_list_marks
from memsieve.text.when_told import time_phrases


def test_a_new_count_of_the_same_thing_is_stored(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        first = m.add("So far I've visited two different climbing gyms in the city.", user_id="u")[0]
        later = m.add("So far I've visited five different climbing gyms in the city.", user_id="u")[0]
        assert first.event == later.event == "ADD"
        assert later.layer in ("band", "novelty")
        found = m.search("how many climbing gyms have I visited", user_id="u", limit=2)
        assert "five" in found[0].text  # the newer count first, the older one still there
        assert {r.text for r in found} == {first.text, later.text}


def test_a_name_held_by_another_neighbour_is_not_folded_away(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("My piano teacher is Ingrid.", user_id="u")
        m.add("I take piano lessons every Tuesday evening.", user_id="u")
        d = m.add("I take piano lessons with Ingrid every Tuesday evening.", user_id="u")[0]
        assert d.event == "ADD", d.reason
        held = {t for t, _, _ in _core.tokenize_kinds(m.get(d.nearest_id).text)}
        if d.layer == "band" and not {"ingrid", "tuesday"} <= held:
            assert "does not say" in d.reason or "new information" in d.reason


def test_a_number_counting_another_thing_is_a_value(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("I have 2 dogs and 3 cats at home.", user_id="u")
        d = m.add("I have 2 cats at home.", user_id="u")[0]
        assert d.event == "ADD", d.reason


def test_list_numbering_is_no_value():
    text = "Here is a plan:\n1. Stretch for ten minutes\n2) Walk 5 km\n - 3. Rest\n(4) Drink water"
    cleaned = without_list_marks(text)
    terms = [t for t, _, kind in _core.tokenize_kinds(cleaned) if kind == "number"]
    assert terms == ["10", "5"]
    assert without_list_marks("I was born in 1984.") == "I was born in 1984."
    assert without_list_marks("12. Chapter twelve") .strip() == "Chapter twelve"


WORDS = ["garden", "bicycle", "violin", "apartment", "recipe", "coffee", "museum", "holiday"]
NAMES = ["Ingrid", "Tomasz", "Aiko", "Benedikt", "Lucia"]


@st.composite
def sentence(draw):
    parts = []
    for _ in range(draw(st.integers(2, 6))):
        kind = draw(st.sampled_from(["word", "word", "number", "name"]))
        if kind == "word":
            parts.append(draw(st.sampled_from(WORDS)))
        elif kind == "number":
            parts.append(str(draw(st.integers(0, 99))))
        else:
            parts.append(draw(st.sampled_from(NAMES)))
    return "My " + " ".join(parts) + "."


class SameVector:
    """Every text gets the same vector: the gate then decides by the text alone."""

    dim = 16

    def embed(self, texts):
        v = np.zeros((len(texts), self.dim), np.float32)
        v[:, 0] = 1.0
        return v


@settings(max_examples=60, deadline=None)
@given(stored=st.lists(sentence(), min_size=1, max_size=4), candidate=sentence())
def test_a_noop_target_says_every_value_of_the_text(stored, candidate):
    with Memory(":memory:", embedder=SameVector()) as m:
        for text in stored:
            m.add(text, user_id="u")
        d = m.add(candidate, user_id="u")[0]
        if d.event != "NOOP" or d.layer == "exact":
            return
        target = m.get(d.nearest_id)
        held = {t for t, _, _ in _core.tokenize_kinds(target.text)}
        values = {t for t, _, kind in _core.tokenize_kinds(candidate) if kind != "word"}
        assert values <= held, (candidate, target.text)


_SPREAD = [
    "I'm thinking of exploring bluegrass music more. Can you recommend some popular bluegrass artists or bands?",
    "I'm also thinking of buying a banjo, but I'm not sure if I'm ready for that yet.",
    "Bluegrass bands often feature a banjo player, a fiddle and a mandolin; many artists started in the 1940s.",
]
_SPREAD_LATER = ("I recently discovered a bluegrass band that features a banjo player and started enjoying their "
                 "music lately. Any recommendations for bluegrass musicians?")


def test_words_spread_over_the_neighbours_are_not_folded_into_one_of_them(tmp_path, embedder):
    # Each new word of the later text is held by some neighbour, so the information
    # term against all five is low; the memory a NOOP would fold it into holds few of them,
    # and info_fold_tau decides on the information against that memory alone.
    def later(name: str, fold_tau: float) -> tuple[Any, str | None]:
        with Memory(tmp_path / f"{name}.db", embedder=embedder, gate=GateConfig(info_fold_tau=fold_tau)) as m:
            for text in _SPREAD:
                m.add(text, user_id="u")
            d = m.add(_SPREAD_LATER, user_id="u")[0]
            target = d.memory_id if d.event == "NOOP" else d.linked_to
            return d, (m.get(target).text if target else None)

    folded, folded_into = later("off", 2.0)
    assert folded.event == "NOOP" and folded.information < 0.15, folded.reason
    kept, linked_to = later("low", 0.2)
    assert kept.event == "ADD" and kept.layer == "band", kept.reason
    assert "against that memory alone is" in kept.reason and "banjo" in kept.reason
    assert linked_to == folded_into  # linked to the memory it would have been folded into
    alone = float(re.search(r"alone is ([0-9.]+)", kept.reason).group(1))
    assert 0.2 <= alone <= 1.0
    above, _ = later("above", round(alone + 0.02, 2))
    assert above.event == "NOOP", above.reason


def test_a_paraphrase_is_still_folded_against_its_nearest_alone(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("I'm afraid of heights.", user_id="u")
        m.add("My favourite food is ramen.", user_id="u")
        d = m.add("Heights scare me.", user_id="u")[0]
        assert d.event == "NOOP", d.reason


def test_a_date_said_in_words_is_a_value_the_memory_must_say(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("I went to the farmers market and bought fresh strawberries for the cake.", user_id="u")
        d = m.add("I went to the farmers market last weekend and bought fresh strawberries for the cake.",
                  user_id="u")[0]
        assert d.event == "ADD" and "'last weekend'" in d.reason, d.reason
        # the same date, said another way, is said: the paraphrase still folds
        same = m.add("Last weekend I went to the farmers market and bought fresh strawberries for the cake.",
                     user_id="u")[0]
        assert same.event == "NOOP" and same.memory_id == d.memory_id, same.reason


def test_a_date_to_come_is_a_value_the_memory_must_say(tmp_path, embedder):
    # "tomorrow" folded into a memory that says "next month" would move the event by weeks
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("My favourite food is ramen.", user_id="u")
        m.add("I'm also hoping to test the new bike setup at the velodrome open session next month, to get a "
              "feel for how it rides.", user_id="u")
        d = m.add("I'm heading to the velodrome open session tomorrow to test the new bike setup. Any checks "
                  "before I ride?", user_id="u")[0]
        assert d.event == "ADD" and "'tomorrow'" in d.reason, d.reason
    assert {"tomorrow", "next month"} <= time_phrases("tomorrow, next month or in two weeks")
    # a length of time is no date: its number is the value a fold keeps
    assert time_phrases("I finished the puzzle in three days") == frozenset()


def test_a_memory_that_numbers_its_list_does_not_state_those_numbers(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("Here are some resources for learning data visualization in Python:\n1. Matplotlib's tutorials "
              "cover the basics.\n2. Seaborn builds statistical plots on it.\n3. Plotly makes interactive charts.",
              user_id="u")
        d = m.add("I already know Matplotlib and Seaborn from a data visualization course I took two months ago; "
                  "Plotly is next.", user_id="u")[0]
        # "2." numbers an item: the memory does not say "two"
        assert d.event == "ADD" and "does not say 'two'" in d.reason, d.reason


def test_stated_values_leave_out_list_numbering_and_spell_dates_one_way():
    from memsieve.text.cues import find_stated_values

    assert find_stated_values("1. Matplotlib\n2. Seaborn\n3. Plotly") == frozenset()
    assert find_stated_values("I took it two months ago") == find_stated_values("I took it 2 months ago") \
        >= {"2 month ago"}
    assert "last weekend" in find_stated_values("Last weekend we hiked.")
    assert "yesterday" in find_stated_values("I called her yesterday.")


@pytest.mark.parametrize("first, later, folded", [
    ("assistant", "user", False),  # the user's words into the assistant's: kept apart
    ("user", "assistant", False),
    ("user", "user", True),
    (None, "user", True),  # plain text says nothing of who spoke
])
def test_a_noop_never_folds_one_speakers_words_into_anothers(tmp_path, embedder, first, later, folded):
    def said(role, text):
        return text if role is None else [{"role": role, "content": text}]

    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add(said(first, "I'm afraid of heights."), user_id="u")
        m.add(said(first, "My favourite food is ramen."), user_id="u")
        d = m.add(said(later, "Heights scare me."), user_id="u")[0]
        if folded:
            assert d.event == "NOOP", d.reason
            return
        assert d.event == "ADD" and d.layer == "novelty", d.reason
        assert f"the {first}'s words and this is the {later}'s" in d.reason
        assert d.link_kind == "near" and d.linked_to == d.nearest_id
        # what the user said is a memory of its own, found as said; the other is not superseded
        hits = m.search("Are heights scary?", user_id="u", limit=2)
        assert {h.text for h in hits} == {"I'm afraid of heights.", "Heights scare me."}
        assert all(h.superseded_by is None for h in hits)


@pytest.mark.parametrize("first, later, kind", [
    ("assistant", "user", "near"),  # an answer is no version of what it answers
    ("user", "assistant", "near"),
    ("user", "user", "updates"),
])
def test_the_band_links_another_speakers_memory_as_a_neighbour_not_a_version(tmp_path, embedder, first, later, kind):
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        (a,) = m.add([{"role": first, "content": "I sing in the church choir every Sunday."}], user_id="u",
                     valid_from="2024-03-01")
        (d,) = m.add([{"role": later, "content": "I don't sing in the church choir anymore."}], user_id="u",
                     valid_from="2024-06-01")
        assert d.event == "ADD" and d.layer == "band", d.reason
        assert d.linked_to == a.memory_id and d.link_kind == kind, d.reason
        assert ("not a newer version" in d.reason) == (kind == "near")
        assert m.links(d.memory_id, user_id="u") == [(a.memory_id, kind, pytest.approx(d.nearest_cos, abs=1e-6))]
