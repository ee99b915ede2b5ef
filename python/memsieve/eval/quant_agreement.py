"""Do int8 vectors change anything? LoCoMo dev, float32 against int8, side by side.

Usage::

    python -m memsieve.eval.quant_agreement --data ../shared/data/locomo/locomo_dev.json \\
        --embedding-cache /tmp/memsieve-quant-vectors.npz --json benches/results_quant_agreement.json

For each conversation (one scope), the turns are ingested one ``add()`` at a
time into two SQLite ``Memory`` instances that differ only in
``GateConfig(vectors=...)``. Measured:

- **candidates**: whether each turn's decision agrees: the event, the layer
  and the nearest memory (named by the turn that stored it, since memory ids
  are random), and separately whether novelty and nearest cosine are the same
  floats bit for bit;
- **queries**: whether each dev question's dense top-10 (``search(mode="dense",
  limit=10)``) lists the same memories in the same order, with equal scores;
- **raw scans**: the same top-10 straight from ``ScopeState`` over every turn
  of the conversation (a store-everything scope), with how many rows the int8
  scan handed to the float32 re-score;
- **pooled**: every dev turn in one scope (denser), every question's top-10
  and top-50 (the hybrid search's dense depth is of that order).

Rates are micro (over all items) and macro (the mean of per-conversation
rates). Vectors are embedded once and cached outside the repository.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from memsieve import GateConfig, Memory, _core
from memsieve.eval.locomo import Conversation, load_locomo
from memsieve.eval.vectors import embed_all

STORAGES = ("float32", "int8")
K = 10


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", float(x)))[0]


def _ingest(conv: Conversation, table: Any, storage: str, folder: Path) -> tuple[list[dict[str, Any]], Memory]:
    """Every turn through ``add()``; each decision with its nearest memory named by turn index."""
    mem = Memory(folder / f"{conv.sample_id}-{storage}.db", embedder=table, gate=GateConfig(vectors=storage))
    stored: dict[str, int] = {}
    out = []
    turn = 0
    for session, calls in conv.stream("turns"):
        for call in calls:
            for c in call:
                (d,) = mem.add(c.text, user_id=conv.sample_id, valid_from=c.valid_from or session.valid_from)
                if d.event == "ADD" and d.memory_id is not None:
                    stored[d.memory_id] = turn
                out.append({"event": d.event, "layer": d.layer,
                            "nearest": stored.get(d.nearest_id) if d.nearest_id else None,
                            "novelty": _bits(d.novelty), "cos": _bits(d.nearest_cos)})
                turn += 1
    return out, mem


def _rate(same: int, total: int) -> float:
    return same / total if total else math.nan


def _conversation(conv: Conversation, table: Any, folder: Path) -> dict[str, Any]:
    runs = {s: _ingest(conv, table, s, folder) for s in STORAGES}
    try:
        (a, ma), (b, mb) = runs["float32"], runs["int8"]
        decided = sum(x["event"] == y["event"] and x["layer"] == y["layer"] and x["nearest"] == y["nearest"]
                      for x, y in zip(a, b))
        exact = sum(x == y for x, y in zip(a, b))
        queries = same_q = same_scores = 0
        for q in conv.questions:
            hits = [m.search(q.question, user_id=conv.sample_id, mode="dense", limit=K) for m in (ma, mb)]
            texts = [[h.text for h in hs] for hs in hits]
            queries += 1
            same_q += texts[0] == texts[1]
            same_scores += [h.score for h in hits[0]] == [h.score for h in hits[1]]
    finally:
        for _, m in runs.values():
            m.close()
    raw = _raw_scans(conv, table)
    return {"sample_id": conv.sample_id, "candidates": len(a), "decisions_same": decided,
            "decisions_bit_identical": exact, "stored": sum(x["event"] == "ADD" for x in a),
            "queries": queries, "top10_same": same_q, "top10_scores_same": same_scores, **raw}


def _raw_scans(conv: Conversation, table: Any) -> dict[str, Any]:
    """Top-10 of every question over all of the conversation's turns, float32 against int8."""
    texts = [c.text for _s, calls in conv.stream("turns") for call in calls for c in call]
    m = table.embed(texts)
    ids = np.arange(len(texts), dtype=np.int64)
    states = [_core.ScopeState(m.shape[1], vectors=s) for s in STORAGES]
    for s in states:
        s.add_many(ids, m)
    qs = table.embed([q.question for q in conv.questions])
    same, rescored = 0, []
    for q in qs:
        (ia, ca), (ib, cb) = (s.nearest(q, K) for s in states)
        same += ia.tolist() == ib.tolist() and ca.tobytes() == cb.tobytes()
        rescored.append(states[1].rescored(q, K))
    return {"raw_rows": len(texts), "raw_queries": len(qs), "raw_top10_bit_identical": same,
            "raw_rescored_mean": float(np.mean(rescored)) if rescored else 0.0,
            "raw_rescored_max": int(max(rescored, default=0))}


