"""``memsieve eval forget``: does ``Memory.forget`` name what a request is about, and nothing else?

Every item of the forget set (eval/forget/requests.jsonl) is a scope's
memories, a request in the user's words and the ids of the memories it must
name; the other memories are its near misses: the same fact about another
person, at another time, of another object. Each item gets its own scope in
one ``Memory(":memory:")`` with the gate off (every memory is stored), its
memories added in order (one day apart, so "old" means the first ones). The
request is run twice, ``dry_run=True`` and then for real, and scored:

- precision and recall of the ids the real run removed against the gold ids,
  micro (pooled over items) and macro (the mean over request kinds of each
  kind's pooled numbers), per split;
- ``dry_mismatch``: items whose dry run listed other ids than the real run
  removed (must be 0: a dry run shows exactly what a real run does).

``--purge`` runs the purge arm too (``forget(..., purge=True)``), in a
Memory of its own.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from memsieve.errors import ConfigError
from memsieve.eval.runinfo import check_out

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class ForgetItem:
    """One request of the forget set.

    Attributes:
        id: unique, ``<kind>-<n>``.
        kind: what the near misses vary (self, relation, name, object, time, old, about, pronoun).
        split: ``dev`` (tuned on) or ``test`` (held out).
        memories: (id, text) of the scope's memories, oldest first.
        request: the user's words.
        named: the ids the request must name.
    """

    id: str
    kind: str
    split: str
    memories: tuple[tuple[str, str], ...]
    request: str
    named: frozenset[str]


def default_path() -> Path:
    """``eval/forget/requests.jsonl`` of the source tree this package was installed from."""
    return Path(__file__).resolve().parents[3] / "eval" / "forget" / "requests.jsonl"


def _item(row: Any, where: str) -> ForgetItem:
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: an item must be a json object, got {type(row).__name__}")
    missing = [k for k in ("id", "kind", "split", "memories", "request", "named") if k not in row]
    if missing:
        raise ConfigError(f"{where}: item lacks {missing}")
    if row["split"] not in SPLITS:
        raise ConfigError(f"{where}: split must be one of {SPLITS}, got {row['split']!r}")
    mems = tuple((str(m["id"]), str(m["text"])) for m in row["memories"])
    ids = [m for m, _ in mems]
    if len(set(ids)) != len(ids) or len({t for _, t in mems}) != len(mems):
        raise ConfigError(f"{where}: memory ids and texts must be unique within an item")
    named = frozenset(str(n) for n in row["named"])
    if not named <= set(ids):
        raise ConfigError(f"{where}: named ids {sorted(named - set(ids))} are not memories of the item")
    return ForgetItem(id=str(row["id"]), kind=str(row["kind"]), split=row["split"], memories=mems,
                      request=str(row["request"]), named=named)


def load_items(path: str | Path | None = None, *, split: str = "all") -> list[ForgetItem]:
    """The items of one split (``dev``, ``test`` or ``all``), in file order.

    Raises:
        ConfigError: the file is missing or malformed, or the split unknown.
    """
    if split not in (*SPLITS, "all"):
        raise ConfigError(f"split must be dev, test or all, got {split!r}")
    p = Path(path) if path is not None else default_path()
    if not p.is_file():
        raise ConfigError(f"no forget set at {p}; pass --data with the path of requests.jsonl")
    items, seen = [], set()
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{p}:{n}: not json ({exc.msg})") from None
        it = _item(row, f"{p}:{n}")
        if it.id in seen:
            raise ConfigError(f"{p}:{n}: duplicate item id {it.id!r}")
        seen.add(it.id)
        items.append(it)
    return [it for it in items if split == "all" or it.split == split]


def run_item(mem: Any, item: ForgetItem, *, purge: bool = False) -> dict[str, Any]:
    """Store the item's memories in a scope of their own, run its request dry then for real; score it.

    Raises:
        ConfigError: a memory of the item was not stored (the gate must store everything).
    """
    scope = f"forget-eval:{item.id}"
    day0 = date(2024, 1, 1)
    for i, (_, text) in enumerate(item.memories):
        mem.add(text, user_id=scope, valid_from=(day0 + timedelta(days=i)).isoformat())
    by_text = {it.text: it.id for it in mem.get_all(user_id=scope, limit=1000)}
    stored = {mid: by_text.get(text) for mid, text in item.memories}
    if None in stored.values():
        raise ConfigError(f"item {item.id}: not every memory was stored; run with the gate off (profile='none')")
    gold_of = {v: k for k, v in stored.items()}
    dry = sorted(gold_of[it.id] for it in mem.forget(item.request, user_id=scope, purge=purge, dry_run=True))
    real = sorted(gold_of[it.id] for it in mem.forget(item.request, user_id=scope, purge=purge))
    got = set(real)
    return {"id": item.id, "kind": item.kind, "split": item.split, "request": item.request,
            "gold": sorted(item.named), "named": real, "dry": dry, "dry_matches": dry == real,
            "tp": len(got & item.named), "fp": len(got - item.named), "fn": len(item.named - got),
            "wrong": [t for m, t in item.memories if (m in got) != (m in item.named)]}


def _pr(rows: list[dict[str, Any]]) -> dict[str, float]:
    tp, fp, fn = (sum(r[k] for r in rows) for k in ("tp", "fp", "fn"))
    return {"precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro and macro precision/recall, per kind, exact items and dry-run mismatches, of some rows."""
    kinds = sorted({r["kind"] for r in rows})
    per_kind = {k: {**_pr([r for r in rows if r["kind"] == k]), "items": sum(r["kind"] == k for r in rows)}
                for k in kinds}
    macro = {m: sum(per_kind[k][m] for k in kinds) / len(kinds) if kinds else 1.0 for m in ("precision", "recall")}
    return {"items": len(rows), "micro": _pr(rows), "macro": macro, "per_kind": per_kind,
            "exact": sum(r["fp"] == 0 and r["fn"] == 0 for r in rows),
            "dry_mismatch": sum(not r["dry_matches"] for r in rows)}


