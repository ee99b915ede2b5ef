"""summary.json's shape, the goal checks and the computed narrative, on hand-built job results."""

from __future__ import annotations

import json

import pytest

from memsieve.eval import narrative, report
from memsieve.eval.metrics import aggregate

KS = (5, 10)
KEYS = [f"{m}@{k}" for m in ("answer_recall", "evidence_recall", "provenance_recall") for k in KS]


def _result(stream, arm, per_cat, stored, *, gate=None, drop_rate=None, seed=0, headline=True, label=None):
    """A job result whose questions have the given answer recall per category."""
    rows = []
    for cat, values in per_cat.items():
        for v in values:
            rows.append({"category": cat, **{k: v for k in KEYS}})
    agg = aggregate(rows, KEYS)
    return {"key": f"{stream}/{arm}/{label}/{seed}", "stream": stream, "headline": headline,
            "spec": {"arm": arm, "label": label or arm, "gate": gate or {"profile": arm}, "drop_rate": drop_rate,
                     "seed": seed, "llm": False, "params": {}},
            **agg, "stored": stored, "noops": 100 - stored, "events": {"ADD": stored}, "layers": {},
            "candidates": 100, "offered": 100, "llm_calls": 0, "llm_tokens": 0, "llm_faults": 0,
            "ingest_s": 1.0, "search_ms_mean": 2.0, "search_ms_p95": 3.0, "alignment_faults": 0,
            "provenance_checked": 10, "provenance_missing": 0}


BASE = {1: [1.0, 0.5], 2: [1.0, 1.0], 3: [0.5], 4: [1.0, 1.0, 0.0], 5: [0.0]}


def _results(memsieve_cat=None, sage_cat=None):
    out = []
    for stream in ("turns", "observations"):
        ms = {**BASE, **(memsieve_cat or {})}
        sg = {**BASE, **(sage_cat or {})}
        out += [
            _result(stream, "add-all", BASE, 100),
            _result(stream, "maxcos", BASE, 80, gate={"profile": "maxcos", "tau": 0.25}),
            _result(stream, "maxcos", {**BASE, 4: [0.0, 0.0, 0.0]}, 60, gate={"profile": "maxcos", "tau": 0.4},
                    headline=False, label="maxcos cos>=0.6"),
            _result(stream, "sage", sg, 90),
            _result(stream, "memsieve", ms, 70),
        ]
        for seed in (0, 1, 2):
            out.append(_result(stream, "random", {**BASE, 4: [1.0, 0.0, 0.0]}, 70, drop_rate=0.3, seed=seed,
                               gate={"profile": "none"}, label=f"random drop=0.300 seed={seed}"))
    return out


META = {"ks": list(KS), "category_check": None}


def test_summary_has_the_issue_shape():
    summary, sweep = report.build(_results(), streams=("turns", "observations"),
                                  arms=("add-all", "random", "maxcos", "sage", "memsieve"))
    assert list(summary) == ["turns", "observations"]
    for arms in summary.values():
        assert list(arms) == ["add-all", "random", "maxcos", "sage", "memsieve"]
        for e in arms.values():
            for key in ("micro", "macro", "per_category", "stored", "noops", "llm_calls", "ingest_s"):
                assert key in e
            assert {"answer_recall@10", "evidence_recall@10", "provenance_recall@10"} <= set(e["micro"])
            assert set(e["per_category"]) == {"1", "2", "3", "4", "5"}
    rnd = summary["turns"]["random"]
    assert [s["seed"] for s in rnd["seeds"]] == [0, 1, 2]
    assert summary["turns"]["memsieve"]["stored_fraction"] == pytest.approx(0.7)
    json.dumps(summary)  # serializable as is
    # The sweep holds one point per configuration: random's three seeds are one point.
    turns = [p for p in sweep if p["stream"] == "turns"]
    assert sorted(p["label"] for p in turns) == sorted(
        ["add-all", "maxcos", "maxcos cos>=0.6", "sage", "memsieve", "random drop=0.300"])
    assert next(p for p in turns if p["arm"] == "random")["seeds"] == 3


def _gain_loss(results):
    summary, sweep = report.build(results, streams=("turns", "observations"),
                                  arms=("add-all", "random", "maxcos", "sage", "memsieve"))
    text = narrative.narrative(summary, sweep, META)
    gain = next(s for s in text if "largest gain" in s or "No arm beats" in s)
    loss = next(s for s in text if "largest loss is" in s or "No arm loses" in s)
    return gain, loss, text


