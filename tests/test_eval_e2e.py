"""The harness end to end on a small synthetic conversation, through the real
Memory, the real SQLite store and the packaged ONNX embedder."""

from __future__ import annotations

import json

import pytest

from memsieve.eval.runner import EvalOptions, main_locomo, run_locomo
from test_eval_locomo import synthetic_sample, write_synthetic


@pytest.mark.slow
def test_run_writes_every_output_file(tmp_path):
    data = write_synthetic(tmp_path, [synthetic_sample("conv-x")])
    out = tmp_path / "out"
    summary = run_locomo(EvalOptions(data=str(data), out=str(out), ks=(1, 3), sweep="quick", jobs=1,
                                     progress=False))
    names = {p.name for p in out.iterdir()}
    assert {"questions.jsonl", "summary.json", "summary.md", "sweep.json", "meta.json", "frontier.png",
            "frontier_macro.png", "novelty_hist.png", "tau_trace.png"} <= names
    on_disk = json.loads((out / "summary.json").read_text())
    assert set(on_disk) == {"turns", "observations"}
    assert set(on_disk["turns"]) == {"add-all", "random", "maxcos", "sage", "memsieve"}
    base = on_disk["turns"]["add-all"]
    assert base["stored"] == 5 and base["stored_fraction"] == 1.0  # five turns, no gate
    assert on_disk["observations"]["add-all"]["stored"] == 4  # 3 + 1 usable facts
    assert summary["turns"]["memsieve"]["stored"] <= 5
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    # 5 questions x (4 arms + 3 random seeds) x 2 streams
    assert len(rows) == 5 * 7 * 2
    cat_question = next(r for r in rows if r["arm"] == "add-all" and r["stream"] == "turns" and r["qid"] == "conv-x/0")
    # Each hit is scored as the reader sees it: dated by its session (valid_from), in the long form.
    # Freshness may rank the newer turn about Miso first, so the adoption is looked for among the hits.
    assert any(t.startswith("[8 May 2023] Ana: I adopted a grey cat named Miso") for t in cat_question["retrieved_texts"])
    assert cat_question["answer_recall@1"] == 1.0  # "Miso" is in the best hit
    assert cat_question["evidence_recall@3"] == 1.0  # and a top-3 hit was written from D1:1
    # "2023" is in no text, only in the dates: dated recall finds it, undated cannot.
    year = next(r for r in rows if r["arm"] == "add-all" and r["stream"] == "turns" and r["qid"] == "conv-x/4")
    assert year["answer_recall@1"] == 1.0 and year["answer_recall_undated@3"] == 0.0
    assert on_disk["turns"]["add-all"]["micro"]["answer_recall@3"] > \
        on_disk["turns"]["add-all"]["micro"]["answer_recall_undated@3"]
    adversarial = next(r for r in rows if r["qid"] == "conv-x/3")
    assert adversarial["answer_recall@3"] is None and adversarial["evidence_recall@3"] is not None
    meta = json.loads((out / "meta.json").read_text())
    assert meta["embedding"]["misses_in_arms"] == 0  # every arm read the shared vectors
    assert meta["loader"]["evidence_malformed"] == 3
    md = (out / "summary.md").read_text()
    assert "**Micro**" in md and "**Macro**" in md and "Category labels" in md
    default = meta["search_default"]
    assert meta["search"] == default and f"(mode {default}, its default)" in md and "undated" in md


def test_cli_entry_runs_one_stream(tmp_path, capsys):
    from memsieve.eval.commands import build_parser

    data = write_synthetic(tmp_path, [synthetic_sample("conv-y")])
    ns = build_parser().parse_args(["locomo", str(data), "--out", str(tmp_path / "o"), "--stream", "observations",
                            "--arms", "add-all,maxcos", "--sweep", "none", "--k", "1,2", "--jobs", "1",
                            "--no-progress"])
    assert main_locomo(ns) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert list(summary) == ["observations"] and set(summary["observations"]) == {"add-all", "maxcos"}
    assert "LoCoMo evaluation" in capsys.readouterr().out


def test_llm_arm_counts_its_calls_and_tokens(tmp_path, llama_server):
    """The LLM arm against the real llama.cpp server: a band wide enough that
    the candidate after the first goes to the LLM, so a call must be counted."""
    sample = synthetic_sample("conv-z")
    # Two turns only: the second is the one candidate the LLM must see (keeps the test fast).
    sample["conversation"]["session_1"] = sample["conversation"]["session_1"][:2]
    sample["conversation"]["session_2"] = []
    data = write_synthetic(tmp_path, [sample])
    out = tmp_path / "llm"
    summary = run_locomo(EvalOptions(data=str(data), out=str(out), streams=("turns",), arms=("add-all",),
                                     ks=(1,), sweep="none", jobs=1, progress=False,
                                     memsieve_gate={"delta": 2.0}, llm_base_url=llama_server.base_url,
                                     llm_model=llama_server.model_id or "local"))
    llm = summary["turns"]["llm"]
    assert llm["llm_calls"] >= 1 and llm["llm_tokens"] > 0
    assert llm["stored"] >= 1
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert {r["arm"] for r in rows} == {"add-all", "llm"}
