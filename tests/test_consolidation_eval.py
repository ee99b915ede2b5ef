"""The ``add-all+consolidate`` arm of ``memsieve eval locomo`` on a small synthetic conversation."""

from __future__ import annotations

import json

import pytest

from memsieve.errors import ConfigError
from memsieve.eval.runner import EvalOptions, run_locomo
from test_eval_locomo import synthetic_sample, write_synthetic


def sample_with_a_repeat() -> dict:
    sample = synthetic_sample("conv-c")
    # Ana says the same thing again later that day (other words: no exact dedup): a duplicate to merge.
    # On another day it would be another adoption, which consolidation never merges (docs/GATE.md,
    # "A thing done on another day").
    sample["conversation"]["session_1"].append(
        {"speaker": "Ana", "dia_id": "D1:4", "text": "So yes, I adopted a grey cat named Miso last week."})
    return sample


@pytest.mark.slow
def test_the_consolidate_arm_merges_and_keeps_the_evidence(tmp_path):
    data = write_synthetic(tmp_path, [sample_with_a_repeat()])
    out = tmp_path / "out"
    run_locomo(EvalOptions(data=str(data), out=str(out), streams=("turns",),
                           arms=("add-all", "add-all+consolidate"), ks=(1, 3), sweep="none", jobs=1,
                           progress=False))
    summary = json.loads((out / "summary.json").read_text())["turns"]
    base, merged = summary["add-all"], summary["add-all+consolidate"]
    assert base["stored"] == 6
    assert merged["stored"] == 5 and merged["stored_fraction"] == pytest.approx(5 / 6)
    assert merged["consolidation"]["duplicate_merges"] == 1 and merged["consolidation"]["retired"] == 1
    assert merged["provenance_missing"] == 0
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    cat = next(r for r in rows if r["arm"] == "add-all+consolidate" and r["qid"] == "conv-c/0")
    assert cat["answer_recall@1"] == 1.0 and cat["provenance_recall@3"] == 1.0
    # The kept text is the newest member's (D1:4): strict evidence credits only what it was written
    # from, and the retired duplicate's dia_id is the kept memory's provenance, as a NOOP's would be.
    assert cat["evidence_recall@3"] == 0.0
    assert any({"D1:1", "D1:4"} <= set(s) for s in cat["retrieved_sources"])


def test_an_unknown_arm_names_the_consolidation_arms(tmp_path):
    data = write_synthetic(tmp_path, [synthetic_sample("conv-d")])
    with pytest.raises(ConfigError, match=r"add-all\+consolidate"):
        run_locomo(EvalOptions(data=str(data), out=str(tmp_path / "o"), arms=("nope",), progress=False))
