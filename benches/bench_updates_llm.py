"""The LLM path on the updates set, measured with a real local model.

Three ways of writing the same conversations, each scored by
``memsieve eval updates`` (default ``Memory.search`` at limit 5):

* ``gate-llm``: memsieve as designed, the default gate, only band candidates
  reach the LLM's CRUD step;
* ``all-llm``: every candidate but a scope's first goes to the CRUD step (the
  mem0-style baseline; gate arm ``llm-all`` of :mod:`memsieve.eval.updates`);
* ``no-llm``: the default gate with its deterministic band policy.

``--infer`` adds ``gate-llm+infer`` and ``all-llm+infer``: every turn goes
through LLM fact extraction first. Each arm writes items.jsonl, summary.json and
summary.md under ``--out/<split>/<arm>/``; the comparison (accuracy per kind, LLM calls,
prompt and completion tokens, wall time) goes to ``--out/summary.json`` and
``--out/summary.md``, merged with arms of earlier runs so that one arm can be
re-run alone::

    python -m llama_cpp.server --model qwen2.5-coder-1.5b-instruct.gguf \\
        --host 127.0.0.1 --port 8091 --n_ctx 4096 --chat_format chatml --n_threads 2
    python benches/bench_updates_llm.py --split test --arms all-llm,gate-llm,no-llm
    python benches/bench_updates_llm.py --split test --arms gate-llm,no-llm   # after a gate change

Extraction recall (``--extraction``) is in benches/bench_extraction.py.
This is a benchmark, not a test: nothing in tests/ needs this model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from memsieve.eval.updates import UpdatesOptions, run_updates
from memsieve.eval.updates_data import KINDS

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "eval" / "updates-llm"
#: arm name -> (gate arm of memsieve.eval.updates, uses the LLM, infer)
ARMS: dict[str, tuple[str, bool, bool]] = {
    "all-llm": ("llm-all", True, False),
    "gate-llm": ("default", True, False),
    "no-llm": ("default", False, False),
    "all-llm+infer": ("llm-all", True, True),
    "gate-llm+infer": ("default", True, True),
}


def run_arm(name: str, *, split: str, base_url: str, model: str, timeout: float, out: Path,
            ids: list[str] | None, folder: str | None = None) -> dict[str, Any]:
    """Run one arm in its own Memory and write its per-item output under ``out/name``.

    Returns:
        The arm's row for the comparison: accuracy per kind, micro, macro, LLM
        usage, wall time, failed turns, and the run's metadata.
    """
    gate, with_llm, infer = ARMS[name]
    opts = UpdatesOptions(split=split, gates=(gate,), out=str(out / split / (folder or name)), infer=infer, ids=ids,
                          llm_base_url=base_url if with_llm else None, llm_model=model, llm_timeout=timeout)
    t0 = time.perf_counter()
    result = run_updates(opts)
    arm = result["arms"][gate]
    llm = arm.get("llm") or {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "faults": 0}
    return {
        "arm": name, "gate": gate, "llm": with_llm, "infer": infer, "split": split,
        "items": arm["micro"]["items"],
        "per_kind": {k: g["accuracy"] for k, g in arm["per_kind"].items()},
        "micro": arm["micro"]["accuracy"], "macro": arm["macro"],
        "calls": llm["calls"], "prompt_tokens": llm["prompt_tokens"],
        "completion_tokens": llm["completion_tokens"], "faults": llm.get("faults", 0),
        "errors": arm["micro"]["errors"], "stored": arm["micro"]["stored"],
        "candidates": arm["micro"]["candidates"], "seconds": round(time.perf_counter() - t0, 1),
        "code": result["meta"]["code"], "model": model if with_llm else None,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def patch_arm(name: str, row: dict[str, Any], *, split: str, out: Path) -> dict[str, Any]:
    """Fold a re-run of some items (``--patch``) into the arm's stored output.

    The re-run's rows replace the stored rows of the same ids in
    ``out/name/items.jsonl``; the arm is summarized again from the merged rows,
    and the re-run's LLM calls, tokens and seconds are added to the stored row's
    (the calls that failed the first time stay counted: they were made).
    """
    from memsieve.eval.updates_report import summarize

    stored = json.loads((out / "summary.json").read_text())["arms"]
    old = next(r for r in stored if r["arm"] == name and r["split"] == split)
    path = out / split / name / "items.jsonl"
    new_rows = [json.loads(line) for line in (out / split / f"{name}.patch" / "items.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in new_rows}
    rows = [by_id.get(r["id"], r) for r in map(json.loads, path.read_text().splitlines())]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    arm = summarize(rows, seconds=old["seconds"] + row["seconds"])
    merged = {**old, "per_kind": {k: g["accuracy"] for k, g in arm["per_kind"].items()},
              "micro": arm["micro"]["accuracy"], "macro": arm["macro"], "errors": arm["micro"]["errors"],
              "stored": arm["micro"]["stored"], "candidates": arm["micro"]["candidates"],
              "seconds": round(old["seconds"] + row["seconds"], 1),
              "patched": sorted(by_id), "code": f"{old['code']} + {row['code']}"}
    for key in ("calls", "prompt_tokens", "completion_tokens", "faults"):
        merged[key] = old[key] + row[key]
    rewrite_arm_summary(out / split / name, arm, merged)
    return merged


def rewrite_arm_summary(folder: Path, arm: dict[str, Any], row: dict[str, Any]) -> None:
    """The arm's own summary.json / summary.md, from the merged rows and the summed LLM usage."""
    from memsieve.eval.updates_report import markdown as arm_markdown

    result = json.loads((folder / "summary.json").read_text())
    gate = row["gate"]
    usage = {k: row[k] for k in ("calls", "prompt_tokens", "completion_tokens", "faults")}
    result["arms"][gate] = {**arm, "llm": {**(result["arms"][gate].get("llm") or {}), **usage}}
    result["meta"].update(patched=row["patched"], code=row["code"], wall_s=row["seconds"])
    (folder / "summary.json").write_text(json.dumps(result, indent=1, allow_nan=False) + "\n")
    (folder / "summary.md").write_text(arm_markdown(result))


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def markdown(rows: list[dict[str, Any]]) -> str:
    """The comparison table: one column per arm."""
    names = [r["arm"] for r in rows]
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---|" * len(rows)]
    kinds = [k for k in KINDS if any(k in r["per_kind"] for r in rows)]
    for k in kinds:
        lines.append(f"| {k} | " + " | ".join(_pct(r["per_kind"].get(k)) for r in rows) + " |")
    for label, key in (("**micro**", "micro"), ("**macro**", "macro")):
        lines.append(f"| {label} | " + " | ".join(f"**{_pct(r[key])}**" for r in rows) + " |")
    for label, fmt in (
        ("items", lambda r: str(r["items"])),
        ("stored / candidates", lambda r: f"{r['stored']} / {r['candidates']}"),
        ("LLM calls", lambda r: str(r["calls"])),
        ("prompt tokens", lambda r: str(r["prompt_tokens"])),
        ("completion tokens", lambda r: str(r["completion_tokens"])),
        ("LLM faults / failed turns", lambda r: f"{r['faults']} / {r['errors']}"),
        ("wall time", lambda r: f"{r['seconds'] / 60:.1f} min"),
        ("code", lambda r: f"`{r['code']}`"),
    ):
        lines.append(f"| {label} | " + " | ".join(fmt(r) for r in rows) + " |")
    return "\n".join(lines) + "\n"