def run_forget(*, data: str | None = None, split: str = "all", purge: bool = False, embedder: Any = None,
               ids: list[str] | None = None) -> dict[str, Any]:
    """Run the forget set; returns {"splits": {split: summary}, "rows": [...], "meta": {...}}."""
    from memsieve import GateConfig, Memory
    from memsieve.embedding import CachedEmbedder, default_embedder

    items = load_items(data, split=split)
    if ids is not None:
        missing = sorted(set(ids) - {it.id for it in items})
        if missing:
            raise ConfigError(f"no item with id(s) {missing} in split {split!r}; check --ids")
        items = [it for it in items if it.id in set(ids)]
    emb = embedder if embedder is not None else CachedEmbedder(default_embedder())
    t0 = time.perf_counter()
    mem = Memory(":memory:", embedder=emb, gate=GateConfig(profile="none"))
    try:
        rows = [run_item(mem, it, purge=purge) for it in items]
    finally:
        mem.close()
    splits = {s: summarize([r for r in rows if r["split"] == s]) for s in SPLITS if any(r["split"] == s for r in rows)}
    splits["all"] = summarize(rows)
    meta = {"purge": purge, "embedder": getattr(emb, "name", type(emb).__name__),
            "seconds": round(time.perf_counter() - t0, 2)}
    return {"splits": splits, "rows": rows, "meta": meta}


def markdown(result: dict[str, Any]) -> str:
    """The summary as a markdown table, then the items that went wrong."""
    lines = ["| split | items | micro P | micro R | macro P | macro R | exact | dry != real |",
             "|---|---|---|---|---|---|---|---|"]
    for name, s in result["splits"].items():
        lines.append(f"| {name} | {s['items']} | {s['micro']['precision']:.3f} | {s['micro']['recall']:.3f} | "
                     f"{s['macro']['precision']:.3f} | {s['macro']['recall']:.3f} | {s['exact']} | "
                     f"{s['dry_mismatch']} |")
    lines += ["", "| kind | items | P | R |", "|---|---|---|---|"]
    for k, v in result["splits"]["all"]["per_kind"].items():
        lines.append(f"| {k} | {v['items']} | {v['precision']:.3f} | {v['recall']:.3f} |")
    wrong = [r for r in result["rows"] if r["fp"] or r["fn"] or not r["dry_matches"]]
    if wrong:
        lines += ["", "Wrong items:"]
        lines += [f"- {r['id']} ({r['split']}) {r['request']!r}: named {r['named']}, gold {r['gold']}"
                  + ("" if r["dry_matches"] else f", dry run {r['dry']}") for r in wrong]
    return "\n".join(lines) + "\n"


def add_arguments(subparsers: Any) -> None:
    """Add ``forget`` to ``memsieve eval``'s subparsers (see memsieve.eval.commands)."""
    p = subparsers.add_parser("forget", help="the forget set: precision and recall of what forget() names")
    p.add_argument("--data", help="path of requests.jsonl (default: eval/forget of the source tree)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="all", help="which items (default all)")
    p.add_argument("--purge", action="store_true", help="run forget(..., purge=True) instead of soft deletes")
    p.add_argument("--ids", help="only these item ids, comma-separated")
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of markdown")
    p.add_argument("--out", help="also write the result as JSON to this file")
    p.set_defaults(func=main_forget)


def main_forget(args: argparse.Namespace) -> int:
    """Run ``eval forget`` from parsed arguments; print the summary."""
    check_out(args.out, folder=False)
    result = run_forget(data=args.data, split=args.split, purge=args.purge,
                        ids=[i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None)
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
