"""The embedder's fused graph against the export, side by side: time and vectors.

``OnnxEmbedder(fuse=True)`` (the default) runs the packaged MiniLM with its attention and GELU
as ONNX Runtime's fused CPU kernels (memsieve.embedding.fused_graph); ``fuse=False`` runs the graph
as exported. Both embed the same texts in alternating rounds (fused, plain, plain, fused, ...):
every text of the set in one ``embed`` call (the bulk path's batches), and the first ``--single``
texts one call each (an ``add()``). The vectors of the two are compared row by row.

    python benches/bench_fusion.py [--set locomo|longmemeval] [--rounds N] [--single N]
                                   [--json FILE]

LoCoMo: every dialogue turn of ../shared/data/locomo/locomo_dev.json. LongMemEval: every
non-empty turn of the first haystack of ../shared/data/longmemeval/longmemeval_s_dev.json.gz
(longer texts: a median of about 430 characters).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"


def _texts(name: str) -> list[str]:
    if name == "locomo":
        from memsieve.write.ingest import conversations

        return [t.text for _, turns in conversations(str(SHARED / "locomo" / "locomo_dev.json")) for t in turns]
    with gzip.open(SHARED / "longmemeval" / "longmemeval_s_dev.json.gz", "rt") as f:
        first = json.load(f)[0]
    return [t["content"] for session in first["haystack_sessions"] for t in session if t["content"].strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=("locomo", "longmemeval"), default="locomo")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--single", type=int, default=400, help="texts embedded one call each")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)

    from memsieve.embedding import default_embedder

    texts = _texts(args.set)
    arms = {"fused": default_embedder(), "plain": default_embedder(fuse=False)}
    for embedder in arms.values():
        embedder.embed(["warm-up"])
        embedder.embed(texts[:64])
    assert arms["fused"].fused and not arms["plain"].fused, "the packaged model did not fuse"
    gap = float(np.max(np.abs(arms["fused"].embed(texts) - arms["plain"].embed(texts))))
    times: dict[str, dict[str, list[float]]] = {a: {"bulk_s": [], "single_ms": []} for a in arms}
    order = list(arms)
    for r in range(max(1, args.rounds)):
        for name in order if r % 2 == 0 else order[::-1]:
            embedder = arms[name]
            t0 = time.perf_counter()
            embedder.embed(texts)
            times[name]["bulk_s"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for text in texts[: args.single]:
                embedder.embed([text])
            times[name]["single_ms"].append(1000 * (time.perf_counter() - t0) / min(args.single, len(texts)))
    med = {a: {k: statistics.median(v) for k, v in t.items()} for a, t in times.items()}
    print(f"{args.set}: {len(texts)} texts, largest coordinate difference fused - plain {gap:.2e}")
    print(f"{'graph':>6} {'bulk s (rounds)':>30} {'median':>7} {'one text ms (rounds)':>26} {'median':>7}")
    for name in arms:
        bulk = ", ".join(f"{x:.2f}" for x in times[name]["bulk_s"])
        single = ", ".join(f"{x:.2f}" for x in times[name]["single_ms"])
        print(f"{name:>6} {bulk:>30} {med[name]['bulk_s']:>7.2f} {single:>26} {med[name]['single_ms']:>7.2f}")
    bulk_x = med["plain"]["bulk_s"] / med["fused"]["bulk_s"]
    single_x = med["plain"]["single_ms"] / med["fused"]["single_ms"]
    print(f"fused over plain: bulk {bulk_x:.3f}x, one text {single_x:.3f}x (medians)")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"set": args.set, "texts": len(texts), "max_abs_difference": gap, "rounds": times,
             "medians": med, "bulk_speedup": bulk_x, "single_speedup": single_x}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
