"""Precision and recall of "hide the older" on pairs.jsonl, at the three places the version rule runs.

For each pair (older, newer, hide): is the older hidden?

- consolidation: both stored (gate off), then ``Memory.consolidate()`` with its defaults;
  hidden = the older is no longer active;
- write: the default gate; hidden = the newer is linked to the older as ``updates``
  (or folded into it as a NOOP, which hides the newer instead: counted as hiding);
- read: both stored (gate off), ``search(newer)``; hidden = the older comes back
  ``superseded_by`` another memory.

Run from the repository root with the package importable:
    python eval/consolidation-values/measure.py [--out results.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memsieve import Memory
from memsieve.gate.config import GateConfig

HERE = Path(__file__).resolve().parent


def score(rows: list[dict], hidden: list[bool]) -> dict:
    tp = sum(h and r["hide"] for r, h in zip(rows, hidden))
    fp = sum(h and not r["hide"] for r, h in zip(rows, hidden))
    fn = sum(not h and r["hide"] for r, h in zip(rows, hidden))
    return {"precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
            "tp": tp, "fp": fp, "fn": fn, "wrongly_hidden": [k for k, (r, h) in enumerate(zip(rows, hidden))
                                                            if h and not r["hide"]]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    args = p.parse_args()
    rows = [json.loads(line) for line in (HERE / "pairs.jsonl").read_text().splitlines()]
    stored = Memory(":memory:", gate=GateConfig(profile="none"))
    gated = Memory(":memory:")
    out: dict[str, list[bool]] = {"consolidation": [], "write": [], "read": []}
    for k, r in enumerate(rows):
        u = f"pair-{k}"
        older = stored.add(r["older"], user_id=u)[0].memory_id
        stored.add(r["newer"], user_id=u)
        hits = stored.search(r["newer"], user_id=u, limit=5)
        out["read"].append(any(h.id == older and h.superseded_by for h in hits))
        stored.consolidate(user_id=u)
        out["consolidation"].append(not any(m.id == older for m in stored.get_all(user_id=u)))
        gated.add(r["older"], user_id=u)
        d = gated.add(r["newer"], user_id=u)[0]
        out["write"].append(d.event == "NOOP" or d.link_kind == "updates")
    result = {where: score(rows, hidden) for where, hidden in out.items()}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
