"""Metric functions on hand-built cases."""

from __future__ import annotations

import pytest

from memsieve.eval.metrics import STOPWORDS, aggregate, answer_recall, content_tokens, evidence_recall, percentile


def test_normalization_lowercases_strips_punctuation_and_stopwords():
    assert content_tokens("The Sunday before 25 May, 2023!") == ["sunday", "25", "may", "2023"]
    assert content_tokens("Sweden's capital, isn't it?") == ["sweden", "capital", "isn"]
    assert content_tokens(None) == [] and content_tokens("") == []
    assert "may" not in STOPWORDS  # the month must survive
    assert {"the", "a", "of", "was"} <= STOPWORDS


def test_answer_recall_counts_distinct_content_tokens_in_top_k_only():
    texts = ["Caroline: I went to the LGBTQ support group yesterday.", "Melanie: painting a lake sunrise"]
    assert answer_recall("LGBTQ support group", texts, 1) == 1.0
    assert answer_recall("a lake sunrise", texts, 1) == 0.0  # only in the 2nd text
    assert answer_recall("a lake sunrise", texts, 2) == 1.0
    assert answer_recall("sunrise and sunset", texts, 2) == pytest.approx(0.5)
    assert answer_recall("Sunrise, sunrise, SUNRISE", texts, 2) == 1.0  # repeats count once
    assert answer_recall("7 May 2023", ["on 8 May 2023"], 1) == pytest.approx(2 / 3)


def test_answer_recall_is_none_without_content_tokens():
    assert answer_recall(None, ["anything"], 5) is None
    assert answer_recall("the of a", ["the of a"], 5) is None


def test_evidence_recall_credits_only_the_given_sources_within_k():
    retrieved = [{"D1:1"}, set(), {"D2:3", "D2:4"}]
    assert evidence_recall(["D1:1", "D2:3"], retrieved, 1) == pytest.approx(0.5)
    assert evidence_recall(["D1:1", "D2:3"], retrieved, 3) == 1.0
    assert evidence_recall(["D9:9"], retrieved, 3) == 0.0
    assert evidence_recall([], retrieved, 3) is None


def test_strict_and_provenance_differ_when_a_noop_folded_the_evidence_in():
    own = [{"D1:1"}]
    provenance = [{"D1:1", "D1:7"}]  # a NOOP from D1:7 touched this memory
    assert evidence_recall(["D1:7"], own, 1) == 0.0
    assert evidence_recall(["D1:7"], provenance, 1) == 1.0


def test_aggregate_micro_macro_and_adversarial_exclusion():
    rows = [
        {"category": 1, "answer_recall@10": 1.0, "evidence_recall@10": 1.0},
        {"category": 1, "answer_recall@10": 0.0, "evidence_recall@10": 0.0},
        {"category": 1, "answer_recall@10": 1.0, "evidence_recall@10": None},
        {"category": 2, "answer_recall@10": 0.0, "evidence_recall@10": 1.0},
        {"category": 5, "answer_recall@10": 1.0, "evidence_recall@10": 0.0},  # must not enter answer means
    ]
    agg = aggregate(rows, ["answer_recall@10", "evidence_recall@10"])
    assert agg["micro"]["answer_recall@10"] == pytest.approx(2 / 4)
    assert agg["micro"]["n_answer_recall@10"] == 4
    assert agg["macro"]["answer_recall@10"] == pytest.approx((2 / 3 + 0.0) / 2)
    assert agg["per_category"]["5"]["answer_recall@10"] is None
    assert agg["per_category"]["5"]["n"] == 1
    assert agg["micro"]["evidence_recall@10"] == pytest.approx(2 / 4)
    assert agg["macro"]["evidence_recall@10"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)


def test_percentile_interpolates():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 50) is None
