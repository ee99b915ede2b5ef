"""The ``memsieve`` command line.

Runtime commands (add, search, ...) never import the evaluation harness:
``memsieve eval ...`` is handed to :mod:`memsieve.eval.commands` only when it
is the command asked for, after checking that the ``memsieve[eval]`` extra is
installed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from importlib import resources
from typing import Any

from memsieve.errors import ConfigError, OneLineParser, StoreError, guarded
from memsieve.jsonable import strict_values

# Commands that store what they are given may create their database; every other one
# (reads, restore, forget, consolidate, unconsolidate, mcp) must find an existing one,
# so a typo'd --db fails loudly instead of answering from a new, empty file.
CREATING_COMMANDS = ("add", "ingest", "demo")


def _scope_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", dest="user_id", help="user id of the scope")
    p.add_argument("--agent", dest="agent_id", help="agent id of the scope")
    p.add_argument("--run", dest="run_id", help="run id of the scope")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: $MEMSIEVE_DB or ~/.local/share/memsieve/memsieve.db)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _scope(ns: argparse.Namespace) -> dict[str, Any]:
    return {"user_id": ns.user_id, "agent_id": ns.agent_id, "run_id": ns.run_id}


def _db_target(ns: argparse.Namespace) -> str:
    from memsieve.store import default_path

    return str(ns.db) if ns.db is not None else default_path()


def _check_exists(target: str, *, command: str) -> None:
    """A command that is not meant to create a store fails on a missing SQLite file instead of creating it,
    and a command that only reads or edits fails on a PostgreSQL database without memsieve's tables (the
    services, ``mcp``, ``serve`` and ``ui``, set up a PostgreSQL database they are pointed at)."""
    if target == ":memory:":
        return
    if target.startswith(("postgresql://", "postgres://")):
        if command == "mcp":
            return
        from memsieve.store.postgres import holds_a_store, mask_password

        if not holds_a_store(target):
            raise StoreError(f"no memsieve store in {mask_password(target)} (its search_path holds no memsieve "
                             "tables); pass the URL of an existing one, or write to this one first, e.g. "
                             "`memsieve add TEXT --user ID --db URL`")
        return
    if not os.path.exists(target):
        hint = (" or pass --create to start a new one" if command == "mcp"
                else f" (or write to this one first, e.g. `memsieve add TEXT --user ID --db {target}`)")
        raise StoreError(f"no database at {target!r}; pass --db with the path of an existing database{hint}")


def _memory(ns: argparse.Namespace) -> Any:
    from memsieve import Memory

    target = _db_target(ns)
    if ns.command not in CREATING_COMMANDS and not getattr(ns, "create", False):
        _check_exists(target, command=ns.command)
    # Only the default path gets its folder made; an explicit --db must have one.
    return Memory(None if ns.db is None else target)


def _num(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.3f}"


def strict_json(obj: Any) -> str:
    """Strict JSON (RFC 8259): a missing or non-finite number is ``null``, never ``NaN``."""
    # One line per document: --json output appended to a log is JSON Lines (docs/CONSOLIDATION.md's cron line).
    return json.dumps(strict_values(obj), separators=(",", ":"), default=str, allow_nan=False, ensure_ascii=False)


def _out(ns: argparse.Namespace, rows: Any, text: str) -> None:
    print(strict_json(rows) if ns.json else text)


def print_decisions(decisions: list[Any], *, file: Any = None) -> None:
    for d in decisions:
        print(f"  {d.event:<6} [{d.layer:<7}] novelty {_num(d.novelty):>6}  tau {_num(d.tau)}  "
              f"nearest cos {_num(d.nearest_cos)}  {d.text[:60]!r}", file=file)
        print(f"         why: {d.reason}", file=file)


def cmd_add(ns: argparse.Namespace) -> int:
    from memsieve.inputs import candidate_texts, check_sources
    from memsieve.scope import Scope

    # Checked before the store is opened: a refused add leaves no new database behind.
    Scope.of(**_scope(ns))
    candidate_texts(ns.text)
    check_sources(ns.source)
    with _memory(ns) as mem:
        decisions = mem.add(ns.text, **_scope(ns), source=ns.source)
        if ns.json:
            _out(ns, [d.to_dict() for d in decisions], "")
        else:
            print_decisions(decisions)
    return 0


def cmd_search(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        mode = {} if ns.mode is None else {"mode": ns.mode}
        hits = mem.search(ns.query, **_scope(ns), limit=ns.limit, **mode)
        _out(ns, [h.to_dict() for h in hits],
             "\n".join(f"{h.score:8.4f}  {h.id}  {h.text}"
                       + "".join(f"\n{'':8}  told again ({f.id}): {f.text}" for f in h.folded)
                       for h in hits) or "(no results)")
    return 0


def cmd_forget(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        removed = mem.forget(ns.what, **_scope(ns), purge=ns.purge, dry_run=ns.dry_run)
        verb = "would remove" if ns.dry_run else ("purged" if ns.purge else "forgot (soft delete)")
        shown = "\n".join(f"  {it.id}  {it.text or '(text erased)'}" for it in removed)
        folds = "\n".join(f"  {r.id}  {r.text}" for r in removed.folds)
        folded = (f"\n{'would take' if ns.dry_run else 'took'} {len(removed.folds)} folded texts out of search:\n{folds}"
                  if folds else "")
        pending = "\n" + _erasure_line(mem.finish_erasure()) if ns.purge and not ns.dry_run else ""
        # The JSON is REST's and MCP's reply: the memories, and the folded texts taken out of search.
        _out(ns, {"removed": [it.to_dict() for it in removed], "folds": [r.to_dict() for r in removed.folds],
                  "purged": bool(ns.purge and not ns.dry_run), "dry_run": bool(ns.dry_run)},
             f"{verb} {len(removed)} memories" + (f":\n{shown}" if shown else "") + folded + pending)
    return 0


def _erasure_line(erasure: Any) -> str:
    return ("the bytes are gone from the store's files" if not erasure.pending
            else f"erasure pending: {erasure.why}")


def cmd_purge(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        done = mem.purge(ns.id, **_scope(ns), reason=ns.reason)
        # Always, with --compact: a purge that finds its memory purged already (the documented way to
        # finish a pending erasure later) has nothing pending of its own, yet the store may.
        if ns.compact:
            compacted = mem.compact()
            done = type(done)(memory_ids=done.memory_ids, pending=compacted.pending, why=compacted.why)
        shown = "".join(f"\n  {i}" for i in done.memory_ids)
        _out(ns, done.to_dict(), f"purged {len(done.memory_ids)} memories:{shown}\n{_erasure_line(done)}")
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


def _ingest_scopes(ns: argparse.Namespace, convs: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The scope of each conversation: the one of --user/--agent/--run, else a user id that is its own id.

    The ids are checked (``Scope.of``) here, before anything is written; the
    conversations' own ids were already checked by ``conversations(scope_ids=True)``.
    """
    from memsieve.scope import Scope

    given = _scope(ns)
    if any(v is not None for v in given.values()):
        return [Scope.of(**given).as_dict()] * len(convs)
    return [Scope.of(user_id=conv_id).as_dict() for conv_id, _ in convs]