def merge(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of this run replace same-named arms of the same split in the stored summary."""
    old = json.loads(path.read_text())["arms"] if path.exists() else []
    keep = [r for r in old if (r["arm"], r["split"]) not in {(n["arm"], n["split"]) for n in rows}]
    order = list(ARMS)
    return sorted(keep + rows, key=lambda r: (r["split"], order.index(r["arm"]) if r["arm"] in order else 99))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arms", default="all-llm,gate-llm,no-llm", help=f"comma-separated, from {', '.join(ARMS)}")
    p.add_argument("--split", choices=["dev", "test", "all"], default="test")
    p.add_argument("--base-url", default="http://127.0.0.1:8091/v1")
    p.add_argument("--model", default="qwen2.5-coder-1.5b", help="model name (the server's --model_alias)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per LLM request")
    p.add_argument("--ids", help="only these item ids, comma-separated")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--patch", action="store_true",
                   help="re-run only --ids and fold them into the stored arm (after a server crash)")
    args = p.parse_args(argv)
    names = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in names if a not in ARMS]
    if unknown:
        p.error(f"unknown arm(s) {unknown}; use any of {', '.join(ARMS)}")
    out = Path(args.out)
    ids = [i.strip() for i in args.ids.split(",")] if args.ids else None
    rows = []
    for name in names:
        print(f"running {name} on {args.split} ...", file=sys.stderr, flush=True)
        if args.patch:
            if not ids:
                p.error("--patch needs --ids")
            part = run_arm(name, split=args.split, base_url=args.base_url, model=args.model,
                           timeout=args.timeout, out=out, ids=ids, folder=f"{name}.patch")
            rows.append(patch_arm(name, part, split=args.split, out=out))
        else:
            rows.append(run_arm(name, split=args.split, base_url=args.base_url, model=args.model,
                                timeout=args.timeout, out=out, ids=ids))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        merged = merge(out / "summary.json", rows)  # written after every arm: a long run keeps what it has
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps({"arms": merged}, indent=1) + "\n")
        for split in sorted({r["split"] for r in merged}):
            (out / f"summary-{split}.md").write_text(markdown([r for r in merged if r["split"] == split]))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
