"""The one "newer version of" rule, as each of its three callers asks it.

Each caller's answers are checked against the formula it used before the
rule was shared (the gate's ``says_more``, the read path's similarity
pairing, consolidation's verdict), so that sharing the rule changed none.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import _core
from memsieve.consolidation.information import TermView, pair_information
from memsieve.gate.config import GateConfig
from memsieve.gate.scope_gate import GateScore
from memsieve.read.versions import (CHANGED_COS_OFFSET, CHANGED_RELEVANCE_GAP, VERSION_RELEVANCE_GAP, Version,
                                    VersionBars, VersionEvidence, newer_version_reason, version_groups,
                                    version_pairs)
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
    """The read path's similarity pairing as it was written before the rule was shared."""
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
    return pairs


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
    """A scope's IDF as a consolidation ``TermView`` reads it."""

    def __init__(self, texts):
        self.index = _core.KeywordIndex()
        self.index.add_many(np.arange(len(texts), dtype=np.int64), texts)

    def term_idf(self, term):
        return float(self.index.idf(term))


@settings(max_examples=200, deadline=None)
@given(texts_st, texts_st, st.sampled_from([0.05, 0.15, 0.5, 2.0]))
def test_consolidation_versions_are_a_differing_value_or_information_at_the_bar(a, b, info_tau):
    view = TermView(_Gate([a, b, "the dog", "my car"]), GateConfig(info_tau=info_tau))
    verdict = view.verdict((1, a), (2, b))
    ta, tb = view.terms(1, a), view.terms(2, b)
    differing = sorted(t for t in set(ta) ^ set(tb) if (ta.get(t) or tb.get(t)) in ("number", "name"))
    assert verdict.differing == tuple(differing)
    assert verdict.information == max(view.information(ta, tb), view.information(tb, ta))
    assert verdict.versions == (bool(differing) or verdict.information >= info_tau)
    assert view.verdict((2, b), (1, a)) == verdict


def test_pair_information_is_the_weighted_share_the_other_lacks():
    idf = {"meeting": 1.0, "3pm": 2.0, "room": 0.0}.__getitem__
    weights = {"word": 0.5, "number": 2.0, "name": 1.5}
    mine = {"meeting": "word", "3pm": "number", "room": "word"}
    got = pair_information(mine, {"meeting"}, idf=idf, weights=weights)
    assert got == (2.0 * 2.0 + 0.5 * 1e-3) / (0.5 * 1.0 + 2.0 * 2.0 + 0.5 * 1e-3)
    assert pair_information(mine, mine, idf=idf, weights=weights) == 0.0
    assert pair_information({}, mine, idf=idf, weights=weights) == 0.0
