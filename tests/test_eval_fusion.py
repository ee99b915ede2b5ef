"""benches/tune_fusion.py: the fusion rules, computed by hand on small ranked lists."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benches" / "tune_fusion.py"
_spec = importlib.util.spec_from_file_location("tune_fusion", _PATH)
tune = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tune)

DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.5)]
KEYWORD = [("c", 12.0), ("d", 6.0), ("a", 3.0)]


def _fuser(**params):
    return next(f for p, f in tune.variants() if p == params)


def test_the_grid_is_every_variant_once():
    grid = tune.variants()
    assert len(grid) == 4 + 2 * 11 and len({tune.label(p) for p, _f in grid}) == len(grid)


def test_rrf_sums_reciprocal_ranks():
    # a: 1/(10+1) + 1/(10+3); c: 1/(10+3) + 1/(10+1); b: 1/12; d: 1/12. Ties go to the better dense rank.
    assert _fuser(fusion="rrf", k=10)(DENSE, KEYWORD) == ["a", "c", "b", "d"]


def test_minmax_weight_moves_the_order_between_the_lists():
    # minmax dense: a 1, b 0.75, c 0; keyword: c 1, d 1/3, a 0 (absent: 0).
    assert _fuser(fusion="minmax", w=1.0)(DENSE, KEYWORD)[:3] == ["a", "b", "c"]  # dense alone
    assert _fuser(fusion="minmax", w=0.0)(DENSE, KEYWORD)[:2] == ["c", "d"]  # keyword alone
    # w=0.5: a 0.5, b 0.375, c 0.5, d 1/6 -> a and c tie, a has the better dense rank.
    assert _fuser(fusion="minmax", w=0.5)(DENSE, KEYWORD) == ["a", "c", "b", "d"]


def test_z_scores_give_absentees_the_lowest_value_of_the_list():
    fused = _fuser(fusion="z", w=0.5)(DENSE, [("d", 5.0)])
    # A one-item list has no spread: its member gets 0 and everyone else -1, so d still counts.
    assert fused[0] == "a" and set(fused) == {"a", "b", "c", "d"}
    assert _fuser(fusion="z", w=0.5)(DENSE, []) == ["a", "b", "c"]


def test_the_winner_rule_is_the_mean_of_micro_and_macro_over_streams():
    key = tune.KEYS[0]
    entry = {"turns": {"micro": {key: 0.6}, "macro": {key: 0.4}},
             "observations": {"micro": {key: 0.5}, "macro": {key: 0.3}}}
    assert tune.rule_value(entry, ["turns", "observations"]) == pytest.approx(0.45)


def test_paired_interval_of_a_ranking_against_itself_is_zero():
    rows = {"turns": [{"category": c, tune.KEYS[0]: v} for c, v in ((1, 1.0), (2, 0.0), (4, 0.5))]}
    better = {"turns": [{**r, tune.KEYS[0]: 1.0} for r in rows["turns"]]}
    same = tune.paired_interval(rows, rows, resamples=50)
    assert same["diff"] == same["lo"] == same["hi"] == 0.0 and same["p_le_0"] == 1.0
    up = tune.paired_interval(better, rows, resamples=50)
    assert up["diff"] > 0 and up["lo"] >= 0.0 and up["p_le_0"] < 1.0
