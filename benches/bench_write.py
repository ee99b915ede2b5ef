"""Write-path throughput on the LoCoMo dev turns, split into embed, gate and store.

Every dialogue turn of ../shared/data/locomo/locomo_dev.json is added as a raw
chunk (``infer=False``) with the default ONNX embedder, one ``add`` call per
turn, one scope per conversation, into a fresh SQLite file.

    python benches/bench_write.py [--data PATH] [--limit N] [--json FILE]

"gate" is the time inside the Rust-backed gate (scoring, routing, state
updates); "store" is the rest of the write transaction (SQLite, history,
rejections, commit); "embed" is ONNX Runtime including tokenization.
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--limit", type=int, default=None, help="stop after this many turns")
    parser.add_argument("--json", dest="json_out", help="write the numbers to this file")
    parser.add_argument("--bulk", type=int, default=0, metavar="N",
                        help="ingest each conversation with Memory.add_many(batch_size=N) instead of add() per turn")
    args = parser.parse_args(argv)

    from memsieve import Memory
    from memsieve.embedding import default_embedder
    from memsieve.gate import ScopeGate
    from memsieve.ingest import conversations

    convs = conversations(args.data)
    turns = [(cid, t) for cid, ts in convs for t in ts][: args.limit]
    embedder = default_embedder()
    embedder.embed(["warm-up"])  # load the model outside the timed region

    embed_clock, gate_clock = _Clock(), _Clock()
    embed_clock.wrap(type(embedder), "embed")
    for name in ("score", "add", "begin_call", "end_call", "remove", "replace"):
        gate_clock.wrap(ScopeGate, name)

    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(os.path.join(tmp, "bench.db"), embedder=embedder)
        events: dict[str, int] = {}
        t0 = time.perf_counter()
        if args.bulk:
            by_conv: dict[str, list] = {}
            for cid, turn in turns:
                by_conv.setdefault(cid, []).append({"content": turn.text, "source": turn.source,
                                                    "valid_from": turn.valid_from})
            for cid, items in by_conv.items():
                for ds in mem.add_many(items, user_id=cid, batch_size=args.bulk):
                    for d in ds:
                        events[d.event] = events.get(d.event, 0) + 1
        for cid, turn in ([] if args.bulk else turns):
            for d in mem.add(turn.text, user_id=cid, source=turn.source, valid_from=turn.valid_from):
                events[d.event] = events.get(d.event, 0) + 1
        total = time.perf_counter() - t0
        mem.close()

    embed_s, gate_s = embed_clock.seconds, gate_clock.seconds
    store_s = total - embed_s - gate_s
    row = {"turns": len(turns), "bulk": args.bulk, "seconds": total, "embed_s": embed_s, "gate_s": gate_s, "store_s": store_s}
    ratio = (gate_s + store_s) / embed_s if embed_s else float("nan")
    print(f"{'turns':>8} {'seconds':>9} {'turns/s':>9} {'embed_s':>9} {'gate_s':>9} {'store_s':>9} {'(gate+store)/embed':>20}")
    print(f"{len(turns):>8} {total:>9.2f} {len(turns) / total:>9.1f} {embed_s:>9.2f} {gate_s:>9.3f} "
          f"{store_s:>9.3f} {ratio:>20.3f}")
    print(f"events: {events}")
    verdict = "met" if ratio <= 0.10 else "MISSED"
    print(f"target gate+store <= 10% of embed: {verdict} ({100 * ratio:.1f}%)")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(row, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
