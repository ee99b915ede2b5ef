"""Time and peak memory of consolidation at 1k, 10k and 50k memories, against a numpy all-pairs baseline.

Each measurement runs in a fresh subprocess, and its peak is the rise of the
peak RSS (``VmHWM``, reset with ``/proc/self/clear_refs`` once the input is
built) above the RSS at that moment:

- ``kernel``: the candidate search alone, on (n, 384) float32 unit rows.
  ``rust`` is ``_core.pairs_above`` (tiles of the upper triangle, the GIL
  released, only the pairs >= min_sim kept); ``numpy`` is the baseline a
  Python implementation would write: row blocks of 1024 times the whole
  matrix (``x[i:i+b] @ x.T``), ``np.nonzero`` above the threshold, the lower
  triangle dropped. A one-shot ``x @ x.T`` would need n^2 * 4 bytes (10 GB at
  50k), so the baseline is blocked too; its peak is one (1024, n) block.
- ``consolidate``: ``Memory.consolidate`` end to end on a SQLite store
  (reading the scope, the pairs, complete link, the information term and the
  merges, in one write transaction), with the gate off so that every row is
  stored.

The rows are synthetic: ``n / 10`` topic centres with members drawn around
them, and 10% of the rows near-copies of another row (cosine about 0.97), so
there is something to merge. Texts are "topic T item I" sentences, so the
information term sees different numbers in different members and files
most clusters as versions.

    python benches/bench_consolidate.py [--sizes 1000 10000 50000] [--json benches/results_consolidate.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384
MIN_SIM = 0.9
NUMPY_BLOCK = 1024


def synthetic(n: int, seed: int = 0) -> np.ndarray:
    """(n, DIM) float32 unit rows: topics with spread-out members, 10% near-copies."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, n // 10), DIM)).astype(np.float32)
    x = centres[rng.integers(0, len(centres), n)] + 0.9 * rng.standard_normal((n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    dup = rng.choice(n, size=n // 10, replace=False)
    x[dup] = x[(dup + 1) % n] + 0.015 * rng.standard_normal((len(dup), DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def reset_peak() -> float:
    """Reset the peak RSS (Linux: clear_refs 5) and return the current RSS in MB."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass  # elsewhere the peak includes what came before; the table says so
    return _status_mb("VmRSS")


def rss_mb() -> float:
    """The peak RSS since the last reset, in MB."""
    return _status_mb("VmHWM")


def numpy_pairs(x: np.ndarray, min_sim: float) -> int:
    found = 0
    for i in range(0, len(x), NUMPY_BLOCK):
        sims = x[i:i + NUMPY_BLOCK] @ x.T
        r, c = np.nonzero(sims >= min_sim)
        found += int(np.count_nonzero(c > r + i))
    return found


def rust_pairs(x: np.ndarray, min_sim: float) -> int:
    from memsieve import _core  # imported by measure() before the clock starts

    return len(_core.pairs_above(x, min_sim)[0])


class TableEmbedder:
    """Hands back the synthetic row of each text (texts name their row)."""

    name = "synthetic"
    dim = DIM

    def __init__(self, x: np.ndarray) -> None:
        self.x = x

    def embed(self, texts):
        return self.x[[int(t.rsplit(" ", 1)[1]) for t in texts]]


def consolidate(x: np.ndarray) -> dict:
    from memsieve import GateConfig, Memory

    with tempfile.TemporaryDirectory() as d:
        with Memory(Path(d) / "b.db", embedder=TableEmbedder(x), gate=GateConfig(profile="none", exact_dedup=False),
                    index_min_size=10**9) as mem:
            texts = [f"topic {i % max(1, len(x) // 10)} item {i}" for i in range(len(x))]
            for k in range(0, len(texts), 500):
                mem.add(texts[k:k + 500], user_id="bench")
            base = reset_peak()
            t0 = time.perf_counter()
            report = mem.consolidate(user_id="bench", min_sim=MIN_SIM)
            seconds = time.perf_counter() - t0
        return {"seconds": seconds, "peak_rss_mb": rss_mb(), "rss_before_mb": base, "pairs": report.pairs,
                "merges": len(report.merges), "active_before": report.active_before,
                "active_after": report.active_after}


def measure(what: str, n: int) -> dict:
    """One measurement, in this process (called in the child)."""
    import memsieve  # noqa: F401  (the import is not what is measured)

    x = synthetic(n)
    base = reset_peak()
    if what == "consolidate":
        out = consolidate(x)
    else:
        fn = rust_pairs if what == "rust" else numpy_pairs
        t0 = time.perf_counter()
        pairs = fn(x, MIN_SIM)
        out = {"seconds": time.perf_counter() - t0, "pairs": pairs, "peak_rss_mb": rss_mb(), "rss_before_mb": base}
    out.update({"what": what, "n": n, "peak_extra_mb": out["peak_rss_mb"] - out["rss_before_mb"]})
    return out


def run(sizes: list[int], whats: list[str]) -> list[dict]:
    rows = []
    for n in sizes:
        for what in whats:
            child = subprocess.run([sys.executable, __file__, "--child", what, str(n)], capture_output=True,
                                   text=True, check=True)
            rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
            print(f"{what:<12} n={n:>6}  {rows[-1]['seconds']:8.3f} s  peak +{rows[-1]['peak_extra_mb']:7.1f} MB"
                  f"  pairs {rows[-1]['pairs']}", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    out = ["| memories | what | seconds | peak extra RSS (MB) | pairs | merges | active after |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['n']:,} | {r['what']} | {r['seconds']:.3f} | {r['peak_extra_mb']:.1f} | {r['pairs']:,} |"
                   f" {r.get('merges', '-')} | {r.get('active_after', '-')} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--what", nargs="+", default=["rust", "numpy", "consolidate"],
                        choices=["rust", "numpy", "consolidate"])
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], int(args.child[1]))))
        return
    rows = run(args.sizes, args.what)
    print(table(rows))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