def cmd_ingest(ns: argparse.Namespace) -> int:
    """Store every conversation of a file; the whole file is checked before anything is written.

    Each conversation's texts, dates, sources and scope id are checked first
    (memsieve.write.ingest.conversations, ``Scope.of``), so a malformed
    conversation fails the command with nothing of the file stored.
    """
    from tqdm import tqdm

    from memsieve.write.ingest import conversations

    from memsieve.inputs import check_count

    check_count(ns.batch_size, name="--batch-size")  # before the store is opened, as the file is
    convs = conversations(ns.file, scope_ids=not any(v is not None for v in _scope(ns).values()))
    scopes = _ingest_scopes(ns, convs)
    total = sum(len(t) for _, t in convs)
    counts: dict[str, int] = {}
    with _memory(ns) as mem, tqdm(total=total, unit="turn", disable=ns.json or not sys.stderr.isatty()
                                  and not ns.progress) as bar:
        for (conv_id, turns), scope in zip(convs, scopes):
            # add_many decides each turn as its own add() would, embedding and
            # committing them in chunks of --batch-size.
            done = [0]

            def advance(n: int) -> None:
                bar.update(n - done[0])
                done[0] = n

            items = [{"content": t.text, "source": t.source, "valid_from": t.valid_from} for t in turns]
            for decisions in mem.add_many(items, **scope, batch_size=ns.batch_size, progress=advance):
                for d in decisions:
                    counts[d.event] = counts.get(d.event, 0) + 1
    _out(ns, {"conversations": len(convs), "turns": total, "events": counts},
         f"ingested {total} turns from {len(convs)} conversation(s): " +
         ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


def cmd_consolidate(ns: argparse.Namespace) -> int:
    """Consolidate one scope, or every scope with ``--all-scopes`` (see Memory.consolidate)."""
    from tqdm import tqdm

    from memsieve.scope import Scope

    if ns.all_scopes and any(v is not None for v in _scope(ns).values()):
        raise ConfigError("--all-scopes consolidates every scope: drop --user/--agent/--run, or drop "
                          "--all-scopes to consolidate the one scope they name")
    with _memory(ns) as mem:
        if ns.all_scopes:
            found = [Scope.from_key(k) for k in mem.store.scope_keys()]
            scopes = [s.as_dict() for s in found if s.is_normalized]
        else:
            scopes = [_scope(ns)]
        quiet = ns.json or not sys.stderr.isatty() and not ns.progress
        reports = []
        with tqdm(total=len(scopes) if ns.all_scopes else None, unit="scope" if ns.all_scopes else "cluster",
                  disable=quiet) as bar:
            def step(done: int, total: int) -> None:
                bar.total = total
                bar.n = done
                bar.refresh()

            for scope in scopes:
                reports.append(mem.consolidate(**scope, dry_run=ns.dry_run, min_sim=ns.min_sim,
                                               progress=None if ns.all_scopes else step,
                                               max_seconds=ns.max_seconds))
                if ns.all_scopes:
                    bar.update(1)
    verb = "would merge" if ns.dry_run else "merged"
    lines = [f"{r.scope}: {verb} {len(r.merges)} clusters, active {r.active_before} -> {r.active_after}"
             + ("" if r.complete else f" (--max-seconds ran out: {r.clusters_left} clusters and {r.pairs_left} close "
                                      "pairs left; run it again)")
             + "".join(f"\n  {m.kind:<10} {m.id or '-'}  keeps {m.text[:60]!r}\n    why: {m.reason}" for m in r.merges)
             for r in reports]
    _out(ns, [r.to_dict() for r in reports], "\n".join(lines) or "(no scopes)")
    return 0


def cmd_unconsolidate(ns: argparse.Namespace) -> int:
    with _memory(ns) as mem:
        revived = mem.unconsolidate(ns.id)
        _out(ns, [it.to_dict() for it in revived], f"restored {len(revived)} memories")
    return 0


def cmd_demo(ns: argparse.Namespace) -> int:
    """Run the whole write path on a small packaged conversation, in a throwaway store.

    With ``--json`` the prose goes to stderr and stdout carries one JSON object
    (decisions, search hits, rejections, stats).
    """
    from memsieve import Memory
    from memsieve.write.ingest import conversations

    say = sys.stderr if ns.json else sys.stdout
    path = resources.files("memsieve") / "data" / "demo_conversation.json"
    with resources.as_file(path) as p:
        (conv_id, turns), = conversations(p)
        question = json.loads(p.read_text())["question"]
    with Memory(ns.db or ":memory:") as mem:
        print(f"memsieve demo: {len(turns)} turns of conversation '{conv_id}', gate profile "
              f"'{mem.gate_config.profile}', no LLM (the band adds and links)\n", file=say)
        print(f"embedder: {type(mem.embedder).__name__}, provider {getattr(mem.embedder, 'provider', '?')}\n",
              file=say)
        all_decisions = []
        for t in turns:
            decisions = mem.add(t.text, user_id="ana", source=t.source, valid_from=t.valid_from)
            all_decisions += decisions
            print_decisions(decisions, file=say)
        print(f"\nsearch: {question!r}", file=say)
        hits = mem.search(question, user_id="ana", limit=3)
        for h in hits:
            print(f"  {h.score:.3f}  {h.text}   sources {h.sources}", file=say)
        rejections = mem.rejections(user_id="ana")
        print(f"\nrejections ({len(rejections)}), each restorable with `memsieve restore ID`:", file=say)
        for r in rejections:
            print(f"  [{r.layer}] {r.text!r}\n      {r.reason}; folded into {r.nearest_id}", file=say)
        st = mem.stats(user_id="ana")
        print(f"\nstats: events {st['events']}, layers {st['layers']}, tau {_num(st['tau'])}, "
              f"kappa {_num(st['kappa'])}, active memories {st['active_memories']}", file=say)
    if ns.json:
        print(strict_json({"decisions": [d.to_dict() for d in all_decisions], "question": question,
                           "search": [h.to_dict() for h in hits], "rejections": [r.to_dict() for r in rejections],
                           "stats": st}))
    return 0


def cmd_mcp(ns: argparse.Namespace) -> int:
    """Serve the store to MCP clients; the SDK is imported only here (the ``memsieve[mcp]`` extra)."""
    from memsieve.integrations.mcp import check_port, check_scope_policy, load_token, serve

    # Every refusal comes before the store is opened.
    port = None if ns.http is None else check_port(ns.http)
    check_scope_policy(_scope(ns), unsafe_any_scope=ns.unsafe_any_scope)
    token = load_token(ns.token_file) if port is not None else None
    serve(_memory(ns), http_port=port, unsafe_any_scope=ns.unsafe_any_scope, token=token, **_scope(ns))
    return 0


def cmd_serve(ns: argparse.Namespace) -> int:
    """``memsieve serve`` (the REST service) and ``memsieve serve keygen``; the server is imported only here."""
    if ns.serve_command == "keygen":
        from memsieve.server.keys import add_key

        grant = {"user_id": ns.user_id, "agent_id": ns.agent_id, "run_id": ns.run_id, "exact": ns.exact,
                 "admin": ns.admin}
        key, entry = add_key(ns.keys, name=ns.name, **grant)
        print(f"memsieve: added key {entry['name']!r} to {ns.keys}; it is shown only this once", file=sys.stderr)
        print(key)
        return 0
    from memsieve.server.run import serve

    if ns.keys is None:
        raise ConfigError("memsieve serve needs --keys KEYS.json (the API keys it accepts); make one with "
                          "`memsieve serve keygen --keys KEYS.json --user ID`")
    target = _db_target(ns)
    if not ns.create:
        _check_exists(target, command="mcp")
    return serve(target, keys_path=ns.keys, host=ns.host, port=ns.port, workers=ns.workers,
                 max_body_bytes=ns.max_body_bytes, create=ns.create, max_cache_mb=ns.max_cache_mb,
                 llm_base_url=ns.llm_base_url, llm_model=ns.llm_model, llm_api_key_env=ns.llm_api_key_env,
                 router_path=ns.router, read_timeout=ns.read_timeout, consolidate_seconds=ns.consolidate_seconds)


def cmd_ui(ns: argparse.Namespace) -> int:
    """``memsieve ui``: the inspector page on 127.0.0.1, no key asked (needs the ``memsieve[server]`` extra)."""
    from memsieve.server.run import serve_ui

    target = _db_target(ns)
    if not ns.create:
        _check_exists(target, command="mcp")
    return serve_ui(target, port=ns.port, create=ns.create)


def _serve_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help='serve memories over HTTP as a JSON REST API, with API keys '
                                     '(needs pip install "memsieve[server]")')
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: $MEMSIEVE_DB or ~/.local/share/memsieve/memsieve.db)")
    p.add_argument("--create", action="store_true", help="create the SQLite file if it does not exist")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8420, help="TCP port (default 8420; 0 picks a free one)")
    p.add_argument("--keys", help="the keys file (JSON, SHA-256 digests; see memsieve serve keygen)")
    p.add_argument("--workers", type=int, default=1, help="worker processes sharing the port (default 1)")
    p.add_argument("--max-body-bytes", type=int, default=None, help="request body limit (default 1048576, 1 MiB)")
    p.add_argument("--read-timeout", type=float, default=30.0,
                   help="seconds a client has to send a request's head, and again its body; 408 past either "
                        "(default 30)")
    p.add_argument("--consolidate-seconds", type=float, default=30.0,
                   help="the longest one POST /v1/consolidate runs, holding the scope's write lock; what is left "
                        "is reported for the next call (default 30)")
    p.add_argument("--max-cache-mb", type=float, default=None,
                   help="bound of each worker's cache of scopes' gate state, in MiB (default 512); scopes past it "
                        "are evicted and re-read from the store when next used")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint for infer (fact extraction) and the band's "
                                          "CRUD step, e.g. http://127.0.0.1:8080/v1 (default: no LLM)")
    p.add_argument("--llm-model", default="local", help="model name sent to that endpoint (default local)")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding its API key (default OPENAI_API_KEY)")
    p.add_argument("--router", help="a saved QueryRouter (JSON) for search mode auto (default: auto is refused)")
    p.set_defaults(func=cmd_serve, serve_command=None)
    keys_sub = p.add_subparsers(dest="serve_command")
    k = keys_sub.add_parser("keygen", help="add a new API key to the keys file and print it once")
    k.add_argument("--keys", required=True, help="the keys file (created, mode 0600, if missing)")
    k.add_argument("--name", help="the key's name in the file and in the logs (default: key-<digest prefix>)")
    k.add_argument("--admin", action="store_true", help="grant every scope, and /metrics")
    k.add_argument("--exact", action="store_true", help="with --user alone: grant only the scope (user, -, -)")
    _scope_args(k)


