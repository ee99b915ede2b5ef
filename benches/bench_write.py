"""Write-path throughput on the LoCoMo dev turns, split into embed, gate and store.

Every dialogue turn of ../shared/data/locomo/locomo_dev.json is added as a raw
chunk (``infer=False``) with the default ONNX embedder, one scope per
conversation, into a fresh SQLite file, twice in one run: one ``add()`` call
per turn, and each conversation through ``Memory.add_many`` (the bulk path:
batched embedding, one transaction per chunk). With ``--rounds N`` the two
paths alternate (add, bulk, bulk, add, ...), so a load that comes and goes on
a shared machine falls on both alike; the JSON holds each path's fastest round.

    python benches/bench_write.py [--data PATH] [--limit N] [--rounds N]
                                  [--only add|bulk] [--batch-size N] [--no-split] [--no-fuse]
                                  [--ceiling] [--json FILE]

The JSON's top-level ``seconds``, ``embed_s``, ``gate_s`` and ``store_s`` are
the per-turn path's; ``bulk`` holds the same four for the bulk path, and
``speedup`` is the per-turn seconds over the bulk seconds.

"gate" is the time inside the Rust-backed gate (scoring, routing, state
updates); "store" is the rest of the write transaction (SQLite, history,
rejections, commit); "embed" is ONNX Runtime including tokenization.

``add_many`` embeds its next batch on a second thread while the current one
is decided, so on the bulk path the embed clock runs beside the gate's and the
three do not add up to the total: ``store_s`` is null there. The overhead
figure of both paths is the wall time not covered by embedding, over the
embedding time: ``(seconds - embed_s) / embed_s`` (on the per-turn path,
``(gate_s + store_s) / embed_s`` as before).

A fold's swapped word is read back by the embedder (memsieve.write.swaps): that embedding is
the layer's cost, not the texts'. ``readback_s`` is the time inside ``swapped_value`` (its
embedder call included), and the overhead counts it as the layer's:
``(seconds - (embed_s - readback_s)) / (embed_s - readback_s)``.

The gate's clock wraps six of its methods in Python timers, and on the per-turn path that
costs time of its own, which lands in ``store_s`` and in the overhead. ``--no-split`` times
the embedder alone: ``gate_s`` and ``store_s`` are null, and the overhead is the layer's as a
caller meets it.

``--ceiling`` adds the bound the machine puts on the bulk path's speedup: the same texts and
their parts (``memsieve.text.passages.embed_passages``) embedded with no memory at all, one
turn a call as ``add()`` embeds them and in ``add_many``'s batches, alternating with the
rounds. Their ratio is the speedup a write layer that cost nothing would show; the JSON's
``ceiling`` holds both times (fastest rounds) and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


class _Clock:
    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, owner: type, name: str) -> None:
        original = getattr(owner, name)
        clock = self

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                clock.seconds += time.perf_counter() - t0

        setattr(owner, name, timed)


def _run(mem, turns, *, bulk: int, clocks: tuple[_Clock, _Clock, _Clock]) -> dict:
    """Ingest ``turns`` into ``mem`` per turn (``bulk`` 0) or with add_many; the time split."""
    embed_clock, gate_clock, readback_clock = clocks
    embed_clock.seconds = gate_clock.seconds = readback_clock.seconds = 0.0
    events: dict[str, int] = {}
    t0 = time.perf_counter()
    if bulk:
        by_conv: dict[str, list] = {}
        for cid, turn in turns:
            by_conv.setdefault(cid, []).append({"content": turn.text, "source": turn.source,
                                                "valid_from": turn.valid_from})
        for cid, items in by_conv.items():
            for ds in mem.add_many(items, user_id=cid, batch_size=bulk):
                for d in ds:
                    events[d.event] = events.get(d.event, 0) + 1
    else:
        for cid, turn in turns:
            for d in mem.add(turn.text, user_id=cid, source=turn.source, valid_from=turn.valid_from):
                events[d.event] = events.get(d.event, 0) + 1
    total = time.perf_counter() - t0
    embed_s, gate_s = embed_clock.seconds, gate_clock.seconds
    split = gate_s > 0  # no gate clock (--no-split): no split either
    return {"seconds": total, "embed_s": embed_s, "gate_s": gate_s if split else None,
            "store_s": None if bulk or not split else total - embed_s - gate_s, "events": events,
            "readback_s": readback_clock.seconds, "load": os.getloadavg()[0]}


def _bare(embedder, turns, *, bulk: int) -> float:
    """Seconds to embed the turns and their parts with no memory: one turn a call (``bulk`` 0)
    or each conversation in batches of ``bulk`` turns."""
    from memsieve.text.passages import embed_passages

    t0 = time.perf_counter()
    if bulk:
        by_conv: dict[str, list[str]] = {}
        for cid, turn in turns:
            by_conv.setdefault(cid, []).append(turn.text)
        for texts in by_conv.values():
            for start in range(0, len(texts), bulk):
                embed_passages(embedder.embed, texts[start:start + bulk])
    else:
        for _, turn in turns:
            embed_passages(embedder.embed, [turn.text])
    return time.perf_counter() - t0


def _ratio(row: dict) -> float:
    """Wall time not covered by embedding the texts, over the time embedding them (a swap's
    read-back is the layer's time, not the texts')."""
    texts = row["embed_s"] - row.get("readback_s", 0.0)
    return (row["seconds"] - texts) / texts if texts else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--limit", type=int, default=None, help="stop after this many turns")
    parser.add_argument("--json", dest="json_out", help="write the numbers to this file")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each path, alternating (default 1)")
    parser.add_argument("--only", choices=("add", "bulk"), help="run one path only")
    parser.add_argument("--no-split", action="store_true",
                        help="time the embedder only, not the gate (its timers cost time of their own)")
    parser.add_argument("--batch-size", type=int, default=256, metavar="N",
                        help="Memory.add_many(batch_size=N) on the bulk path (default 256, the library's)")
    parser.add_argument("--no-fuse", action="store_true",
                        help="run the model as exported, not its fused graph (OnnxEmbedder(fuse=False))")
    parser.add_argument("--ceiling", action="store_true",
                        help="also time the embedding alone, per turn and in batches (the speedup's bound)")
    args = parser.parse_args(argv)

    from memsieve import Memory
    from memsieve.embedding import default_embedder
    from memsieve.gate.scope_gate import ScopeGate
    from memsieve.write.ingest import conversations

    convs = conversations(args.data)
    turns = [(cid, t) for cid, ts in convs for t in ts][: args.limit]
    embedder = default_embedder(fuse=not args.no_fuse)
    embedder.embed(["warm-up"])  # load the model outside the timed region
    embedder.embed([t.text for _, t in turns[:64]])  # and the bulk path's session

    from memsieve.write import path as write_path

    clocks = (_Clock(), _Clock(), _Clock())
    clocks[0].wrap(type(embedder), "embed")
    clocks[2].wrap(write_path, "swapped_value")  # type: ignore[arg-type]
    if not args.no_split:
        for name in ("score", "add", "begin_call", "end_call", "remove", "replace"):
            clocks[1].wrap(ScopeGate, name)

    paths = [p for p in ("add", "bulk") if args.only in (None, p)]
    runs: list[tuple[str, dict]] = []
    bare: dict[str, list[float]] = {"add": [], "bulk": []}
    for r in range(max(1, args.rounds)):
        for path in (paths if r % 2 == 0 else paths[::-1]):
            with tempfile.TemporaryDirectory() as tmp:
                mem = Memory(os.path.join(tmp, "bench.db"), embedder=embedder)
                row = _run(mem, turns, bulk=args.batch_size if path == "bulk" else 0, clocks=clocks)
                mem.close()
            runs.append((path, row))
        if args.ceiling:
            for kind in (("add", "bulk") if r % 2 == 0 else ("bulk", "add")):
                bare[kind].append(_bare(embedder, turns, bulk=args.batch_size if kind == "bulk" else 0))

    print(f"{'path':>5} {'turns':>6} {'seconds':>8} {'turns/s':>8} {'embed_s':>8} {'gate_s':>7} {'store_s':>7} "
          f"{'readback':>8} {'(t-e)/e':>8} {'load':>5}")
    for path, row in runs:
        print(f"{path:>5} {len(turns):>6} {row['seconds']:>8.2f} {len(turns) / row['seconds']:>8.1f} "
              f"{row['embed_s']:>8.2f} {'-' if row['gate_s'] is None else format(row['gate_s'], '.3f'):>7} "
              f"{'-' if row['store_s'] is None else format(row['store_s'], '.3f'):>7} {row['readback_s']:>8.3f} "
              f"{100 * _ratio(row):>7.1f}% "
              f"{row['load']:>5.2f}")
    best = {p: min((row for q, row in runs if q == p), key=lambda row: row["seconds"]) for p in paths}
    for path, row in best.items():
        print(f"{path} events: {row['events']}")
        verdict = "met" if _ratio(row) <= 0.10 else "MISSED"
        print(f"{path}: target time beyond embedding <= 10% of embed: {verdict} ({100 * _ratio(row):.1f}%)")
    out: dict = {"turns": len(turns), "rounds": [{"path": p, **row} for p, row in runs]}
    if "add" in best:
        out.update(best["add"])
    if "bulk" in best:
        out["bulk"] = {**best["bulk"], "batch_size": args.batch_size}
    if len(best) == 2:
        out["speedup"] = best["add"]["seconds"] / best["bulk"]["seconds"]
        verdict = "met" if out["speedup"] >= 2.0 else "MISSED"
        print(f"bulk path {out['speedup']:.2f}x faster end to end (target >= 2x): {verdict}")
        if best["add"]["events"] != best["bulk"]["events"]:
            print(f"DECISIONS DIFFER: add {best['add']['events']} vs bulk {best['bulk']['events']}")
    if args.ceiling:
        fastest = {kind: min(times) for kind, times in bare.items()}
        out["ceiling"] = {"add_embed_s": fastest["add"], "bulk_embed_s": fastest["bulk"],
                          "speedup": fastest["add"] / fastest["bulk"], "rounds": bare}
        print(f"embedding alone: one turn a call {fastest['add']:.2f} s, in batches of {args.batch_size} "
              f"{fastest['bulk']:.2f} s: {out['ceiling']['speedup']:.2f}x, the bulk path's speedup if the write "
              "layer cost nothing (add() pays its layer in series, add_many beside the embedding)")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
