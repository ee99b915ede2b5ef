"""Fusion of a dense and a keyword ranking: the functions the default search and the tuning sweep share."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsieve.errors import ConfigError
from memsieve.read.fusion import Fusion, rrf, weighted, zscore

DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
KEYWORD = [("c", 12.0), ("d", 3.0)]


def test_rrf_by_hand():
    out = dict(rrf(DENSE, KEYWORD, k=10))
    assert out["c"] == pytest.approx(1 / 13 + 1 / 11)
    assert out["a"] == pytest.approx(1 / 11) and out["d"] == pytest.approx(1 / 12)
    # b (dense rank 2) and d (keyword rank 2) tie; the better dense rank goes first
    assert [k for k, _ in rrf(DENSE, KEYWORD, k=10)] == ["c", "a", "b", "d"]


def test_weighted_z_gives_an_absent_member_the_lowest_z():
    zd, low_d = zscore([s for _, s in DENSE])
    zk, low_k = zscore([s for _, s in KEYWORD])
    out = dict(weighted(DENSE, KEYWORD, w=0.4, norm="z"))
    assert out["a"] == pytest.approx(0.4 * zd[0] + 0.6 * low_k)
    assert out["d"] == pytest.approx(0.4 * low_d + 0.6 * zk[1])
    assert out["c"] == pytest.approx(0.4 * zd[2] + 0.6 * zk[0])


def test_weight_one_is_the_dense_order_and_zero_the_keyword_order():
    assert [k for k, _ in weighted(DENSE, KEYWORD, w=1.0, norm="minmax")][:3] == ["a", "b", "c"]
    # w = 0: only keyword scores count; d's lowest z equals an absentee's, so it ties with a and b
    assert [k for k, _ in weighted(DENSE, KEYWORD, w=0.0, norm="z")] == ["c", "a", "b", "d"]


def test_equal_scores_and_empty_lists():
    assert weighted([], [], w=0.5, norm="z") == []
    out = weighted([("x", 1.0), ("y", 1.0)], [], w=0.5, norm="z")
    assert [k for k, _ in out] == ["x", "y"]  # ties keep the dense order


@given(st.lists(st.tuples(st.integers(0, 30), st.floats(-5, 5)), max_size=12, unique_by=lambda p: p[0]),
       st.lists(st.tuples(st.integers(0, 30), st.floats(0, 20)), max_size=12, unique_by=lambda p: p[0]),
       st.sampled_from(["rrf", "minmax", "z"]), st.floats(0, 1))
def test_every_input_member_appears_once_with_a_finite_score(dense, keyword, method, w):
    out = Fusion(method=method, weight=w).fuse(dense, keyword)
    assert sorted(k for k, _ in out) == sorted({k for k, _ in dense} | {k for k, _ in keyword})
    assert all(math.isfinite(s) for _, s in out)
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True)


@pytest.mark.parametrize("kwargs", [{"method": "max"}, {"weight": 1.5}, {"depth": 0}, {"rrf_k": True}])
def test_bad_fusion_settings_are_refused(kwargs):
    with pytest.raises(ConfigError):
        Fusion(**kwargs)
