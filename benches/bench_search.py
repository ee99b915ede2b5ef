"""Search latency per mode, by scope size and under other scopes' data (SQLite).

Two measurements, both through the public ``Memory.search`` only:

1. **Scope size.** One scope of 1k, 10k and 100k memories; p50 and p95 of
   every mode ``Memory.search`` accepts (read from its ``mode`` Literal at run
   time, less ``auto``, which needs a router).
2. **Other scopes.** A 200-memory scope, first alone in its database, then with
   ``--others`` memories of other scopes beside it (1M by default). Reported:
   each mode's p50 growth ratio (goal <= 1.2x) and whether the 200-memory
   scope's ranking (ids and scores of every query, every mode) changed at all
   (it must not).

Query embedding is excluded. ``Memory.search`` takes no precomputed vector, so
the Memory gets an embedder whose ``embed()`` is a dict lookup of vectors
computed before timing; what that lookup (and memsieve's validation of its
output) still costs per query is measured on its own and reported beside the
tables, and it is inside the dense and fused numbers.

Texts: the LoCoMo dev turns ("Speaker: text", read in place from
``--data``), each embedded once with the packaged ONNX model. Scopes larger
than the 3.4k turns are filled with synthetic sentences: a turn followed by a
few words drawn from the turns' own word frequencies, with the turn's vector
plus small Gaussian noise (cosine about 0.85 to it), so both the vocabulary and
the vectors keep the data's structure. Queries are LoCoMo dev questions.

Every memory is stored with the gate and exact dedup off
(``GateConfig(profile="none", exact_dedup=False)``; the texts are unique), in
batches of ``--batch`` texts per ``add()``, so filling measures storage, not the
gate. Each query runs every mode once, the order of modes rotating from query
to query, after a warm-up; medians are the headline because this VM is shared.

    python benches/bench_search.py --json benches/results_search.json --doc benches/RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path("/work/shared/data/locomo/locomo_dev.json")
VECTOR_CACHE = Path(tempfile.gettempdir()) / "memsieve-bench-search-vectors.npz"
MARK_BEGIN = "<!-- search:begin (written by benches/bench_search.py) -->"
MARK_END = "<!-- search:end -->"
SCOPE = "bench"
# The goals of issue 8, at a 10k-memory scope and under other scopes' data.
GOAL_KEYWORD_MS = 0.2
GOAL_FUSED_MS = 0.5
GOAL_GROWTH = 1.2
_WORD = re.compile(r"[a-z']+")


class LookupEmbedder:
    """An embedder whose cost is a dict lookup: every vector is computed before timing.

    ``stage(texts, vectors)`` hands it the next ``add()`` batch (synthetic texts
    that are never looked up again, so they are not kept); every other text must
    be in ``table``.
    """

    name = "lookup"

    def __init__(self, table: dict[str, np.ndarray], dim: int) -> None:
        self.table = table
        self.dim = dim
        self._staged: tuple[list[str], np.ndarray] | None = None

    def stage(self, texts: list[str], vectors: np.ndarray) -> None:
        self._staged = (texts, vectors)

    def embed(self, texts: list[str]) -> np.ndarray:
        staged = self._staged
        if staged is not None and len(texts) == len(staged[0]) and texts[0] == staged[0][0]:
            self._staged = None
            return staged[1]
        return np.stack([self.table[t] for t in texts])


class Corpus:
    """LoCoMo dev turns and questions with their vectors, and a synthetic sentence generator."""

    def __init__(self, data: Path, *, seed: int = 0) -> None:
        from memsieve.eval.locomo import load_locomo
        from memsieve.eval.vectors import embed_all

        t0 = time.perf_counter()
        ds = load_locomo(data)
        table, info = embed_all(ds, streams=("turns",), embedding_cache=str(VECTOR_CACHE), progress=False)
        self.embed_info = {**info, "seconds": round(time.perf_counter() - t0, 1)}
        self.turns_by_conv = {c.sample_id: [t.text for s in c.sessions for t in s.turns] for c in ds.conversations}
        self.questions_by_conv = {c.sample_id: [q.question for q in c.questions] for c in ds.conversations}
        self.turns = [t for ts in self.turns_by_conv.values() for t in ts]
        self.questions = [q for qs in self.questions_by_conv.values() for q in qs]
        texts = list(dict.fromkeys(self.turns + self.questions))
        vectors = table.embed(texts)
        self.dim = int(vectors.shape[1])
        self.vectors = {t: vectors[i] for i, t in enumerate(texts)}
        self.turn_matrix = np.stack([self.vectors[t] for t in self.turns])
        counts = Counter(w for t in self.turns for w in _WORD.findall(t.lower()))
        self.vocab = np.array(sorted(counts))
        freq = np.array([counts[w] for w in self.vocab], dtype=np.float64)
        self.word_p = freq / freq.sum()
        self.rng = np.random.default_rng(seed)

    def synthetic(self, n: int, *, start: int = 0, noise: float = 0.032) -> tuple[list[str], np.ndarray]:
        """``n`` sentences and their (n, d) float32 unit vectors; the first turns are used as they are.

        Sentence ``start + i`` is turn ``(start + i) mod T``, and from the second
        pass over the turns on it gets 3 to 6 extra words, so no two are equal.
        """
        idx = (start + np.arange(n)) % len(self.turns)
        texts, extra = [], self.rng.integers(3, 7, n)
        words = self.rng.choice(self.vocab, size=int(extra.sum()), p=self.word_p)
        pos = 0
        for i in range(n):
            text = self.turns[idx[i]]
            if start + i >= len(self.turns):
                text = text + " " + " ".join(words[pos:pos + extra[i]])
            pos += extra[i]
            texts.append(text)
        vecs = self.turn_matrix[idx].copy()
        shifted = (start + np.arange(n)) >= len(self.turns)
        vecs[shifted] += self.rng.standard_normal((int(shifted.sum()), self.dim)).astype(np.float32) * noise
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        return texts, np.ascontiguousarray(vecs, dtype=np.float32)


def search_modes() -> tuple[str, ...]:
    """The modes ``Memory.search`` accepts, less ``auto`` (it needs a router)."""
    from memsieve.eval.arms import search_modes as accepted

    return accepted()


def default_mode() -> str:
    from memsieve.eval.arms import default_search_mode

    return default_search_mode()


def fused_mode(modes: tuple[str, ...]) -> str:
    """The mode the fused goal is judged on: the default if it fuses, else ``hybrid``."""
    d = default_mode()
    return d if d not in ("dense", "keyword") else ("hybrid" if "hybrid" in modes else d)


def fill(mem: Any, emb: LookupEmbedder, texts: list[str], vectors: np.ndarray, *, user_id: str, batch: int) -> None:
    for i in range(0, len(texts), batch):
        chunk = texts[i:i + batch]
        emb.stage(chunk, vectors[i:i + batch])
        mem.add(chunk, user_id=user_id)


def time_modes(mem: Any, queries: list[str], modes: tuple[str, ...], *, user_id: str, limit: int,
               warmup: int, keep: bool = False) -> tuple[dict[str, list[float]], dict[str, list[list[tuple[str, float]]]]]:
    """Milliseconds of every (query, mode), modes rotating; and, if ``keep``, each ranking (id, score)."""
    for q in queries[:warmup]:
        for m in modes:
            mem.search(q, user_id=user_id, mode=m, limit=limit)
    times: dict[str, list[float]] = {m: [] for m in modes}
    ranks: dict[str, list[list[tuple[str, float]]]] = {m: [] for m in modes}
    for i, q in enumerate(queries):
        for j in range(len(modes)):
            m = modes[(i + j) % len(modes)]
            t0 = time.perf_counter()
            hits = mem.search(q, user_id=user_id, mode=m, limit=limit)
            times[m].append(1000.0 * (time.perf_counter() - t0))
            if keep:
                ranks[m].append([(h.id, h.score) for h in hits])
    return times, ranks


def lookup_overhead_ms(mem: Any, queries: list[str]) -> float:
    """Median ms of ``Memory.embed([q])`` with the lookup embedder: what dense and fused still pay."""
    out = []
    for q in queries:
        t0 = time.perf_counter()
        mem.embed([q])
        out.append(1000.0 * (time.perf_counter() - t0))
    return statistics.median(out)


def keyword_index_alone(texts: list[str], queries: list[str], *, limit: int) -> dict[str, float] | None:
    """p50/p95 ms of the Rust bm25 index's own search over the same texts, outside ``Memory.search``.

    Shows how much of a keyword search is the index and how much the rest of
    the call (fetching the rows, building results). None before the index exists.
    """
    from memsieve import _core

    if not hasattr(_core, "KeywordIndex"):
        return None
    index = _core.KeywordIndex()
    index.add_many(np.arange(len(texts), dtype=np.int64), texts)
    for q in queries[:20]:
        index.search(q, limit)
    out = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, limit)
        out.append(1000.0 * (time.perf_counter() - t0))
    return stats(out)


def stats(values: list[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)), "n": len(values)}


def open_memory(path: Path, emb: LookupEmbedder) -> Any:
    from memsieve import GateConfig, Memory

    # Every text is unique by construction, so the exact-dedup lookup is off too:
    # filling measures storage, and its cost per add does not grow with the scope.
    return Memory(path, embedder=emb, gate=GateConfig(profile="none", exact_dedup=False))


def bench_sizes(corpus: Corpus, args: argparse.Namespace, modes: tuple[str, ...], workdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    queries = sample_queries(corpus.questions, args.queries)
    for n in args.sizes:
        emb = LookupEmbedder(corpus.vectors, corpus.dim)
        mem = open_memory(workdir / f"size{n}.db", emb)
        texts, vecs = corpus.synthetic(n)
        t0 = time.perf_counter()
        fill(mem, emb, texts, vecs, user_id=SCOPE, batch=args.batch)
        fill_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for m in modes:  # the first search of a scope loads its vectors (and builds its index if large)
            mem.search(queries[0], user_id=SCOPE, mode=m, limit=args.limit)
        first_s = time.perf_counter() - t0
        times, _ = time_modes(mem, queries, modes, user_id=SCOPE, limit=args.limit, warmup=args.warmup)
        out[str(n)] = {"stored": mem.stats(user_id=SCOPE)["active_memories"], "fill_s": round(fill_s, 1),
                       "first_search_s": round(first_s, 2), "lookup_ms": lookup_overhead_ms(mem, queries),
                       "keyword_index_alone": keyword_index_alone(texts, queries, limit=args.limit),
                       "modes": {m: stats(t) for m, t in times.items()}}
        mem.close()
        print(f"  size {n}: " + ", ".join(f"{m} {out[str(n)]['modes'][m]['p50']:.3f} ms" for m in modes),
              file=sys.stderr, flush=True)
    return out


def sample_queries(questions: list[str], n: int) -> list[str]:
    rng = np.random.default_rng(1)
    pick = rng.choice(len(questions), size=min(n, len(questions)), replace=False)
    return [questions[i] for i in sorted(pick)]


def bench_others(corpus: Corpus, args: argparse.Namespace, modes: tuple[str, ...], workdir: Path) -> dict[str, Any]:
    conv = sorted(corpus.turns_by_conv)[0]
    target_texts = corpus.turns_by_conv[conv][:200]
    target_vecs = np.stack([corpus.vectors[t] for t in target_texts])
    qs = corpus.questions_by_conv[conv]
    queries = (qs * (args.queries // len(qs) + 1))[:max(args.queries, len(qs))]
    emb = LookupEmbedder(corpus.vectors, corpus.dim)
    mem = open_memory(workdir / "others.db", emb)
    fill(mem, emb, target_texts, target_vecs, user_id=SCOPE, batch=args.batch)
    alone, ranks_alone = time_modes(mem, queries, modes, user_id=SCOPE, limit=args.limit, warmup=args.warmup,
                                    keep=True)
    per_scope = args.others_per_scope
    t0 = time.perf_counter()
    written = 0
    while written < args.others:
        n = min(per_scope, args.others - written)
        texts, vecs = corpus.synthetic(n, start=len(corpus.turns) + written)
        fill(mem, emb, texts, vecs, user_id=f"other-{written // per_scope:05d}", batch=args.batch)
        written += n
        if time.perf_counter() - t0 > args.fill_budget_s:
            break  # the largest fill this machine manages in the budget; reported as written
    fill_s = time.perf_counter() - t0
    crowded, ranks_crowded = time_modes(mem, queries, modes, user_id=SCOPE, limit=args.limit,
                                        warmup=args.warmup, keep=True)
    db_bytes = sum(p.stat().st_size for p in workdir.glob("others.db*"))
    mem.close()
    result: dict[str, Any] = {"conversation": conv, "scope_size": len(target_texts), "queries": len(queries),
                              "others_written": written, "others_requested": args.others,
                              "other_scopes": -(-written // per_scope), "fill_s": round(fill_s, 1),
                              "fill_per_s": round(written / fill_s) if fill_s else None,
                              "db_bytes": db_bytes, "modes": {}}
    for m in modes:
        a, c = stats(alone[m]), stats(crowded[m])
        ids_changed = sum([h[0] for h in x] != [h[0] for h in y] for x, y in zip(ranks_alone[m], ranks_crowded[m]))
        scores_changed = sum(x != y for x, y in zip(ranks_alone[m], ranks_crowded[m]))
        result["modes"][m] = {"alone": a, "crowded": c, "growth_p50": c["p50"] / a["p50"],
                              "growth_p95": c["p95"] / a["p95"], "queries_ids_changed": ids_changed,
                              "queries_ranking_changed": scores_changed}
    print("  others: " + ", ".join(f"{m} x{result['modes'][m]['growth_p50']:.2f}" for m in modes),
          file=sys.stderr, flush=True)
    return result


def goals(res: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    at10k = res["sizes"].get("10000")
    if at10k:
        for mode, bound in (("keyword", GOAL_KEYWORD_MS), (res["fused_mode"], GOAL_FUSED_MS)):
            if mode in at10k["modes"]:
                v = at10k["modes"][mode]["p50"]
                out.append({"goal": f"{mode} p50 at 10k <= {bound} ms", "value": v, "met": v <= bound})
    others = res.get("others")
    if others:
        for m, r in others["modes"].items():
            out.append({"goal": f"{m} p50 growth with {others['others_written']:,} other memories <= {GOAL_GROWTH}x",
                        "value": r["growth_p50"], "met": r["growth_p50"] <= GOAL_GROWTH})
            out.append({"goal": f"{m} ranking of the 200-memory scope unchanged", "value": r["queries_ranking_changed"],
                        "met": r["queries_ranking_changed"] == 0})
    return out


def markdown(res: dict[str, Any]) -> str:
    modes = res["modes"]
    lines = [f"Scope size (one scope, SQLite file; {res['queries']} LoCoMo dev questions, limit {res['limit']}; "
             "ms per search, query embedding excluded):", "",
             "| memories | " + " | ".join(f"{m} p50 | {m} p95" for m in modes)
             + " | bm25 index alone p50 | lookup ms | fill s |",
             "|---|" + "---|" * (2 * len(modes) + 3)]
    for n, r in res["sizes"].items():
        cells = " | ".join(f"{r['modes'][m]['p50']:.3f} | {r['modes'][m]['p95']:.3f}" for m in modes)
        alone = r.get("keyword_index_alone")
        index_p50 = f"{alone['p50']:.3f}" if alone else "-"
        lines.append(f"| {int(n):,} ({r['stored']:,} stored) | {cells} | {index_p50} | {r['lookup_ms']:.3f} "
                     f"| {r['fill_s']:.0f} |")
    o = res.get("others")
    if o:
        lines += ["", f"A 200-memory scope ({o['conversation']}'s first turns, {o['queries']} of its questions) "
                  f"alone, then with {o['others_written']:,} memories of {o['other_scopes']:,} other scopes in the "
                  f"same file (filled in {o['fill_s']:.0f} s, {o['fill_per_s']:,}/s; file "
                  f"{o['db_bytes'] / 1e9:.2f} GB):", "",
                  "| mode | p50 alone | p50 crowded | growth p50 | p95 alone | p95 crowded | queries whose ids changed "
                  "| queries whose ids or scores changed |", "|---|---|---|---|---|---|---|---|"]
        for m, r in o["modes"].items():
            lines.append(f"| {m} | {r['alone']['p50']:.3f} | {r['crowded']['p50']:.3f} | {r['growth_p50']:.2f}x | "
                         f"{r['alone']['p95']:.3f} | {r['crowded']['p95']:.3f} | {r['queries_ids_changed']} | "
                         f"{r['queries_ranking_changed']} |")
    lines += ["", "Goals:", ""]
    for g in res["goals"]:
        v = g["value"]
        shown = f"{v:.3f}" if isinstance(v, float) else str(v)
        lines.append(f"- [{'met' if g['met'] else 'MISSED'}] {g['goal']}: {shown}")
    return "\n".join(lines)


def environment() -> dict[str, Any]:
    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], capture_output=True, text=True, check=True,
                                  cwd=Path(__file__).resolve().parents[1]).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": git("log", "-1", "--format=%h"),
            "dirty_search": bool(git("status", "--porcelain", "--", "python/memsieve/read/search.py",
                                     "python/memsieve/gate/cache.py")),
            "load_avg": os.getloadavg(), "cpus": os.cpu_count(), "python": platform.python_version()}


def doc_block(res: dict[str, Any], argv: list[str], *, label: str = "") -> str:
    """The markdown block of ``--doc``: how the run was made, then the tables and the goals."""
    env = res["environment"]
    head = (f"Run: `python benches/bench_search.py {shlex.join(argv)}` at {env['date']} on commit `{env['commit']}`"
            f"{' (search.py/scope_gates.py with uncommitted edits)' if env['dirty_search'] else ''}"
            f"{f' ({label})' if label else ''}; modes read from `Memory.search`: {', '.join(res['modes'])} "
            f"(default `{res['default_mode']}`). Load average {env['load_avg'][0]:.1f} at the start, "
            f"{env['load_avg_end'][0]:.1f} at the end (2 shared vCPUs). Whole run {res['seconds']:.0f} s.")
    return "\n".join([MARK_BEGIN, head, "", markdown(res), MARK_END])


def write_doc(path: Path, block: str, *, begin: str = MARK_BEGIN, end: str = MARK_END,
              new_file: str = "# Benchmark results\n", heading: str = "## Search") -> None:
    """Replace the text between ``begin`` and ``end`` in ``path`` with ``block`` (which holds both marks).

    Without the marks yet, the block is appended under ``heading``; text
    outside the marks (notes written by hand) is kept.
    """
    text = path.read_text(encoding="utf-8") if path.exists() else new_file
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + (heading + "\n\n" if heading else "") + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo dev JSON (read in place)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write every number here")
    parser.add_argument("--doc", type=Path, help="rewrite the search block of this markdown file")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1000, 10_000, 100_000])
    parser.add_argument("--others", type=int, default=1_000_000, help="memories of other scopes (0: skip)")
    parser.add_argument("--others-per-scope", type=int, default=1000)
    parser.add_argument("--fill-budget-s", type=float, default=420.0,
                        help="stop filling other scopes after this long (the fill actually written is reported)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1000, help="texts per add() call")
    parser.add_argument("--label", default="", help="a note on the backends, printed in the doc's run line")
    parser.add_argument("--workdir", type=Path, help="where the SQLite files go (default: a temporary folder)")
    args = parser.parse_args(argv)
    t_start = time.perf_counter()
    modes = search_modes()
    corpus = Corpus(args.data)
    print(f"modes {modes}; default {default_mode()}; vectors {corpus.embed_info}", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        res: dict[str, Any] = {"modes": list(modes), "default_mode": default_mode(), "fused_mode": fused_mode(modes),
                               "queries": min(args.queries, len(corpus.questions)), "limit": args.limit,
                               "batch": args.batch, "embed": corpus.embed_info, "environment": environment()}
        res["sizes"] = bench_sizes(corpus, args, modes, Path(tmp))
        res["others"] = bench_others(corpus, args, modes, Path(tmp)) if args.others > 0 else None
    res["goals"] = goals(res)
    res["seconds"] = round(time.perf_counter() - t_start, 1)
    res["environment"]["load_avg_end"] = os.getloadavg()
    text = markdown(res)
    print(text)
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if args.doc:
        write_doc(args.doc, doc_block(res, sys.argv[1:] if argv is None else argv, label=args.label))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
