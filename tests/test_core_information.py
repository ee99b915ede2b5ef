"""The Rust netting of the information term equals the gate's former Python netting bit for bit.

``KeywordIndex.info_novelty_netted`` (and the pure ``net_information``) moves the
gate's substitution netting into the Rust core; until the gate calls it, the
Python method is the reference. Texts are LoCoMo-like: first names, places,
dates, times and amounts among common and rare words, with repeats that change
a term's kind ("Rose" the name, "rose" the word) and the odd non-ASCII word.
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memsieve
from memsieve import _core
from memsieve.gate.config import GateConfig
from memsieve.gate.profiles.kde import IDF_PRIOR as _IDF_PRIOR, IDF_PRIOR_WEIGHT as _IDF_PRIOR_WEIGHT
from memsieve.gate.scope_gate import ScopeGate, new_threshold
from memsieve.text.lexicon import ENGLISH

_rarity_of = ENGLISH.rarity

# Under qemu (scripts/test-aarch64.sh sets MEMSIEVE_QEMU) each example costs ~30x: fewer examples
# there still check the aarch64 floats; the native run keeps the full count.
EXAMPLES, GATE_EXAMPLES = (20, 10) if os.environ.get("MEMSIEVE_QEMU") else (150, 60)


def reference_netting(keywords, text: str, nearest: int, information: float, c: GateConfig) -> float:
    """The netting as the gate computed it in Python before it moved to Rust: the oracle.

    New plain words of the text are paid for by the nearest memory's words it
    dropped; new numbers and names count in full. Sums run in the text's and
    the memory's own token order, as the Rust function's do.
    """
    weights = {"number": c.info_number_weight, "name": c.info_name_weight, "word": c.info_word_weight}
    mine = {term: (kind, surface) for term, surface, kind in _core.tokenize_kinds(text)}
    theirs = dict.fromkeys(keywords.tokens_of(nearest))
    n = len(keywords)
    kidf, prior, den = keywords.idf, _IDF_PRIOR_WEIGHT * _IDF_PRIOR, n + _IDF_PRIOR_WEIGHT
    total = new_values = new_words = 0.0
    for term, (kind, surface) in mine.items():
        weight = weights[kind] * ((n * kidf(term) + prior) / den)
        total += weight
        if term in theirs:
            continue
        if kind == "word":
            new_words += weight * _rarity_of(surface)
        else:
            new_values += weight
    if total <= 0.0:
        return information
    ww = c.info_word_weight
    dropped = sum(ww * ((n * kidf(t) + prior) / den) for t in theirs
                  if t not in mine and not any(ch.isdigit() for ch in t))
    return min(information, (new_values + max(0.0, new_words - dropped)) / total)

D = 32

NAMES = ["Caroline", "Melanie", "Rose", "Jon", "Gina", "Lisbon", "Porto", "Sweden", "TAP", "Dr.", "St.", "U.S."]
NUMBERS = ["3", "2019", "3pm", "7th", "May 7", "12.5", "$40", "two", "1990s", "٣", "4:30", "2nd"]
WORDS = ["i", "my", "we", "the", "a", "is", "went", "camping", "mountains", "last", "week", "enjoys",
         "kids", "forest", "brother", "pilot", "flies", "afraid", "heights", "scare", "me", "adopted",
         "greyhound", "called", "biscuit", "painting", "sunrise", "lake", "pottery", "class", "rose",
         "jon", "new", "job", "café", "naïve", "meeting", "moved", "bakery", "violin", "marathon",
         "sunflowers", "adoption", "agency", "counseling", "transgender", "support", "group", "and",
         "of", "in", "at", "on", "with", "her", "his", "recently", "finally", "yesterday", "again"]
PUNCT = ["", "", "", ",", ".", "!", "?", "'s"]

# On Python >= 3.12 sum() of floats is compensated (Neumaier), so the reference's
# `dropped` may differ from a left-to-right sum in the last bits; the netting
# follows the plain order (this project's Python, and the gate's own `total +=`).
EXACT = sys.version_info < (3, 12)


def same(a: float, b: float) -> bool:
    if EXACT:
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == pytest.approx(b, rel=1e-12, abs=1e-15)


words = st.sampled_from(WORDS)
token = st.one_of(words, words, words, st.sampled_from(NAMES), st.sampled_from(NUMBERS))
sentence = st.builds(
    lambda toks, punct: " ".join(t + p for t, p in zip(toks, punct)),
    st.lists(token, min_size=0, max_size=16),
    st.lists(st.sampled_from(PUNCT), min_size=16, max_size=16),
)


def embed(text: str) -> np.ndarray:
    """A bag of hashed words, so texts that share words are near each other."""
    v = np.zeros(D)
    for w in text.lower().split():
        h = int(hashlib.sha256(w.strip(",.!?'s").encode()).hexdigest()[:8], 16)
        v += np.random.default_rng(h).standard_normal(D)
    if not v.any():
        v[0] = 1.0
    return (v / np.linalg.norm(v)).astype(np.float32)


def gate_of(texts: list[str], config: GateConfig | None = None) -> ScopeGate:
    config = config or GateConfig()
    g = ScopeGate(config, D, threshold=new_threshold(config), sage_tau=None, revision=0)
    seqs = np.arange(1, len(texts) + 1, dtype=np.int64)
    matrix = np.stack([embed(t) for t in texts]) if texts else np.zeros((0, D), np.float32)
    g.load(seqs, matrix, np.full(len(texts), np.nan), texts)
    return g


def weights(c: GateConfig) -> dict[str, float]:
    return {"w_number": c.info_number_weight, "w_name": c.info_name_weight, "w_word": c.info_word_weight,
            "idf_prior": _IDF_PRIOR, "prior_weight": _IDF_PRIOR_WEIGHT}


def python_information(g: ScopeGate, text: str, neighbours: list[int], nearest: int | None) -> tuple[float, list[str]]:
    """What the gate computed for the information term in Python: the share, then its netting."""
    info, new = g.keywords.info_novelty(text, neighbours, **weights(g.config))
    if info > 0 and nearest is not None:
        info = reference_netting(g.keywords, text, int(nearest), info, g.config)
    return info, new


def check(g: ScopeGate, text: str, neighbours: list[int], nearest: int | None) -> None:
    want, want_new = python_information(g, text, neighbours, nearest)
    got, new = g.keywords.info_novelty_netted(text, neighbours, nearest, rarity=_rarity_of, **weights(g.config))
    assert same(got, want), (text, neighbours, nearest, got, want)
    assert new == want_new
    # A dict of the text's word surfaces serves as well as the callable.
    surfaces = {s: _rarity_of(s) for _, s, kind in _core.tokenize_kinds(text) if kind == "word"}
    got_dict, _ = g.keywords.info_novelty_netted(text, neighbours, nearest, rarity=surfaces, **weights(g.config))
    assert struct.pack("<d", got_dict) == struct.pack("<d", got)
    if nearest is not None:
        raw, _ = g.keywords.info_novelty(text, neighbours, **weights(g.config))
        kw = g.keywords
        pure = _core.net_information(raw, _core.tokenize_kinds(text), kw.tokens_of(nearest), n_docs=len(kw),
                                     idf=kw.idf, rarity=_rarity_of, **weights(g.config))
        assert struct.pack("<d", pure) == struct.pack("<d", got if raw > 0 else raw)


@settings(max_examples=EXAMPLES, deadline=None)
@given(corpus=st.lists(sentence, min_size=1, max_size=12), candidates=st.lists(sentence, min_size=1, max_size=4),
       data=st.data())
def test_netting_equals_the_gate_bit_for_bit(corpus: list[str], candidates: list[str], data: st.DataObject) -> None:
    g = gate_of(corpus)
    ids = list(range(1, len(corpus) + 1))
    for text in candidates:
        neighbours = data.draw(st.lists(st.sampled_from(ids), min_size=0, max_size=5, unique=True))
        nearest = data.draw(st.one_of(st.none(), st.sampled_from(ids)))
        check(g, text, neighbours, nearest)


@settings(max_examples=GATE_EXAMPLES, deadline=None)
@given(corpus=st.lists(sentence, min_size=2, max_size=30), text=sentence)
def test_a_real_gate_scores_the_information_the_netting_gives(corpus: list[str], text: str) -> None:
    """The neighbours and nearest memory of ScopeGate.score itself, and its final information."""
    g = gate_of(corpus)
    c = g.config
    v = embed(text)
    score = g.score(v, text)
    r = g.state.score(v, k=c.k, kappa=g.current_kappa())
    neighbours = list(r.top_ids)[: c.info_k]
    got, new = g.keywords.info_novelty_netted(text, neighbours, r.nearest_id, rarity=_rarity_of, **weights(c))
    assert same(got, score.information), (text, got, score.information)
    assert tuple(new) == score.new_terms
    check(g, text, neighbours, r.nearest_id)


LOCOMO = [
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted.",
    "Melanie painted a sunrise over the lake last year.",
    "Melanie is taking a pottery class with her kids.",
    "Caroline is researching adoption agencies.",
    "Jon lost his job as a banker and opened a dance studio.",
    "Gina launched an online clothing store in 2022.",
    "My brother is a pilot, he flies for TAP.",
    "I'm afraid of heights.",
    "We have a greyhound called Biscuit.",
]


@pytest.mark.parametrize("text,nearest", [
    ("Heights scare me.", 8),
    ("Melanie painted a lake at sunrise.", 2),
    ("Melanie painted a sunrise over the lake in 2021.", 2),
    ("Caroline is looking into adoption agencies again.", 4),
    ("Jon opened a dance studio after losing his banking job.", 5),
    ("Rose and rose, Rose.", 1),
    ("", 1),
])
def test_locomo_turns(text: str, nearest: int) -> None:
    g = gate_of(LOCOMO)
    for neighbours in ([nearest], [nearest, 1, 2], []):
        check(g, text, neighbours, nearest)


def test_errors_and_arguments() -> None:
    g = gate_of(LOCOMO)
    kw = g.keywords
    with pytest.raises(memsieve.StateError, match="id 99 is not in the keyword index; add"):
        kw.info_novelty_netted("a new violin", [1], 99, rarity=_rarity_of)
    # No positive share or no nearest memory: the plain info_novelty, rarity never read.
    assert kw.info_novelty_netted("a new violin", [1], None, rarity={}) == kw.info_novelty("a new violin", [1])
    with pytest.raises(memsieve.ConfigError, match='rarity has no entry for "new"'):
        kw.info_novelty_netted("a new violin", [1], 1, rarity={})
    with pytest.raises(memsieve.DtypeError, match="rarity must be a callable or a mapping"):
        kw.info_novelty_netted("a new violin", [1], 1, rarity=3)
    with pytest.raises(memsieve.DtypeError, match=r'rarity\["new"\] must be a float' ):
        kw.info_novelty_netted("a new violin", [1], 1, rarity=lambda s: "x")
    with pytest.raises(ZeroDivisionError):  # the caller's own exception passes through
        kw.info_novelty_netted("a new violin", [1], 1, rarity=lambda s: 1 / 0)
    with pytest.raises(memsieve.DtypeError, match="text_terms must be"):
        _core.net_information(0.5, [("a", "a", "verb")], [], n_docs=1, idf={}, rarity={})
    with pytest.raises(memsieve.ConfigError, match="w_word must be finite and >= 0"):
        _core.net_information(0.5, [], [], n_docs=1, idf={}, rarity={}, w_word=-1.0)
    # Nothing in the text: the share comes back as given.
    assert _core.net_information(0.25, [], ["pilot"], n_docs=3, idf={"pilot": 1.0}, rarity={}) == 0.25
    assert math.isclose(_core.net_information(1.0, [("violin", "violin", "word")], ["pilot"], n_docs=0,
                                              idf={"violin": 9.0, "pilot": 9.0}, rarity={"violin": 0.5}), 0.0)