def cmd_eval(ns: argparse.Namespace) -> int:
    return run_eval(list(ns.args))


def run_eval(argv: list[str], *, prog: str = "memsieve eval") -> int:
    """Parse and run ``memsieve eval ...``; needs the ``memsieve[eval]`` extra.

    The evaluation package is imported here and only here, so no runtime
    command pays for it (or needs its dependencies).
    """
    from memsieve.eval.commands import run

    return run(argv, prog=prog)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="memsieve", description="Long-term memory whose writes are gated by arithmetic.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("add", help="add text to a scope")
    p.add_argument("text")
    p.add_argument("--source", help="where the text came from")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_add)  # noqa: E702

    p = sub.add_parser("search", help="search a scope")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    # No choices and no default here: Memory.search owns both (an unknown mode is its ConfigError).
    p.add_argument("--mode", help="search mode, e.g. dense, keyword or hybrid (default: Memory.search's)")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_search)  # noqa: E702

    p = sub.add_parser("forget", help="remove the memories a request names (soft delete, or --purge)")
    p.add_argument("what", help='the request or its subject, e.g. "my old address"')
    p.add_argument("--purge", action="store_true", help="erase the text and embedding everywhere, keeping a tombstone")
    p.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_forget)  # noqa: E702

    p = sub.add_parser("purge", help="erase one memory's text and embedding everywhere (and what merges retired "
                                     "into it), keeping a tombstone")
    p.add_argument("id", help="the memory id, active or deleted")
    p.add_argument("--reason", default="purged by the user", help="recorded in the memory's history")
    p.add_argument("--compact", action="store_true",
                   help="PostgreSQL: then run VACUUM FULL so no byte is left in the tables' files "
                        "(locks each table ACCESS EXCLUSIVE while it is rewritten)")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_purge)  # noqa: E702

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

    p = sub.add_parser("ingest", help="ingest JSON/JSONL conversations (LoCoMo included)", description=(
        "Store the conversations of a JSON or JSONL file: LoCoMo (conversation.session_N, session_N_date_time), "
        '{"id", "sessions": [{"date", "turns": [{"speaker", "text"}]}]} or {"id", "messages": [{"role", '
        '"content", "date"}]}; content may be a list of OpenAI content parts (their text is kept). Dates are '
        "ISO-8601. The whole file is checked first: a malformed conversation stores nothing. Without "
        "--user/--agent/--run each conversation goes to the user id that is its own id."))
    p.add_argument("file")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    p.add_argument("--batch-size", type=int, default=256,
                   help="turns per embedding call and per transaction (decisions are the same at any size)")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_ingest)  # noqa: E702

    p = sub.add_parser("consolidate", help="merge duplicates and close older versions (undoable)")
    p.add_argument("--dry-run", action="store_true", help="only list the clusters, texts and reasons")
    p.add_argument("--all-scopes", action="store_true", help="consolidate every scope of the database")
    p.add_argument("--min-sim", type=float, default=None, help="cosine two members must have (default 0.7)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="begin no new cluster of a scope after this long; what is left waits for the next run")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    _scope_args(p); _common(p); p.set_defaults(func=cmd_consolidate)  # noqa: E702

    p = sub.add_parser("unconsolidate", help="undo one merge of consolidate")
    p.add_argument("id", help="the merge id consolidate printed")
    _common(p); p.set_defaults(func=cmd_unconsolidate)  # noqa: E702

    p = sub.add_parser("demo", help="run the write path on a small sample conversation")
    _common(p); p.set_defaults(func=cmd_demo)  # noqa: E702

    p = sub.add_parser("mcp", help='serve memories to MCP clients over stdio or HTTP (needs pip install "memsieve[mcp]")')
    p.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: $MEMSIEVE_DB or ~/.local/share/memsieve/memsieve.db)")
    p.add_argument("--create", action="store_true", help="create the SQLite file if it does not exist")
    p.add_argument("--token-file", help="file whose first line is the bearer token HTTP clients must send "
                                        "(default: $MEMSIEVE_MCP_TOKEN); --http refuses to start without one")
    p.add_argument("--unsafe-any-scope", action="store_true",
                   help="let every client name any scope (read and erase every user's memories); without it "
                        "the server serves only --user/--agent/--run")
    _scope_args(p); p.set_defaults(func=cmd_mcp)  # noqa: E702

    _serve_parser(sub)
    p = sub.add_parser("ui", help="open the inspector page (memories, rejections, merges) on 127.0.0.1, no key "
                                  '(needs pip install "memsieve[server]")')
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: $MEMSIEVE_DB or ~/.local/share/memsieve/memsieve.db)")
    p.add_argument("--create", action="store_true", help="create the SQLite file if it does not exist")
    p.add_argument("--port", type=int, default=8421, help="TCP port on 127.0.0.1 (default 8421; 0 picks a free one)")
    p.set_defaults(func=cmd_ui)

    # A placeholder, so `memsieve --help` lists eval; main() hands "eval ..." to run_eval before parsing.
    p = sub.add_parser("eval", help='evaluate on a benchmark (needs pip install "memsieve[eval]"); '
                                    'see memsieve eval --help', add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_eval)
    return parser


def run(ns: argparse.Namespace) -> int:
    """Run a parsed command; a MemsieveError becomes its message on stderr and exit code 2."""
    return guarded(lambda: ns.func(ns))


def main(argv: list[str] | None = None) -> int:
    """The ``memsieve`` entry point; returns the exit code (0 ok, 2 a reported error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["eval"]:
        return guarded(lambda: run_eval(args[1:]))
    return run(build_parser().parse_args(args))


if __name__ == "__main__":
    raise SystemExit(main())
