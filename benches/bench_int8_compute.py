"""What computing the packaged model in int8 would give: speed, and how far its vectors move.

The packaged MiniLM stores its weights in int8 but computes in float32: ONNX Runtime folds each
weight's dequantization (Cast, Mul) into a float32 constant when the session loads, so every
MatMul runs in float32 over 90 MB of weights. This script builds a graph of the same weights
that computes in int8 (``onnxruntime.quantization.quantize_dynamic``: int8 weights, activations
quantized per call, MatMulInteger), times both on the same texts, and compares their vectors.
It needs the ``onnx`` package (``pip install onnx``); nothing here is used by memsieve itself.

    python benches/bench_int8_compute.py [--data locomo_dev.json] [--texts 3000] [--json out.json]

Texts: LoCoMo dev's turns and their sentence keys, the first ``--texts``. Bulk: batches of 256
through ``OnnxEmbedder.embed``, three rounds each, the two models alternating; single: one text
per call, 300 texts. Agreement: each text's cosine between the two models' vectors, and the
overlap of the 10 nearest texts of 200 texts drawn with seed 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


def _int8_graph(tmp: Path, *, per_channel: bool) -> Path:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from memsieve.embedding.onnx import packaged_model_path

    folded = tmp / "float32.onnx"  # the dequantization folded into float32 weights, as a session does
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(packaged_model_path()), options, providers=["CPUExecutionProvider"])
    out = tmp / ("int8_per_channel.onnx" if per_channel else "int8.onnx")
    quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=per_channel)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--texts", type=int, default=3000)
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args(argv)

    from memsieve.embedding import OnnxEmbedder
    from memsieve.text.passages import part_spans
    from memsieve.write.ingest import conversations

    turns = [t.text for _, ts in conversations(ns.data) for t in ts]
    texts = (turns + [t[a:b] for t in turns for _, a, b in part_spans(t)])[: ns.texts]
    with tempfile.TemporaryDirectory() as tmp:
        models = {"packaged (float32 compute)": None,
                  "int8 compute, per tensor": _int8_graph(Path(tmp), per_channel=False),
                  "int8 compute, per channel": _int8_graph(Path(tmp), per_channel=True)}
        embedders = {name: (OnnxEmbedder(model_path=str(p)) if p else OnnxEmbedder()) for name, p in models.items()}
        for e in embedders.values():
            e.embed(texts[:256])  # load and warm
        bulk: dict[str, list[float]] = {name: [] for name in models}
        vectors: dict[str, np.ndarray] = {}
        for r in range(3):
            for name in (list(models) if r % 2 == 0 else list(models)[::-1]):
                t0 = time.perf_counter()
                vectors[name] = np.vstack([embedders[name].embed(texts[i:i + 256]) for i in range(0, len(texts), 256)])
                bulk[name].append(time.perf_counter() - t0)
        single: dict[str, float] = {}
        for name, e in embedders.items():
            ts = []
            for t in texts[:300]:
                t0 = time.perf_counter()
                e.embed([t])
                ts.append((time.perf_counter() - t0) * 1e3)
            single[name] = statistics.median(ts)
    base = vectors["packaged (float32 compute)"]
    rng = np.random.default_rng(0)
    drawn = rng.choice(len(texts), min(200, len(texts)), replace=False)
    rows = []
    for name in models:
        v = vectors[name]
        cos = (base * v).sum(1)
        overlap = [len(set(np.argsort(-(base @ base[i]))[1:11]) & set(np.argsort(-(v @ v[i]))[1:11])) / 10
                   for i in drawn]
        rows.append({"model": name, "bulk_s": bulk[name], "bulk_median_s": statistics.median(bulk[name]),
                     "single_median_ms": single[name], "cos_min": float(cos.min()),
                     "cos_p1": float(np.percentile(cos, 1)), "cos_median": float(np.median(cos)),
                     "top10_overlap": float(np.mean(overlap))})
    print(f"{len(texts)} texts\n| model | bulk s (median of 3) | one text ms (median) | cosine to packaged: min / p1 / median "
          "| top-10 overlap |\n|---|---:|---:|---|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['bulk_median_s']:.2f} | {r['single_median_ms']:.2f} | {r['cos_min']:.3f} / "
              f"{r['cos_p1']:.3f} / {r['cos_median']:.3f} | {r['top10_overlap']:.3f} |")
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps({"texts": len(texts), "rows": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