def _pooled(ds: Any, table: Any) -> dict[str, Any]:
    """All dev turns in one scope; each question's top-10 and top-50, float32 against int8."""
    texts = [c.text for conv in ds.conversations for _s, calls in conv.stream("turns") for call in calls for c in call]
    m = table.embed(texts)
    states = [_core.ScopeState(m.shape[1], vectors=s) for s in STORAGES]
    for s in states:
        s.add_many(np.arange(len(texts), dtype=np.int64), m)
    out: dict[str, Any] = {"rows": len(texts), "queries": 0}
    for k in (K, 50):
        same, rescored = 0, []
        for q in table.embed([q.question for q in ds.questions]):
            (ia, ca), (ib, cb) = (s.nearest(q, k) for s in states)
            same += ia.tolist() == ib.tolist() and ca.tobytes() == cb.tobytes()
            rescored.append(states[1].rescored(q, k))
        out["queries"] = len(rescored)
        out[f"top{k}_bit_identical"] = same
        out[f"top{k}_rescored_mean"] = float(np.mean(rescored))
        out[f"top{k}_rescored_max"] = int(max(rescored))
    return out


def summarize(per: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro and macro agreement rates from the per-conversation counts."""
    pairs = {"decisions": ("decisions_same", "candidates"),
             "decisions_bit_identical": ("decisions_bit_identical", "candidates"),
             "top10": ("top10_same", "queries"), "top10_scores": ("top10_scores_same", "queries"),
             "raw_top10_bit_identical": ("raw_top10_bit_identical", "raw_queries")}
    out: dict[str, Any] = {}
    for name, (num, den) in pairs.items():
        out[name] = {"micro": _rate(sum(p[num] for p in per), sum(p[den] for p in per)),
                     "macro": float(np.mean([_rate(p[num], p[den]) for p in per])),
                     "agree": sum(p[num] for p in per), "of": sum(p[den] for p in per)}
    out["target"] = 0.999
    out["met"] = all(out[k]["micro"] >= 0.999 and out[k]["macro"] >= 0.999 for k in ("decisions", "top10"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="../shared/data/locomo/locomo_dev.json")
    p.add_argument("--embedding-cache", default="/tmp/memsieve-quant-vectors.npz")
    p.add_argument("--json", default=None, help="write the results here")
    p.add_argument("--other-isas", default="",
                   help="also run under these MEMSIEVE_ISA values (comma-separated), each in a child process")
    args = p.parse_args(argv)
    ds = load_locomo(args.data)
    table, info = embed_all(ds, streams=("turns",), embedding_cache=args.embedding_cache, progress=False)
    t0 = time.perf_counter()
    per = []
    with tempfile.TemporaryDirectory(prefix="memsieve-quant-") as tmp:
        for conv in ds.conversations:
            per.append(_conversation(conv, table, Path(tmp)))
            print(json.dumps(per[-1]), file=sys.stderr)
    report = {"isa": _core._isa(), "split": Path(args.data).name, "k": K, "embedding": info,
              "seconds": round(time.perf_counter() - t0, 1), "summary": summarize(per),
              "pooled": _pooled(ds, table), "conversations": per}
    report["other_isas"] = {isa: _child(isa, args) for isa in filter(None, args.other_isas.split(","))}
    print(json.dumps({k: report[k] for k in ("isa", "summary", "pooled", "other_isas")}, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _child(isa: str, args: argparse.Namespace) -> dict[str, Any]:
    """The summary of the same run on another kernel path (the path is fixed per process)."""
    with tempfile.TemporaryDirectory(prefix="memsieve-quant-isa-") as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "memsieve.eval.quant_agreement", "--data", args.data,
               "--embedding-cache", args.embedding_cache, "--json", str(out)]
        run = subprocess.run(cmd, env={**os.environ, "MEMSIEVE_ISA": isa}, capture_output=True, text=True,
                             check=False)
        if run.returncode != 0:
            return {"error": run.stderr[-2000:]}
        r = json.loads(out.read_text())
        return {"isa": r["isa"], "summary": r["summary"], "pooled": r["pooled"]}


if __name__ == "__main__":
    raise SystemExit(main())
