"""The one "newer version of" rule, as each of its three callers asks it.

Each caller's answers are checked against the formula it used before the
rule was shared (the gate's ``says_more``, the read path's similarity
pairing, consolidation's verdict), so that sharing the rule changed none.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import _core
from memsieve.consolidation.information import TermView
from memsieve.gate.config import GateConfig
from memsieve.gate.profiles.kde import IDF_PRIOR, IDF_PRIOR_WEIGHT, counted_pairs, unsaid_values
from memsieve.gate.scope_gate import GateScore, Readings
from memsieve.gate.versions import (CHANGED_COS_OFFSET, CHANGED_RELEVANCE_GAP, VERSION_RELEVANCE_GAP, VersionBars,
                                    VersionEvidence, newer_version_reason, older_may_leave, other_subject)
from memsieve.read.versions import Version, version_groups, version_pairs
from memsieve.text.cues import find_stated_values
from memsieve.text.fold import without_list_marks
from memsieve.text.lexicon import ENGLISH

change_cues, subject_terms = ENGLISH.cues, ENGLISH.subject_terms

WORDS = ["I", "my", "sister", "Lena", "work", "at", "Fenwick", "Insurance", "quit", "now", "not", "car", "blue",
         "sold", "the", "hatchback", "moved", "to", "Lisbon", "3pm", "4pm", "meeting", "is", "dog", "Biscuit",
         "anymore", "instead", "drive", "electric"]
texts_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["now", "quit", "not", "sold"]), max_size=3, unique=True),
       st.one_of(st.just(math.nan), st.floats(0.0, 1.0)), st.one_of(st.just(math.nan), st.floats(0.0, 1.5)))
def test_says_more_is_a_change_said_or_information_at_the_bar(changes, information, info_tau):
    score = GateScore(novelty=0.1, tau=0.2, delta=0.05, kappa=1.0, nearest_seq=1, nearest_cos=0.9, route="BAND",
                      information=information, changes=tuple(sorted(changes)), info_tau=info_tau)
    assert score.says_more == (bool(changes) or information >= info_tau)


def _pairs_before(known, texts, vectors, query, version_cos, recency):
    """The read path's similarity pairing as it was written before the rule was shared, less the
    pairs about two different things (``other_subject``), which are never versions since."""
    m = np.ascontiguousarray(np.stack([vectors[s] for s in known]), dtype=np.float32)
    sims = m @ m.T
    rel = m @ query
    gap = np.abs(rel[:, None] - rel[None, :])
    slots = [set(_core.tokenize(texts[s])) - subject_terms(texts[s]) for s in known]
    said = [change_cues(texts[s]) for s in known]
    close = np.argwhere(np.triu((sims >= version_cos) & (gap <= VERSION_RELEVANCE_GAP), k=1))
    pairs = {(known[i], known[j]) for i, j in close if slots[i] & slots[j] or said[i] ^ said[j]}
    for i in range(len(known)):
        for j in range(i + 1, len(known)):
            if sims[i, j] < version_cos - CHANGED_COS_OFFSET or gap[i, j] > CHANGED_RELEVANCE_GAP:
                continue
            new, old = (i, j) if recency[known[i]] > recency[known[j]] else (j, i)
            if said[new] - said[old] and slots[new] & slots[old]:
                pairs.add((known[i], known[j]))
    return {(a, b) for a, b in pairs if not other_subject(texts[a], texts[b])}


@settings(max_examples=150, deadline=None)
@given(st.lists(texts_st, min_size=2, max_size=7), st.integers(0, 2**32 - 1),
       st.sampled_from([0.2, 0.3, 0.4, 0.55, 0.7]))
def test_read_pairing_is_what_it_was(texts, seed, version_cos):
    rng = np.random.default_rng(seed)
    # Three dimensions: random unit vectors are often close, so every clause is met somewhere.
    vec = rng.normal(size=(len(texts), 3)).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    query = rng.normal(size=3).astype(np.float32)
    query /= np.linalg.norm(query)
    days = rng.permutation(len(texts)) + 1
    ranked = [Version(key=10 + k, valid_from=f"2024-01-{days[k]:02d}", created_at="2026-01-01", order=10 + k)
              for k in range(len(texts))]
    by_key = {v.key: t for v, t in zip(ranked, texts)}
    vectors = {v.key: vec[k] for k, v in enumerate(ranked)}
    got = version_pairs(ranked, texts=by_key, vectors=vectors, query=query, version_cos=version_cos)
    want = _pairs_before([v.key for v in ranked], by_key, vectors, query, version_cos,
                         {v.key: v.recency() for v in ranked})
    assert set(got) == want


def test_read_pairing_needs_a_query_and_a_bar_below_one():
    ranked = [Version(key=k, valid_from=None, created_at=f"2026-01-0{k}", order=k) for k in (1, 2)]
    texts = {1: "I work at Fenwick", 2: "I quit Fenwick now"}
    same = np.array([1.0, 0.0, 0.0], np.float32)
    vectors = {1: same, 2: same}
    assert version_pairs(ranked, texts=texts, vectors=vectors, query=same, version_cos=0.4) == [(1, 2)]
    assert version_pairs(ranked, texts=texts, vectors=vectors, query=None, version_cos=0.4) == []
    assert version_pairs(ranked, texts=texts, vectors=vectors, query=same, version_cos=1.0) == []
    assert version_pairs(ranked, texts=texts, vectors={1: same}, query=same, version_cos=0.4) == []


def test_each_clause_names_itself():
    bars = VersionBars(info_tau=0.15)
    assert newer_version_reason(VersionEvidence(information=0.2), bars=bars) == "information"
    assert newer_version_reason(VersionEvidence(new_values=("4pm",)), bars=bars) == "value"
    assert newer_version_reason(VersionEvidence(said=frozenset({"quit"})), bars=bars) == "change"
    close = VersionEvidence(cosine=0.9, relevance_gap=0.1, shares_slot=True)
    assert newer_version_reason(close, bars=bars) == "close"
    assert newer_version_reason(VersionEvidence(information=0.1), bars=bars) is None


def test_a_measured_bar_holds_and_an_unmeasured_one_does_not():
    bars = VersionBars.at_read(0.4)
    said = frozenset({"quit"})
    # A change about another slot, or below the change bar, is no version.
    assert newer_version_reason(VersionEvidence(said=said, shares_slot=False), bars=bars) is None
    far = VersionEvidence(said=said, shares_slot=True, cosine=0.25, relevance_gap=0.1)
    assert newer_version_reason(far, bars=bars) is None
    assert newer_version_reason(VersionEvidence(said=said, shares_slot=True, cosine=0.35, relevance_gap=0.1),
                                bars=bars) == "change"
    # Close alone, without a shared slot or a change on either side, is no version.
    assert newer_version_reason(VersionEvidence(cosine=0.9, relevance_gap=0.1, shares_slot=False), bars=bars) is None
    # The older's change counts for closeness: either side may say it.
    older_said = VersionEvidence(unsaid=said, cosine=0.9, relevance_gap=0.1, shares_slot=False)
    assert newer_version_reason(older_said, bars=bars) == "close"
    # Without a query, nothing is close.
    assert newer_version_reason(VersionEvidence(cosine=0.99, shares_slot=True), bars=bars) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=12), st.randoms())
def test_groups_do_not_depend_on_the_order_of_the_pairs(pairs, rnd):
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    keys = list(range(8))
    assert version_groups(keys, pairs) == version_groups(keys, shuffled)


class _Gate:
    """A scope's keyword index, readings and lexicon, as a consolidation ``TermView`` reads them."""

    def __init__(self, texts):
        self.keywords = _core.KeywordIndex()
        self.keywords.add_many(np.arange(len(texts), dtype=np.int64), texts)
        self.lexicon = ENGLISH
        self.lock = threading.RLock()  # as ScopeGate's: a TermView reads under it
        self._readings = {k: Readings(cues=ENGLISH.cues(t), counts=counted_pairs(_core.tokenize_kinds(
            without_list_marks(t))), named=ENGLISH.identifying_values(t), stated=find_stated_values(t))
            for k, t in enumerate(texts)}

    def readings_of(self, seq):
        return self._readings.get(seq)


