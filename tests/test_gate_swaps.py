"""A word put where the memory says another: the embedder reads whether it is another value.

The information term nets a text's new words against the words of its memory it does not say, so
a sentence rebuilt around one changed value ("In the orchestra my instrument is the viola" /
"I play the cello in the orchestra") folded like a paraphrase and the reader kept the cello
(memsieve.write.swaps). Real ONNX embedder and SQLite for the decisions: the pairs below were
written for this test, none of them from the sets the rule was chosen on. Paraphrases must still
fold. The function itself is tested with an embedder whose cosines the test sets.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import GATE_FILLER
from memsieve import Memory
from memsieve.write.swaps import MOST_DROPPED, MOST_NEW, SWAP_RISE, swapped_value

CHANGES = [
    ("I work as an accountant in Leeds.", "I'm a lawyer, working in Leeds.", "lawyer"),
    ("Our bedroom walls are painted blue.", "We painted the bedroom walls yellow.", "yellow"),
    ("My daughter plays the violin.", "The instrument my daughter plays is the flute.", "flute"),
    ("I always book an aisle seat on the train.", "On trains I pick a window seat.", "window"),
]
PARAPHRASES = [
    ("Heights scare me.", "I'm afraid of heights."),
    ("I'm allergic to cats.", "Cats give me an allergy."),
    ("My sister lives in Denver.", "Denver is where my sister lives."),
    ("Our dog is called Biscuit.", "We named our dog Biscuit."),
]


@pytest.fixture(scope="module")
def pair_memory(tmp_path_factory, embedder):
    def write(first: str, later: str):
        with Memory(tmp_path_factory.mktemp("swap") / "m.db", embedder=embedder) as mem:
            for text in GATE_FILLER:
                mem.add(text, user_id="u")
            (a,) = mem.add(first, user_id="u")
            (d,) = mem.add(later, user_id="u")
            return a, d, {it.text for it in mem.get_all(user_id="u")}, mem.links(d.memory_id) if d.event == "ADD" else []
    return write


@pytest.mark.parametrize("first, later, value", CHANGES)
def test_a_value_put_in_a_rebuilt_sentence_is_stored(pair_memory, first, later, value):
    a, d, texts, links = pair_memory(first, later)
    assert d.event == "ADD" and later in texts, d.reason
    assert f"puts {value!r} where it says" in d.reason and "reads as another value" in d.reason, d.reason
    # the newer value is linked as the newer version of the memory it would have been folded into
    assert (a.memory_id, "updates") in {(other, kind) for other, kind, _ in links}, links


@pytest.mark.parametrize("first, later", PARAPHRASES)
def test_a_paraphrase_still_folds(pair_memory, first, later):
    a, d, texts, _ = pair_memory(first, later)
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason
    assert later not in texts


class Table:
    """An embedder whose rows the test sets by text; counts the texts it was asked for."""

    def __init__(self, rows: dict[str, np.ndarray]) -> None:
        self.rows = rows
        self.asked: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return np.stack([self.rows[t] for t in texts]).astype(np.float32)


def _unit(cos: float) -> np.ndarray:
    """A unit vector at cosine ``cos`` to e0."""
    return np.array([cos, np.sqrt(max(0.0, 1 - cos * cos)), 0.0], dtype=np.float32)


MEMORY = "I play the cello in the orchestra."
TEXT = "In the orchestra my instrument is the viola."
E0 = np.array([1, 0, 0], dtype=np.float32)


def test_the_largest_rise_names_the_swap():
    variants = {TEXT.replace("viola", "play"): _unit(0.70), TEXT.replace("viola", "cello"): _unit(0.92),
                TEXT.replace("instrument", "play"): _unit(0.76), TEXT.replace("instrument", "cello"): _unit(0.74)}
    swap = swapped_value(TEXT, MEMORY, cosine=0.74, memory_vector=E0, embed=Table(variants))
    assert swap is not None and (swap.said, swap.memory_says) == ("viola", "cello")
    assert swap.cosine == pytest.approx(0.74) and swap.cosine_back == pytest.approx(0.92, abs=1e-6)


def test_a_rise_below_the_bar_is_no_swap():
    table = Table({})
    table.rows = {t: _unit(0.74 + SWAP_RISE / 2) for t in [
        TEXT.replace("viola", "play"), TEXT.replace("viola", "cello"),
        TEXT.replace("instrument", "play"), TEXT.replace("instrument", "cello")]}
    assert swapped_value(TEXT, MEMORY, cosine=0.74, memory_vector=E0, embed=table) is None
    assert len(table.asked) == 4


@pytest.mark.parametrize("text, memory", [
    ("I play the cello in the orchestra.", MEMORY),                          # no new word
    ("I play the cello in the orchestra on Sundays.", MEMORY),               # a new word, none dropped
    ("Saxophone, bassoon, oboe and tuba lessons all week long.", MEMORY),    # more new words than a swap
])
def test_no_swap_is_read_where_none_can_be_and_nothing_is_embedded(text, memory):
    table = Table({})
    assert swapped_value(text, memory, cosine=0.8, memory_vector=E0, embed=table) is None
    assert table.asked == []


words = st.lists(st.sampled_from(["cello", "viola", "harp", "drum", "flute", "band", "plays", "loud", "my",
                                  "the", "in", "orchestra", "Sam", "every", "week"]), min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(words, words, st.floats(0.0, 1.0))
def test_every_variant_swaps_one_word_and_a_swap_clears_the_bar(text_words, memory_words, cosine):
    text, memory = " ".join(text_words), " ".join(memory_words)
    rng = np.random.default_rng(len(text) * 31 + len(memory))

    def embed(texts):
        embed.asked += texts
        rows = rng.standard_normal((len(texts), 3)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    embed.asked = []
    swap = swapped_value(text, memory, cosine=cosine, memory_vector=E0, embed=embed)
    assert len(embed.asked) <= MOST_NEW * MOST_DROPPED
    for variant in embed.asked:
        assert variant != text and len(variant.split()) == len(text.split())
    if swap is not None:
        assert swap.cosine_back - cosine >= SWAP_RISE
        assert swap.said in text_words and swap.memory_says in memory_words