def test_narrative_names_whatever_gains_and_loses_most():
    gain, loss, _ = _gain_loss(_results(memsieve_cat={2: [1.0, 1.0], 1: [1.0, 1.0]},
                                        sage_cat={3: [0.0]}))
    assert "memsieve" in gain and "category 1 (multi-hop)" in gain
    assert "sage" in loss and "category 3 (open-domain)" in loss

    gain, loss, _ = _gain_loss(_results(memsieve_cat={1: [0.0, 0.0]}, sage_cat={3: [1.0]}))
    assert "sage" in gain and "category 3 (open-domain)" in gain
    assert "memsieve" in loss and "category 1 (multi-hop)" in loss


def test_narrative_says_so_when_nothing_gains_and_separates_the_control():
    gain, loss, text = _gain_loss(_results())
    assert gain.startswith("No arm beats add-all")
    assert "random" in loss  # the control loses most here ...
    assert any(s.startswith("None of the gates loses") for s in text)  # ... and no gate does
    _gain, loss, text = _gain_loss(_results(sage_cat={2: [1.0, 0.5]}))
    assert "random" in loss
    assert "sage" in next(s for s in text if s.startswith("Among the gates alone"))


def test_goal_checks_follow_the_numbers():
    summary, sweep = report.build(_results(), streams=("turns",), arms=("add-all", "random", "maxcos", "sage",
                                                                        "memsieve"))
    goals = {g["goal"]: g for g in narrative.goal_checks(summary, sweep, 10)}
    assert goals["stores <= 75% of add-all"]["ok"]
    assert goals["answer_recall@10 micro within 1 point of add-all"]["ok"]
    assert goals["loses <= 1/3 of random's loss at the same size"]["ok"]
    assert goals["on or above the maxcos frontier"]["ok"]  # 70% lies between maxcos's 60% and 80%
    assert goals["on or above the sage frontier"]["ok"] is None  # sage only reaches 90%
    worse = _results(memsieve_cat={4: [0.0, 0.0, 0.0]})
    summary, sweep = report.build(worse, streams=("turns",), arms=("add-all", "random", "maxcos", "sage", "memsieve"))
    goals = {g["goal"]: g for g in narrative.goal_checks(summary, sweep, 10)}
    assert not goals["answer_recall@10 micro within 1 point of add-all"]["ok"]
    assert not goals["loses <= 1/3 of random's loss at the same size"]["ok"]


def test_interpolate_and_recommend():
    assert narrative.interpolate([(0.6, 0.5), (0.8, 0.7)], 0.7) == pytest.approx(0.6)
    assert narrative.interpolate([(0.6, 0.5), (0.8, 0.7)], 0.9) is None
    summary, sweep = report.build(_results(), streams=("turns", "observations"),
                                  arms=("add-all", "random", "maxcos", "sage", "memsieve"))
    rec = narrative.recommend(sweep, 10)
    # memsieve stores 70% at no loss; maxcos's lossless point stores 80%, its 60% point loses.
    assert rec["winner"] == "memsieve"
    assert rec["picks"]["memsieve"]["meets_store_cap"]
    assert rec["picks"]["maxcos"]["label"] == "maxcos" and not rec["picks"]["maxcos"]["meets_store_cap"]
    text = " ".join(narrative._recommend_sentences(rec))
    assert "stores less than plain max-cosine" in text and "recommended default is memsieve" in text
    # Make memsieve lossy: the lossless max-cosine point must win, and the prose must say so.
    summary, sweep = report.build(_results(memsieve_cat={4: [0.0, 0.0, 0.0]}), streams=("turns", "observations"),
                                  arms=("add-all", "random", "maxcos", "sage", "memsieve"))
    rec = narrative.recommend(sweep, 10)
    assert rec["winner"] == "maxcos"
    assert "Plain max-cosine beats the kernel-density gate" in " ".join(narrative._recommend_sentences(rec))


def test_markdown_has_micro_and_macro_tables():
    summary, sweep = report.build(_results(), streams=("turns", "observations"),
                                  arms=("add-all", "random", "maxcos", "sage", "memsieve"))
    meta = {"ks": list(KS), "data": "x.json", "conversations": ["conv-x"], "questions": 9,
            "category_check": {"consistent": True, "checks": [], "by_category": {}},
            "loader": {k: 0 for k in ("evidence_ids", "evidence_repaired", "evidence_split", "evidence_malformed",
                                      "evidence_unknown_turn", "questions_without_evidence", "fact_ids",
                                      "fact_ids_repaired", "fact_ids_malformed", "facts_malformed",
                                      "sessions_without_observation")},
            "embedding": {"distinct_texts": 1, "source": "embedded", "embed_s": 0, "embedder": "e",
                          "hits_in_arms": 0, "misses_in_arms": 0},
            "job_count": 1, "jobs_s": 1, "jobs": 1, "cpu_count": 2, "wall_s": 1}
    md = report.markdown(summary, sweep, meta)
    assert md.count("**Micro**") == 2 and md.count("**Macro**") == 2
    assert "The largest" in md or "No arm" in md
