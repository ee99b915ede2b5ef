"""The ``memsieve`` command line."""

from __future__ import annotations

import argparse
import json
import math
import sys
from importlib import resources
from typing import Any

from memsieve.errors import MemsieveError


def _scope_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", dest="user_id", help="user id of the scope")
    p.add_argument("--agent", dest="agent_id", help="agent id of the scope")
    p.add_argument("--run", dest="run_id", help="run id of the scope")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: $MEMSIEVE_DB or ~/.local/share/memsieve/memsieve.db)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _scope(ns: argparse.Namespace) -> dict[str, Any]:
    return {"user_id": ns.user_id, "agent_id": ns.agent_id, "run_id": ns.run_id}


def _memory(ns: argparse.Namespace, path: str | None = None) -> Any:
    from memsieve import Memory

    return Memory(path if path is not None else ns.db)


def _num(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.3f}"


def _out(ns: argparse.Namespace, rows: Any, text: str) -> None:
    if ns.json:
        print(json.dumps(rows, indent=2, default=str, allow_nan=True))
    else:
        print(text)


def print_decisions(decisions: list[Any]) -> None:
    for d in decisions:
        print(f"  {d.event:<6} [{d.layer:<7}] novelty {_num(d.novelty):>6}  tau {_num(d.tau)}  "
              f"nearest cos {_num(d.nearest_cos)}  {d.text[:60]!r}")
        print(f"         why: {d.reason}")


def cmd_add(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        decisions = mem.add(ns.text, **_scope(ns), source=ns.source)
        if ns.json:
            _out(ns, [d.to_dict() for d in decisions], "")
        else:
            print_decisions(decisions)
    return 0


def cmd_search(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        hits = mem.search(ns.query, **_scope(ns), limit=ns.limit, mode=ns.mode)
        _out(ns, [h.to_dict() for h in hits],
             "\n".join(f"{h.score:8.4f}  {h.id}  {h.text}" for h in hits) or "(no results)")
    return 0


def cmd_get(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        item = mem.get(ns.id)
        _out(ns, item.to_dict(), "\n".join(f"{k}: {v}" for k, v in item.to_dict().items()))
    return 0


def cmd_history(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        rows = mem.history(ns.id)
        _out(ns, [h.to_dict() for h in rows], "\n".join(
            f"{h.created_at}  {h.event:<7} [{h.layer}] {h.old_text!r} -> {h.new_text!r}  ({h.reason})" for h in rows))
    return 0


def cmd_rejections(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        rows = mem.rejections(**_scope(ns), since=ns.since, layer=ns.layer)
        _out(ns, [r.to_dict() for r in rows], "\n".join(
            f"{r.id}  [{r.layer:<7}] novelty {_num(r.novelty)} tau {_num(r.tau)}  {r.text[:60]!r}\n"
            f"      {r.reason}" for r in rows) or "(no rejections)")
    return 0


def cmd_restore(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        item = mem.restore(ns.id)
        _out(ns, item.to_dict(), f"restored as memory {item.id}: {item.text}")
    return 0


def cmd_stats(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        st = mem.stats(**_scope(ns))
        _out(ns, st, "\n".join(f"{k}: {v}" for k, v in st.items()))
    return 0


def cmd_ingest(ns: argparse.Namespace) -> int:
    from tqdm import tqdm

    from memsieve.ingest import conversations

    convs = conversations(ns.file)
    total = sum(len(t) for _, t in convs)
    counts: dict[str, int] = {}
    with _memory(ns) as mem, tqdm(total=total, unit="turn", disable=ns.json or not sys.stderr.isatty()
                                  and not ns.progress) as bar:
        for conv_id, turns in convs:
            scope = _scope(ns)
            if not any(scope.values()):
                scope["user_id"] = conv_id
            for t in turns:
                for d in mem.add(t.text, **scope, source=t.source, valid_from=t.valid_from):
                    counts[d.event] = counts.get(d.event, 0) + 1
                bar.update(1)
    _out(ns, {"conversations": len(convs), "turns": total, "events": counts},
         f"ingested {total} turns from {len(convs)} conversation(s): " +
         ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


def cmd_demo(ns: argparse.Namespace) -> int:
    """Run the whole write path on a small packaged conversation, in a throwaway store."""
    from memsieve import Memory
    from memsieve.ingest import conversations

    path = resources.files("memsieve") / "data" / "demo_conversation.json"
    with resources.as_file(path) as p:
        (conv_id, turns), = conversations(p)
        question = json.loads(p.read_text())["question"]
    mem = Memory(ns.db or ":memory:")
    print(f"memsieve demo: {len(turns)} turns of conversation '{conv_id}', gate profile "
          f"'{mem.gate_config.profile}', no LLM (the band adds and links)\n")
    print(f"embedder: {type(mem.embedder).__name__}, provider {getattr(mem.embedder, 'provider', '?')}\n")
    all_decisions = []
    for t in turns:
        decisions = mem.add(t.text, user_id="ana", source=t.source, valid_from=t.valid_from)
        all_decisions += decisions
        print_decisions(decisions)
    print(f"\nsearch: {question!r}")
    for h in mem.search(question, user_id="ana", limit=3):
        print(f"  {h.score:.3f}  {h.text}   sources {h.sources}")
    rejections = mem.rejections(user_id="ana")
    print(f"\nrejections ({len(rejections)}), each restorable with `memsieve restore ID`:")
    for r in rejections:
        print(f"  [{r.layer}] {r.text!r}\n      {r.reason}; folded into {r.nearest_id}")
    st = mem.stats(user_id="ana")
    print(f"\nstats: events {st['events']}, layers {st['layers']}, tau {_num(st['tau'])}, "
          f"kappa {_num(st['kappa'])}, active memories {st['active_memories']}")
    if ns.json:
        print(json.dumps([d.to_dict() for d in all_decisions], default=str))
    mem.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memsieve", description="Long-term memory whose writes are gated by arithmetic.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("add", help="add text to a scope")
    p.add_argument("text")
    p.add_argument("--source", help="where the text came from")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_add)  # noqa: E702

    p = sub.add_parser("search", help="search a scope")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--mode", choices=["dense", "keyword", "hybrid"], default="dense")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_search)  # noqa: E702

    for name, func, helptext in (("get", cmd_get, "show one memory"), ("history", cmd_history, "a memory's history"),
                                 ("restore", cmd_restore, "store a rejected candidate after all")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("id")
        _common(p); p.set_defaults(func=func)  # noqa: E702

    p = sub.add_parser("rejections", help="list what the write path did not store, and why")
    p.add_argument("--since", help="ISO time")
    p.add_argument("--layer", choices=["exact", "novelty", "band", "llm"])
    _scope_args(p); _common(p); p.set_defaults(func=cmd_rejections)  # noqa: E702

    p = sub.add_parser("stats", help="counts per event and layer, tau and kappa")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_stats)  # noqa: E702

    p = sub.add_parser("ingest", help="ingest JSON/JSONL conversations (LoCoMo included)")
    p.add_argument("file")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_ingest)  # noqa: E702

    p = sub.add_parser("demo", help="run the write path on a small sample conversation")
    _common(p); p.set_defaults(func=cmd_demo)  # noqa: E702

    try:
        from memsieve.eval.runner import add_eval_arguments
    except ImportError:
        pass
    else:
        add_eval_arguments(sub)
    return parser


def run(ns: argparse.Namespace) -> int:
    """Run a parsed command; a MemsieveError becomes its message on stderr and exit code 2."""
    try:
        return int(ns.func(ns) or 0)
    except MemsieveError as exc:
        print(f"memsieve: error: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
