"""Extraction recall of the short fact-extraction prompt with a real local model.

Two case sets:

* ``dev``: eval/updates-llm/extraction-dev.jsonl, ~20 messages written for
  this bench. Each expected fact names its subject (``"user"`` for the speaker,
  or a person) and the tokens that must come out. A fact is *kept* when one
  extracted fact holds all its tokens, and *self-contained* when that same
  fact also names its subject. Messages with nothing to remember expect
  ``{"facts": []}``; anything extracted from them is counted as invented.
* ``updates``: the turn of each updates-set item that carries its expected
  tokens (``answer_turn``), sent as ``Memory.add(infer=True)`` sends it
  (``"role: text"``). Recall is the share of expected tokens found in the
  extracted facts (micro over tokens), and *whole* the share of items whose
  expected tokens all sit in one fact.

``--rev`` measures the prompt and schema of another commit (read with
``git show``), so before and after run on the same server::

    python benches/bench_extraction.py --label before --rev 03fff8b
    python benches/bench_extraction.py --label after

Output: eval/updates-llm/extraction/<label>-dev.jsonl and
<label>-updates-<split>.jsonl (one row per case), and summary.json / summary.md
(one entry per label and case set, merged over runs).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from memsieve.errors import LLMError
from memsieve.eval.metrics import content_tokens
from memsieve.eval.updates_data import load_items
from memsieve.llm import LLMClient, LLMConfig

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "eval" / "updates-llm" / "extraction"
DEV = ROOT / "eval" / "updates-llm" / "extraction-dev.jsonl"
PROMPTS = "python/memsieve/llm/prompts.py"


def prompts_at(rev: str | None) -> Any:
    """The prompts module of commit ``rev`` (None: the working tree's)."""
    if rev is None:
        from memsieve.llm import prompts

        return prompts
    source = subprocess.run(["git", "show", f"{rev}:{PROMPTS}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType(f"prompts_{rev}")
    exec(compile(source, f"{rev}:{PROMPTS}", "exec"), module.__dict__)  # our own file at another commit
    return module


def cases(split: str, sets: list[str]) -> list[dict[str, Any]]:
    """Every case of the chosen sets: {"set", "id", "text", ...expectations}."""
    out: list[dict[str, Any]] = []
    if "dev" in sets:
        for line in DEV.read_text().splitlines():
            if line.strip():
                out.append({"set": "dev", **json.loads(line)})
    if "updates" in sets:
        for it in load_items(None, split=split):
            if it.expected and it.answer_turn is not None:
                turn = it.turns[it.answer_turn]
                out.append({"set": "updates", "id": it.id, "kind": it.kind, "text": f"{turn.role}: {turn.text}",
                            "expected": list(it.expected)})
    return out


def score(case: dict[str, Any], facts: list[str]) -> dict[str, Any]:
    """The case's criteria from the extracted facts (see the module docstring)."""
    toks = [set(content_tokens(f)) for f in facts]
    if case["set"] == "updates":
        union = set().union(*toks) if toks else set()
        exp = case["expected"]
        return {"tokens": len(exp), "found": sum(1 for t in exp if t in union),
                "whole": any(set(exp) <= t for t in toks)}
    kept = self_contained = 0
    for fact in case["facts"]:
        subjects = fact["subject"] if isinstance(fact["subject"], list) else [fact["subject"]]
        holding = [t for t in toks if set(fact["tokens"]) <= t]
        kept += bool(holding)
        self_contained += any(set(subjects) & t for t in holding)
    return {"expected_facts": len(case["facts"]), "kept": kept, "self_contained": self_contained,
            "invented": len(facts) if not case["facts"] else 0}


def extract(client: LLMClient, mod: Any, text: str) -> tuple[list[str], str | None]:
    """Facts from one message with ``mod``'s prompt and schema, or the error."""
    try:
        done = client.complete(mod.fact_extraction_messages(text, style="short"), schema=mod.FACTS_SCHEMA,
                               name="facts")
    except LLMError as exc:
        return [], f"{type(exc).__name__}: {exc}"
    facts = done.data.get("facts")
    if not isinstance(facts, list):
        return [], f"no facts list in {done.raw[:200]!r}"
    return [f.strip() for f in facts if isinstance(f, str) and f.strip()], None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals per set over one label's rows."""
    dev = [r for r in rows if r["set"] == "dev"]
    upd = [r for r in rows if r["set"] == "updates"]
    out: dict[str, Any] = {}
    if dev:
        n = sum(r["expected_facts"] for r in dev)
        out["dev"] = {"cases": len(dev), "expected_facts": n,
                      "kept": sum(r["kept"] for r in dev) / n,
                      "self_contained": sum(r["self_contained"] for r in dev) / n,
                      "invented": sum(r["invented"] for r in dev),
                      "facts_per_case": sum(len(r["facts"]) for r in dev) / len(dev),
                      "errors": sum(1 for r in dev if r["error"])}
    if upd:
        out["updates"] = {"cases": len(upd), "token_recall": sum(r["found"] for r in upd) / sum(r["tokens"] for r in upd),
                          "whole": sum(r["whole"] for r in upd) / len(upd),
                          "facts_per_case": sum(len(r["facts"]) for r in upd) / len(upd),
                          "errors": sum(1 for r in upd if r["error"])}
    return out


def markdown(summary: dict[str, Any]) -> str:
    """One table per case set, one row per prompt version."""
    pct = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"  # noqa: E731
    cost = lambda s: f"{s['calls']} | {s['prompt_tokens']} + {s['completion_tokens']} | {s['seconds']}"  # noqa: E731
    dev = [(k, s) for k, s in summary.items() if s["set"] == "dev"]
    upd = [(k, s) for k, s in summary.items() if s["set"] == "updates"]
    lines = []
    if dev:
        lines += ["Own dev set (eval/updates-llm/extraction-dev.jsonl):", "",
                  "| prompt | cases | expected facts | kept | self-contained | invented (from no-fact messages) "
                  "| facts per message | errors | calls | tokens (prompt + completion) | seconds |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {s['prompt']} (`{s['rev']}`) | {s['cases']} | {s['expected_facts']} | {pct(s['kept'])} | "
                  f"{pct(s['self_contained'])} | {s['invented']} | {s['facts_per_case']:.2f} | {s['errors']} | "
                  f"{cost(s)} |" for _, s in dev]
        lines.append("")
    if upd:
        lines += ["Updates set, the turn carrying each item's expected tokens:", "",
                  "| prompt | split | turns | token recall | all tokens in one fact | facts per message | errors "
                  "| calls | tokens (prompt + completion) | seconds |", "|---|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {s['prompt']} (`{s['rev']}`) | {s['split']} | {s['cases']} | {pct(s['token_recall'])} | "
                  f"{pct(s['whole'])} | {s['facts_per_case']:.2f} | {s['errors']} | {cost(s)} |" for _, s in upd]
        lines.append("")
    return "\n".join(lines)


def label_of(label: str, which: str, split: str) -> str:
    """File and summary key of one (prompt, case set) run, e.g. ``after-updates-test``."""
    return f"{label}-dev" if which == "dev" else f"{label}-updates-{split}"


def rescore(summary: dict[str, Any]) -> None:
    """Score every stored run again from its jsonl with the cases' current expectations.

    Calls, tokens and seconds stay as measured; only the criteria are recomputed
    (after fixing a case's expected tokens, no model call is needed).
    """
    for key, entry in summary.items():
        split = entry["split"] or "test"
        expect = {c["id"]: c for c in cases(split, [entry["set"]])}
        rows = []
        for line in (OUT / f"{key}.jsonl").read_text().splitlines():
            row = json.loads(line)
            case = expect[row["id"]]
            rows.append({**case, "facts": row["facts"], "error": row["error"], **score(case, row["facts"])})
        (OUT / f"{key}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        entry.update(summarize(rows)[entry["set"]])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--label", help="name of this prompt version in the summary")
    p.add_argument("--rescore", action="store_true", help="only score the stored runs again (no model calls)")
    p.add_argument("--rev", help="git commit whose prompts.py to measure (default: the working tree)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="test", help="updates-set split")
    p.add_argument("--sets", default="dev,updates", help="dev, updates or both")
    p.add_argument("--base-url", default="http://127.0.0.1:8091/v1")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--timeout", type=float, default=900.0)
    args = p.parse_args(argv)
    path = OUT / "summary.json"
    if args.rescore:
        summary = json.loads(path.read_text())
        rescore(summary)
        path.write_text(json.dumps(summary, indent=1) + "\n")
        (OUT / "summary.md").write_text(markdown(summary))
        print(markdown(summary))
        return 0
    if not args.label:
        p.error("--label is required unless --rescore")
    mod = prompts_at(args.rev)
    client = LLMClient(LLMConfig(base_url=args.base_url, model=args.model, timeout=args.timeout))
    OUT.mkdir(parents=True, exist_ok=True)
    summary = json.loads(path.read_text()) if path.exists() else {}
    for which in [s.strip() for s in args.sets.split(",")]:
        # One output file and one summary entry per (label, set), each with its own calls and time.
        key = f"{label_of(args.label, which, args.split)}"
        before = client.usage_dict()
        t0 = time.perf_counter()
        rows = []
        with open(OUT / f"{key}.jsonl", "w", encoding="utf-8") as fh:
            for case in cases(args.split, [which]):
                facts, error = extract(client, mod, case["text"])
                row = {**case, "facts": facts, "error": error, **score(case, facts)}
                rows.append(row)
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                fh.flush()
                print(json.dumps({k: row[k] for k in ("id", "facts", "error")}, ensure_ascii=False),
                      file=sys.stderr, flush=True)
        usage = client.usage_dict()
        summary[key] = {"prompt": args.label, "rev": args.rev or "working tree", "set": which,
                        "split": args.split if which == "updates" else None, "model": args.model,
                        **summarize(rows).get(which, {}), "calls": usage["calls"] - before["calls"],
                        "prompt_tokens": usage["prompt_tokens"] - before["prompt_tokens"],
                        "completion_tokens": usage["completion_tokens"] - before["completion_tokens"],
                        "seconds": round(time.perf_counter() - t0, 1)}
        path.write_text(json.dumps(summary, indent=1) + "\n")
        (OUT / "summary.md").write_text(markdown(summary))
    print(markdown(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