@settings(max_examples=200, deadline=None)
@given(texts_st, texts_st, st.sampled_from([0.05, 0.15, 0.5, 2.0]))
def test_consolidation_asks_the_gates_formula_and_the_one_rule(a, b, info_tau):
    gate = _Gate([a, b, "the dog", "my car"])
    config = GateConfig(info_tau=info_tau)
    view = TermView(gate, config)
    verdict = view.verdict((0, a), (1, b))
    netted, _ = gate.keywords.info_novelty_netted(
        b, [0], 0, rarity=ENGLISH.rarity, w_number=config.info_number_weight, w_name=config.info_name_weight,
        w_word=config.info_word_weight, idf_prior=IDF_PRIOR, prior_weight=IDF_PRIOR_WEIGHT)
    forward = view.evidence((1, b), (0, a))
    assert forward.information == netted
    assert forward.new_values == unsaid_values(gate, b, 0)
    bars = VersionBars(info_tau=info_tau)
    assert verdict.versions == (newer_version_reason(forward, bars=bars) is not None)
    # ... and what the gate's fold check reads in the two texts (doers, order, subject, marks) keeps them apart too.
    assert verdict.distinct == (not older_may_leave(forward, view.evidence((0, a), (1, b), words=True), bars=bars)
                                or view.told_apart(a, b, versions=verdict.versions))


@pytest.mark.parametrize("older, newer, leaves", [
    ("My gate code is 4471.", "My gate code is 4472.", True),
    ("I have 2 cats.", "I have 3 cats.", True),
    ("Room 101 has the colour printer.", "Room 102 has the colour printer.", False),
    ("Bus 12 stops at the library.", "Bus 14 stops at the library.", False),
    # A correction with no new terms is a version, as at write (a change said).
    ("I work at the bakery on Elm Street.", "I don't work at the bakery on Elm Street anymore.", True),
    # The older holds a value the newer does not replace: both stay.
    ("Melanie has been married for 5 years.", "Melanie loved her wedding day.", False),
])
def test_the_older_leaves_only_when_nothing_true_is_lost(older, newer, leaves):
    view = TermView(_Gate([older, newer, "the dog", "my car"]), GateConfig())
    assert view.verdict((0, older), (1, newer)).distinct == (not leaves)


def test_another_subject_is_never_a_newer_version():
    e = VersionEvidence(information=1.0, new_values=("102",), said=frozenset({"now"}), other_subject=True)
    assert newer_version_reason(e, bars=VersionBars(info_tau=0.15)) is None
    assert other_subject("Room 101 has the colour printer.", "Room 102 has the colour printer.")
    assert not other_subject("My gate code is 4471.", "My gate code is 4472.")
    assert not other_subject("I live in apartment 4B.", "I live in apartment 7C.")
