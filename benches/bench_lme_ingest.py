"""Ingest of real chat logs against the bare embedder: what the memory layer costs on LongMemEval.

Each round ingests the haystacks of a few LongMemEval questions (every
non-empty turn an ``add_many`` item with its session date, as the harness
does) into a fresh SQLite file with the default ONNX embedder, and records
every call the memory made to the embedder: the texts and their batches. The
same calls are then replayed on the bare embedder (the same ONNX session,
tokenizer and batch plan; nothing of the memory layer), in the same round.
Rounds alternate which side runs first, so a load that comes and goes falls
on both alike; the table gives medians and the ratio of throughputs.

    python benches/bench_lme_ingest.py [--data PATH] [--questions N] [--rounds N] [--json FILE]

The embedder runs the model's fused graph (``OnnxEmbedder(fuse=True)``, the default), and so does
the bare replay: the ratio is the layer's own cost. Each round also replays the same calls on the
export as it is (``fuse=False``, ``export_s``), the session a caller of onnxruntime would load
from the packaged file: ``ratio_vs_export`` is the ingest's throughput against that.

The goal (issue 18): ingest at >= 0.9x the bare embedder's throughput, that
is, the memory layer costs <= 10% of the embedding, long texts included.

Sentence keys (``GateConfig(sentence_keys=True)``, the default) make the
memory embed more texts than the turns themselves. The replay embeds what the
memory embedded, so the ratio above is the layer's own cost; each round also
ingests with ``sentence_keys=False`` and replays its calls, and the table gives
what the keys cost in time (``keys_cost``: ingest with keys over without) and
the ratio against embedding the turns alone (``ratio_vs_turns``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"


class Recording:
    """An embedder that passes every call through and keeps the texts of each."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.calls: list[list[str]] = []
        self.seconds = 0.0

    def embed(self, texts):
        self.calls.append(list(texts))
        t0 = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t0


def haystack_items(path: Path, n: int) -> list[tuple[str, list[dict]]]:
    """(question id, add_many items) of the first ``n`` questions, in file order."""
    from memsieve.eval.longmemeval_data import load_longmemeval

    ds = load_longmemeval(path, limit=n)
    out = []
    for q in ds.questions:
        items = [{"content": c.text, "role": t.role, "valid_from": c.valid_from, "source": t.id}
                 for c, t in q.candidates()]
        out.append((q.question_id, items))
    return out


def ingest(embedder, haystacks, *, keys: bool = True) -> tuple[float, Recording]:
    from memsieve import GateConfig, Memory

    rec = Recording(embedder)
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "m.db", embedder=rec, gate=GateConfig(sentence_keys=keys))
        t0 = time.perf_counter()
        for qid, items in haystacks:
            mem.add_many(items, user_id=qid)
        seconds = time.perf_counter() - t0
        mem.close()
    return seconds, rec


def replay(embedder, calls: list[list[str]]) -> float:
    t0 = time.perf_counter()
    for texts in calls:
        embedder.embed(texts)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--questions", type=int, default=1, help="haystacks per round (~500 turns each)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", type=Path)
    ns = p.parse_args(argv)
    if not ns.data.exists():
        print(f"no LongMemEval file at {ns.data}; pass --data", file=sys.stderr)
        return 2
    from memsieve.embedding import default_embedder

    embedder = default_embedder()
    export = default_embedder(fuse=False)
    export.embed(["warm up the session"])
    haystacks = haystack_items(ns.data, ns.questions)
    turns = sum(len(items) for _, items in haystacks)
    chars = sum(len(i["content"]) for _, items in haystacks for i in items)
    embedder.embed(["warm up the session"])
    memory_s, bare_s, embed_in_memory_s, nokeys_s, nokeys_bare_s, export_s = [], [], [], [], [], []
    calls: list[list[str]] = []
    nokeys_texts = 0
    for r in range(ns.rounds):
        first_memory = r % 2 == 0
        if first_memory:
            seconds, rec = ingest(embedder, haystacks)
            calls = rec.calls
            bare = replay(embedder, calls)
        else:
            bare = replay(embedder, calls) if calls else None
            seconds, rec = ingest(embedder, haystacks)
            calls = rec.calls
            if bare is None:
                bare = replay(embedder, calls)
        export_s.append(replay(export, calls))
        off_s, off = ingest(embedder, haystacks, keys=False)
        off_bare = replay(embedder, off.calls)
        nokeys_texts = sum(len(c) for c in off.calls)
        memory_s.append(seconds)
        bare_s.append(bare)
        embed_in_memory_s.append(rec.seconds)
        nokeys_s.append(off_s)
        nokeys_bare_s.append(off_bare)
        print(f"round {r + 1}: memory {seconds:.2f} s (embedding {rec.seconds:.2f} s), bare {bare:.2f} s; "
              f"without keys {off_s:.2f} s, bare {off_bare:.2f} s; the export {export_s[-1]:.2f} s",
              file=sys.stderr)
    texts = sum(len(c) for c in calls)
    m, b = statistics.median(memory_s), statistics.median(bare_s)
    m0, b0 = statistics.median(nokeys_s), statistics.median(nokeys_bare_s)
    result = {"questions": ns.questions, "turns": turns, "chars": chars, "embedded_texts": texts,
              "embed_calls": len(calls), "rounds": ns.rounds, "memory_s": memory_s, "bare_s": bare_s,
              "embed_inside_memory_s": embed_in_memory_s, "median_memory_s": m, "median_bare_s": b,
              "throughput_ratio": b / m, "layer_share_of_embedding": (m - b) / b,
              "nokeys_embedded_texts": nokeys_texts, "nokeys_memory_s": nokeys_s, "nokeys_bare_s": nokeys_bare_s,
              "nokeys_throughput_ratio": b0 / m0, "keys_cost": m / m0, "ratio_vs_turns": b0 / m,
              "export_s": export_s, "ratio_vs_export": statistics.median(export_s) / m}
    print("| sentence keys | turns | embedded texts | memory s (median) | bare embedder s (median) "
          "| throughput ratio | layer cost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| on | {turns} | {texts} | {m:.2f} | {b:.2f} | {b / m:.3f}x | {100 * (m - b) / b:.1f}% of embedding |")
    print(f"| off | {turns} | {nokeys_texts} | {m0:.2f} | {b0:.2f} | {b0 / m0:.3f}x "
          f"| {100 * (m0 - b0) / b0:.1f}% of embedding |")
    print(f"\nkeys cost {m / m0:.2f}x the ingest time without them; against embedding the texts of the "
          f"ingest without keys, ingest with keys runs at {b0 / m:.3f}x; against the export's bare "
          f"session (fuse=False) embedding what it embedded, at {statistics.median(export_s) / m:.3f}x")
    if ns.json:
        ns.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
