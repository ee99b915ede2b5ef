"""``memsieve eval updates``: does a new detail, a correction or a forget request
reach what search returns?

Every item of the updates set (eval/updates/, see :mod:`memsieve.eval.updates_data`)
gets a fresh scope in one ``Memory(":memory:")`` per gate arm. Its turns are
added in order, each with ``valid_from`` set to the turn's date; a forget request
goes to ``Memory.forget``. The item is then scored on retrieval alone, with the
default ``Memory.search`` (no ``mode``: the default is the library's to choose)
at limit 5:

- ``found``: every expected token is in the top results' text;
- ``newer_first``: (versions with stale tokens) the first result holding an
  expected token ranks above the first result that holds a stale token and no
  expected one (a correction that names the old value is not stale);
- ``noop``: (paraphrases) every decision of the last turn is a NOOP;
- ``forgotten``: (forget requests) ``Memory.forget`` exists and ran, and no
  stale token is in any result of any search mode nor in ``get_all``.

An item passes (``ok``) when every criterion that applies to its kind holds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsieve.errors import ConfigError, LLMError
from memsieve.eval.metrics import answer_recall, content_tokens
from memsieve.eval.updates_data import RANKED_KINDS, Item, load_items
from memsieve.eval.updates_report import markdown, summarize
from memsieve.eval.runinfo import check_out

LIMIT = 5
#: Modes searched for leftovers of a forgotten text, and how many results each.
LEAK_MODES = ("dense", "keyword", "hybrid")
LEAK_LIMIT = 50
#: Gate arms by name: GateConfig keyword arguments. ``llm-all`` puts every
#: candidate but a scope's first in the band (1 - max cosine >= 0 = tau, and
#: < tau + delta = 2 for any vector short of the exact opposite), so with an LLM
#: each one goes to the CRUD step: the mem0-style baseline.
GATES: dict[str, dict[str, Any]] = {"default": {}, "none": {"profile": "none"},
                                    "llm-all": {"profile": "maxcos", "tau": 0.0, "delta": 2.0}}


@dataclass(kw_only=True)
class UpdatesOptions:
    """One run of the updates set.

    Attributes:
        data: folder with dev.jsonl and test.jsonl (None: the source tree's eval/updates).
        split: ``dev``, ``test`` or ``all``.
        gates: arm names from :data:`GATES`, each run in its own Memory.
        out: folder for items.jsonl, summary.json, summary.md (None: write nothing).
        embedder: an embedder object (None: the packaged ONNX model, shared by the arms).
        llm_base_url / llm_model / llm_api_key: an OpenAI-compatible endpoint for the band.
        llm_timeout: seconds per LLM request (a small local model on a busy CPU needs minutes).
        infer: extract facts with the LLM before the gate (needs ``llm_base_url``).
        limit: search cut-off.
        ids: keep only these item ids (all when None).
    """

    data: str | None = None
    split: str = "dev"
    gates: tuple[str, ...] = ("default",)
    out: str | None = None
    embedder: Any = None
    llm_base_url: str | None = None
    llm_model: str = "local"
    llm_api_key: str = "not-needed"
    llm_timeout: float = 30.0
    infer: bool = False
    limit: int = LIMIT
    ids: list[str] | None = field(default=None)


def _tokens(text: str) -> set[str]:
    return set(content_tokens(text))


def _first(rows: list[set[str]], wanted: tuple[str, ...], *, unless: tuple[str, ...] = ()) -> int | None:
    """1-based rank of the first row holding a wanted token and no ``unless`` token."""
    for rank, toks in enumerate(rows, start=1):
        if toks & set(wanted) and not toks & set(unless):
            return rank
    return None


def score_hits(item: Item, texts: list[str], *, limit: int = LIMIT) -> dict[str, Any]:
    """The retrieval criteria of one item from its search results' texts (best first).

    Returns:
        {"found": bool|None, "expected_recall": float|None, "rank_expected": int|None,
         "rank_stale": int|None, "newer_first": bool|None}; None where the
        criterion does not apply (no expected tokens; not a version with stale tokens).
    """
    rows = [_tokens(t) for t in texts[:limit]]
    recall = answer_recall(" ".join(item.expected), texts, limit) if item.expected else None
    rank_new = _first(rows, item.expected) if item.expected else None
    rank_old = _first(rows, item.stale, unless=item.expected) if item.stale else None
    newer = None
    if item.kind in RANKED_KINDS and item.stale:
        newer = rank_new is not None and (rank_old is None or rank_new < rank_old)
    return {"found": None if recall is None else recall == 1.0, "expected_recall": recall,
            "rank_expected": rank_new, "rank_stale": rank_old, "newer_first": newer}


def _clean(x: Any) -> Any:
    """Strict-JSON-ready: non-finite floats become None (the first memory's novelty is +inf)."""
    if isinstance(x, float):
        return x if x == x and abs(x) != float("inf") else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


class ItemRunner:
    """Writes one item into its own scope of ``mem`` and scores it."""

    def __init__(self, mem: Any, *, limit: int = LIMIT, infer: bool = False) -> None:
        self.mem = mem
        self.limit = limit
        self.infer = infer

    def run(self, item: Item) -> dict[str, Any]:
        """Add the turns, answer forget requests, search, and score.

        Returns:
            One JSON-ready row: criteria, ``ok``, per-turn decisions, the hits,
            stored-memory and NOOP counts.
        """
        scope = {"user_id": f"updates:{item.id}"}
        turns: list[dict[str, Any]] = []
        forget_log: dict[str, Any] | None = None
        for i, turn in enumerate(item.turns):
            if turn.forget:
                forget_log = self._forget(turn.text, scope)
                turns.append({"turn": i, "forget": forget_log})
                continue
            try:
                decisions = self.mem.add([{"role": turn.role, "content": turn.text}], **scope,
                                         valid_from=turn.date, source=f"{item.id}#{i}", infer=self.infer)
            except LLMError as exc:  # a model's bad reply fails this turn, not the whole run
                turns.append({"turn": i, "decisions": [], "error": f"{type(exc).__name__}: {exc}"})
                continue
            turns.append({"turn": i, "decisions": [d.to_dict() for d in decisions]})
        hits = self.mem.search(item.question, **scope, limit=self.limit)
        row: dict[str, Any] = {"id": item.id, "kind": item.kind, "split": item.split,
                               **score_hits(item, [h.text for h in hits], limit=self.limit)}
        added = [t for t in turns if "decisions" in t]
        row["noop"] = _all_noop(added[-1]["decisions"]) if item.kind == "paraphrase" and added else None
        row["answer_noop"] = _answer_noop(item, turns)
        row["forgotten"], row["leaks"] = self._forgotten(item, scope, forget_log)
        row["ok"] = all(v for k in ("found", "newer_first", "noop", "forgotten")
                        if (v := row[k]) is not None)
        row["stored"] = len(self.mem.get_all(**scope))
        events = [d["event"] for t in added for d in t["decisions"]]
        row.update(candidates=len(events), noops=events.count("NOOP"),
                   errors=sum(1 for t in added if t.get("error")))
        row["hits"] = [{"rank": r, "text": h.text, "score": h.score, "valid_from": h.valid_from}
                       for r, h in enumerate(hits, start=1)]
        row["turns"] = turns
        return _clean(row)

    def _forget(self, text: str, scope: dict[str, str]) -> dict[str, Any]:
        forget = getattr(self.mem, "forget", None)
        if forget is None:
            return {"supported": False, "error": "Memory.forget does not exist in this version"}
        try:
            removed = forget(text, **scope)
        except Exception as exc:  # any failure is this item's failure, not the run's
            return {"supported": True, "error": f"{type(exc).__name__}: {exc}"}
        listed = removed if isinstance(removed, (list, tuple)) else [removed]
        return {"supported": True, "error": None,
                "removed": [getattr(m, "text", str(m)) for m in listed if m is not None]}

    def _forgotten(self, item: Item, scope: dict[str, str],
                   log: dict[str, Any] | None) -> tuple[bool | None, list[dict[str, Any]]]:
        """Whether nothing of the forgotten text can be found any more, and where it was found."""
        if item.kind != "forget":
            return None, []
        leaks = []
        queries = [item.question, " ".join(item.stale)] + [item.turns[i].text for i in item.forget_turns]
        for mode in LEAK_MODES:
            for q in queries:
                for h in self.mem.search(q, **scope, limit=LEAK_LIMIT, mode=mode):
                    if _tokens(h.text) & set(item.stale):
                        leaks.append({"via": f"search {mode}", "query": q, "text": h.text})
        for m in self.mem.get_all(**scope):
            if _tokens(m.text) & set(item.stale):
                leaks.append({"via": "get_all", "text": m.text})
        ran = log is not None and log.get("supported") and not log.get("error")
        return bool(ran) and not leaks, leaks


def _all_noop(decisions: list[dict[str, Any]]) -> bool:
    return bool(decisions) and all(d["event"] == "NOOP" for d in decisions)


def _answer_noop(item: Item, turns: list[dict[str, Any]]) -> bool | None:
    """Whether the turn carrying the answer was dropped (versions and filler; the gate's failure mode)."""
    if item.answer_turn is None or item.kind in ("paraphrase", "forget"):
        return None
    entry = next(t for t in turns if t["turn"] == item.answer_turn)
    return _all_noop(entry.get("decisions", []))


def _make_memory(opts: UpdatesOptions, gate: str, embedder: Any) -> Any:
    from memsieve import GateConfig, Memory

    llm = None
    if opts.llm_base_url:
        from memsieve.llm import LLMConfig

        llm = LLMConfig(base_url=opts.llm_base_url, model=opts.llm_model, api_key=opts.llm_api_key,
                        timeout=opts.llm_timeout)
    return Memory(":memory:", embedder=embedder, llm=llm, gate=GateConfig(**GATES[gate]))


def run_updates(opts: UpdatesOptions) -> dict[str, Any]:
    """Run every arm on the chosen split; write the outputs if ``opts.out``; return the summary.

    Returns:
        {"arms": {gate: summary}, "meta": {...}} (see :func:`updates_report.summarize`).
    """
    unknown = [g for g in opts.gates if g not in GATES]
    if unknown or not opts.gates:
        raise ConfigError(f"unknown gate arm(s) {unknown or opts.gates}; use any of {', '.join(GATES)}")
    if opts.infer and not opts.llm_base_url:
        raise ConfigError("--infer needs an LLM; pass --llm-base-url http://127.0.0.1:8080/v1")
    items = load_items(opts.data, split=opts.split)
    if opts.ids is not None:
        missing = sorted(set(opts.ids) - {it.id for it in items})
        if missing:
            raise ConfigError(f"no item with id(s) {missing} in split {opts.split!r}; check --ids")
        items = [it for it in items if it.id in set(opts.ids)]
    from memsieve.embedding import CachedEmbedder, default_embedder

    # One cache for all arms: each text is embedded once, however many arms run.
    embedder = CachedEmbedder(opts.embedder if opts.embedder is not None else default_embedder())
    wall0 = time.perf_counter()
    arms: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for gate in opts.gates:
        t0 = time.perf_counter()
        mem = _make_memory(opts, gate, embedder)
        try:
            runner = ItemRunner(mem, limit=opts.limit, infer=opts.infer)
            arm_rows = [{"arm": gate, **runner.run(it)} for it in items]
            llm = mem.llm.usage_dict() if mem.llm is not None else None  # calls and tokens of this arm
        finally:
            mem.close()
        arms[gate] = {**summarize(arm_rows, seconds=time.perf_counter() - t0), "llm": llm}
        rows += arm_rows
    meta = {"split": opts.split, "items": len(items), "gates": {g: GATES[g] for g in opts.gates},
            "limit": opts.limit, "embedder": getattr(embedder, "name", type(embedder).__name__),
            "llm": opts.llm_base_url, "infer": opts.infer, "code": _commit(),
            "wall_s": round(time.perf_counter() - wall0, 2)}
    result = {"arms": arms, "meta": meta}
    if opts.out:
        _write(Path(opts.out), result, rows)
    return result


def _commit() -> str | None:
    try:
        proc = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=Path(__file__).parent,
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None


def _write(out: Path, result: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "items.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n")
    (out / "summary.json").write_text(json.dumps(result, indent=1, allow_nan=False) + "\n")
    (out / "summary.md").write_text(markdown(result))


def load_embedder(spec: str | None) -> Any:
    """``module:callable`` returning an embedder, or None for the packaged one."""
    if not spec or spec == "default":
        return None
    import importlib

    module, sep, name = spec.partition(":")
    if not sep:
        raise ConfigError(f"--embedder expects module:callable, got {spec!r}; e.g. mypkg.emb:make_embedder")
    try:
        return getattr(importlib.import_module(module), name)()
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load the embedder {spec!r}: {exc}; check the module and callable names") from None


def add_arguments(subparsers: Any) -> None:
    """Add ``updates`` to ``memsieve eval``'s subparsers (see memsieve.eval.commands)."""
    p = subparsers.add_parser("updates", help="the updates set: details, corrections, paraphrases, forgetting")
    p.add_argument("--data", help="folder with dev.jsonl and test.jsonl (default: eval/updates of the source tree)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="dev", help="which items (default dev)")
    p.add_argument("--gate", default="default",
                   help=f"gate arm(s), comma-separated, from {', '.join(GATES)} (none = add everything)")
    p.add_argument("--out", help="write items.jsonl, summary.json and summary.md here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead of markdown")
    p.add_argument("--embedder", help="module:callable returning an embedder (default: the packaged ONNX model)")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint for the band's CRUD step")
    p.add_argument("--llm-model", default="local", help="model name at that endpoint")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--infer", action="store_true", help="extract facts with the LLM before the gate")
    p.add_argument("--ids", help="only these item ids, comma-separated")
    p.set_defaults(func=main_updates)


def main_updates(args: argparse.Namespace) -> int:
    """Run ``eval updates`` from parsed arguments; print the summary."""
    check_out(args.out)
    import os

    opts = UpdatesOptions(
        data=args.data, split=args.split, out=args.out,
        gates=tuple(g.strip() for g in args.gate.split(",") if g.strip()),
        embedder=load_embedder(args.embedder), llm_base_url=args.llm_base_url, llm_model=args.llm_model,
        llm_api_key=os.environ.get(args.llm_api_key_env, "not-needed"), infer=args.infer,
        ids=[i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None,
    )
    result = run_updates(opts)
    print(json.dumps(_clean(result), indent=1) if args.json else markdown(result))
    if opts.out:
        print(f"wrote items.jsonl, summary.json, summary.md to {opts.out}", file=sys.stderr)
    return 0
