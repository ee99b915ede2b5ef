"""Tune the fusion of dense and keyword search on the LoCoMo dev split.

Everything is stored (gate off) on both write streams. For every question and
candidate depth D, the script asks ``Memory.search(mode="dense", limit=D)`` and
``Memory.search(mode="keyword", limit=D)`` and fuses the two ranked lists
itself, from their ids and scores only, so it depends on no internals of the
search and serves as the fusion hook: whatever backend answers the two
modes (today SQLite FTS5 for keyword; a per-scope bm25 index later) is tuned
by re-running it. The fusion formulas are memsieve.read.fusion's own (``Fusion``),
so what is measured here is what ``hybrid`` ships.

Variants (each at every depth in ``--depths``, default 20, 50, 100):

- ``rrf k=K``: reciprocal-rank fusion, score = sum over lists of 1 / (K + rank),
  rank counted from 1; K in {10, 30, 60, 100}.
- ``minmax w=W`` / ``z w=W``: W * n(dense) + (1 - W) * n(keyword), where n
  normalizes one list's scores by min-max or by z-score; W in 0.0 .. 1.0 step
  0.1. A memory absent from a list gets that list's lowest normalized value
  (min-max 0; z the lowest z in the list). A list whose scores are all equal
  normalizes to 1 (min-max) or 0 (z) for its members and 0 or -1 for absentees,
  so membership still counts.

Ties in a fused score go to the better dense rank, then the better keyword
rank. ``Memory.search`` applies freshness after ranking (the newest version of a
fact first, within the results); it moves no memory into or out of a top-D list
when nothing is linked (the gate is off here), so each list is put back in score
order before fusing, which is the order the fusion sees inside ``hybrid``.
Every variant is scored by dated answer-token recall@10 (each hit rendered
``[8 May 2023] text`` by memsieve.read.render, its default date format), micro and
macro, per stream; the modes ``Memory.search`` offers today are scored beside them.

**Winner rule (fixed before running):** the highest mean of four numbers,
dated answer recall@10 micro and macro on turns and on observations. Ties
(within 1e-9) go to the smaller depth, then to RRF over weighted fusion, then
to the smaller K or W.

Writes ``fusion.json`` (every variant) and ``fusion.md`` (the ranking) into
``--out``. Run: ``python benches/tune_fusion.py /work/shared/data/locomo/locomo_dev.json
--out eval/locomo-dev/fusion --label fts5 --embedding-cache /tmp/locomo_vectors.npz``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memsieve.eval.arms import search_modes
from memsieve.eval.locomo import STREAMS, load_locomo
from memsieve.eval.metrics import aggregate, answer_recall
from memsieve.eval.report import md_table, pct
from memsieve.eval.retrieval import stored_everything
from memsieve.eval.runinfo import code_version
from memsieve.eval.vectors import embed_all
from memsieve.read.fusion import Fusion
from memsieve.read.render import render_line

K = 10
RRF_KS = (10, 30, 60, 100)
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
DEPTHS = (20, 50, 100)
BOOTSTRAP = 1000
KEYS = (f"answer_recall@{K}", f"answer_recall_undated@{K}")

Ranked = list[tuple[str, float]]  # (memory id, score), best first
Fuser = Callable[[Ranked, Ranked], list[str]]


def variants() -> list[tuple[dict[str, Any], Fuser]]:
    """Every fusion configuration of the grid, without its depth, as memsieve.read.fusion ships it."""
    grid = [({"fusion": "rrf", "k": k}, Fusion(method="rrf", rrf_k=k)) for k in RRF_KS]
    grid += [({"fusion": norm, "w": w}, Fusion(method=norm, weight=w)) for norm in ("minmax", "z") for w in WEIGHTS]
    return [(params, _ids(fusion)) for params, fusion in grid]


def _ids(fusion: Fusion) -> Fuser:
    """The fused ids, best first; the depth is the lists' own (each was asked for at that limit)."""
    return lambda dense, keyword: [key for key, _s in fusion.fuse(dense, keyword)]


def label(params: dict[str, Any]) -> str:
    """``rrf k=60 depth=50`` / ``minmax w=0.3 depth=20``."""
    knob = f"k={params['k']}" if params["fusion"] == "rrf" else f"w={params['w']:.1f}"
    return f"{params['fusion']} {knob}" + (f" depth={params['depth']}" if "depth" in params else "")


def collect(mem: Any, ds: Any, depths: Sequence[int]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Ask every question of ``ds`` in both modes at every depth, and the shipped modes at limit K.

    Returns:
        (questions, seconds): per question its category, answer, ``lists``
        {depth: (dense, keyword)}, ``modes`` {mode: [ids]}; and the time spent in each mode.
    """
    lines: dict[str, tuple[str, str]] = {}
    spent = {"dense": 0.0, "keyword": 0.0, "shipped": 0.0}
    out = []
    for conv in ds.conversations:
        for q in conv.questions:
            row: dict[str, Any] = {"category": q.category, "answer": q.answer, "lists": {}, "modes": {}}
            for depth in depths:
                pair = []
                for mode in ("dense", "keyword"):
                    t0 = time.perf_counter()
                    hits = mem.search(q.question, user_id=conv.sample_id, limit=depth, mode=mode)
                    spent[mode] += time.perf_counter() - t0
                    # Freshness reorders versions of one fact inside the results (newest first);
                    # the fusion sees the lists before it, so each is put back in score order.
                    # With the gate off nothing is linked, so the set of hits is the raw top-depth.
                    hits = sorted(hits, key=lambda h: -h.score)
                    for h in hits:
                        lines.setdefault(h.id, (render_line(h, dated=True), render_line(h, dated=False)))
                    pair.append([(h.id, h.score) for h in hits])
                row["lists"][depth] = tuple(pair)
            for mode in search_modes():
                t0 = time.perf_counter()
                hits = mem.search(q.question, user_id=conv.sample_id, limit=K, mode=mode)
                spent["shipped"] += time.perf_counter() - t0
                for h in hits:
                    lines.setdefault(h.id, (render_line(h, dated=True), render_line(h, dated=False)))
                row["modes"][mode] = [h.id for h in hits]
            out.append(row)
    for row in out:
        row["lines"] = lines
    return out, spent


def score(questions: Sequence[dict[str, Any]], ranking: Callable[[dict[str, Any]], list[str]]
          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Dated and undated answer recall@K of one ranking rule over every question.

    Returns:
        (aggregate's {"micro", "macro", "per_category"}, the per-question rows).
    """
    rows = []
    for q in questions:
        ids = ranking(q)[:K]
        dated = [q["lines"][m][0] for m in ids]
        bare = [q["lines"][m][1] for m in ids]
        rows.append({"category": q["category"], KEYS[0]: answer_recall(q["answer"], dated, K),
                     KEYS[1]: answer_recall(q["answer"], bare, K)})
    return aggregate(rows, KEYS), rows


def paired_interval(a: dict[str, list[dict[str, Any]]], b: dict[str, list[dict[str, Any]]], *,
                    resamples: int = BOOTSTRAP, seed: int = 0) -> dict[str, float]:
    """Paired bootstrap of rule(a) - rule(b): the questions are resampled once per round, for every stream.

    Args:
        a, b: per stream, the per-question rows of two rankings (same questions, same order).

    Returns:
        {"diff": observed difference, "lo", "hi": the 2.5% and 97.5% quantiles,
         "p_le_0": share of rounds where a did not beat b}.
    """
    rng = random.Random(seed)
    n = len(next(iter(a.values())))

    def rule(rows: dict[str, list[dict[str, Any]]], idx: Sequence[int]) -> float:
        entry = {s: aggregate([r[i] for i in idx], KEYS[:1]) for s, r in rows.items()}
        return rule_value(entry, list(rows))

    everything = range(n)
    diffs = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in everything]
        diffs.append(rule(a, idx) - rule(b, idx))
    diffs.sort()
    return {"diff": rule(a, everything) - rule(b, everything), "lo": diffs[int(0.025 * resamples)],
            "hi": diffs[int(0.975 * resamples) - 1], "p_le_0": sum(d <= 0 for d in diffs) / resamples}


def _shipped(mode: str) -> Callable[[dict[str, Any]], list[str]]:
    """The ranking ``Memory.search(mode=mode, limit=K)`` returned."""
    return lambda q: q["modes"][mode]


def _fused(depth: int, fuse: Fuser) -> Callable[[dict[str, Any]], list[str]]:
    """The ranking ``fuse`` makes of the two lists at ``depth``."""
    return lambda q: fuse(*q["lists"][depth])


def rule_value(entry: dict[str, Any], streams: Sequence[str]) -> float:
    """The winner rule: mean of dated recall@K micro and macro over the streams."""
    vals = [entry[s][avg][KEYS[0]] for s in streams for avg in ("micro", "macro")]
    return sum(v or 0.0 for v in vals) / len(vals)


def _tie_key(entry: dict[str, Any]) -> tuple[Any, ...]:
    p = entry["params"]
    return (-round(entry["rule"], 9), p["depth"], p["fusion"] != "rrf", p.get("k", p.get("w")))


def tune(data: str, *, depths: Sequence[int] = DEPTHS, streams: Sequence[str] = STREAMS,
         embedding_cache: str | None = None, progress: bool = False) -> dict[str, Any]:
    """Run the whole sweep; returns {"meta", "variants" (best first), "modes", "winner"}."""
    wall0 = time.perf_counter()
    code = code_version()
    ds = load_locomo(data)
    table, embed_info = embed_all(ds, streams=streams, embedding_cache=embedding_cache, progress=progress)
    grid = variants()
    entries: dict[str, dict[str, Any]] = {}
    modes: dict[str, dict[str, Any]] = {}
    timing: dict[str, Any] = {}
    rows: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for stream in streams:
        t0 = time.perf_counter()
        with stored_everything(ds, table, stream) as (mem, _run):
            questions, spent = collect(mem, ds, depths)
        timing[stream] = {"collect_s": round(time.perf_counter() - t0, 1),
                          **{f"{m}_search_s": round(v, 2) for m, v in spent.items()}}
        t1 = time.perf_counter()
        for mode in search_modes():
            modes.setdefault(mode, {})[stream], rows[mode][stream] = score(questions, _shipped(mode))
        for depth in depths:
            for params, fuse in grid:
                p = {**params, "depth": depth}
                entry = entries.setdefault(label(p), {"params": p})
                entry[stream], rows[label(p)][stream] = score(questions, _fused(depth, fuse))
        timing[stream]["fuse_and_score_s"] = round(time.perf_counter() - t1, 1)
    ranked = []
    for name, entry in entries.items():
        entry["rule"] = rule_value(entry, streams)
        ranked.append({"label": name, **entry})
    ranked.sort(key=_tie_key)
    for entry in modes.values():
        entry["rule"] = rule_value(entry, streams)
    # Is the winner's margin more than the luck of these questions? Paired bootstrap against the best
    # shipped mode and against the runner-up.
    t2 = time.perf_counter()
    best_mode = max(modes, key=lambda m: modes[m]["rule"])
    winner = ranked[0]
    intervals = {f"winner - {best_mode}": paired_interval(rows[winner["label"]], rows[best_mode]),
                 f"winner - {ranked[1]['label']}": paired_interval(rows[winner["label"]], rows[ranked[1]["label"]])}
    timing["bootstrap_s"] = round(time.perf_counter() - t2, 1)
    meta = {"data": data, "questions": len(ds.questions), "streams": list(streams), "depths": list(depths),
            "k": K, "code": code, "embedding": embed_info, "timing": timing,
            "rule": f"highest mean of dated answer_recall@{K} micro and macro over {', '.join(streams)}; "
                    "ties: smaller depth, then rrf, then smaller k or w",
            "wall_s": round(time.perf_counter() - wall0, 1)}
    return {"meta": meta, "variants": ranked, "modes": modes, "winner": winner, "best_mode": best_mode,
            "intervals": intervals}


def markdown(res: dict[str, Any], *, label_text: str, top: int = 20) -> str:
    """fusion.md: the rule, the winner, the top variants, the shipped modes, the best of each family."""
    meta, streams = res["meta"], res["meta"]["streams"]
    key = KEYS[0]

    def cells(entry: dict[str, Any]) -> list[str]:
        return [pct(entry[s][avg][key]) for s in streams for avg in ("micro", "macro")] + [pct(entry["rule"], 2)]

    header = ["configuration"] + [f"{s} {avg}" for s in streams for avg in ("micro", "macro")] + ["rule"]
    w, best_mode = res["winner"], res["best_mode"]
    gain = w["rule"] - res["modes"][best_mode]["rule"]
    families: dict[str, dict[str, Any]] = {}
    for v in res["variants"]:
        families.setdefault(v["params"]["fusion"], v)
    spans = [f"{name}: {100 * iv['diff']:+.2f} points, 95% interval [{100 * iv['lo']:+.2f}, {100 * iv['hi']:+.2f}]"
             f" ({BOOTSTRAP} paired resamples of the questions; not better in {100 * iv['p_le_0']:.1f}%)"
             for name, iv in res["intervals"].items()]
    timing = "; ".join(f"{s} " + ", ".join(f"{k.removesuffix('_s')} {v} s" for k, v in t.items())
                       if isinstance(t, dict) else f"{s.removesuffix('_s')} {t} s"
                       for s, t in meta["timing"].items())
    out = [f"# Fusion tuning on the LoCoMo dev split (keyword backend: {label_text})", "",
           f"Dated answer recall@{K} (%), everything stored, {meta['questions']} questions. Rule, fixed before "
           f"the run: {meta['rule']}.", "",
           f"- Winner: **{w['label']}** (rule {pct(w['rule'], 2)}); the best mode `Memory.search` offers now is "
           f"{best_mode} ({pct(res['modes'][best_mode]['rule'], 2)}), {100 * gain:+.2f} points.",
           *[f"- {span}." for span in spans],
           "- Best of each family: " + ", ".join(f"{v['label']} ({pct(v['rule'], 2)})"
                                                  for v in families.values()) + ".",
           f"- Run time {meta['wall_s']} s (embedding {meta['embedding']['embed_s']} s, "
           f"{meta['embedding']['source']}); {timing}.", "",
           f"## Top {top} of {len(res['variants'])} variants", "",
           md_table(header, [[v["label"]] + cells(v) for v in res["variants"][:top]]), "",
           "## Modes of Memory.search today (limit 10)", "",
           md_table(header, [[m] + cells(e) for m, e in res["modes"].items()]), ""]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("data", help="LoCoMo dev JSON (read in place)")
    ap.add_argument("--out", required=True, help="output directory (fusion.json, fusion.md)")
    ap.add_argument("--label", default="keyword", help="name of the keyword backend measured, for the report")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)), help="candidate depths, comma-separated")
    ap.add_argument("--embedding-cache", help="reuse vectors from/to this .npz")
    args = ap.parse_args(argv)
    res = tune(args.data, depths=tuple(int(d) for d in args.depths.split(",")),
               embedding_cache=args.embedding_cache, progress=sys.stderr.isatty())
    res["meta"]["label"] = args.label
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fusion.json").write_text(json.dumps(res, indent=1, allow_nan=False) + "\n")
    md = markdown(res, label_text=args.label)
    (out / "fusion.md").write_text(md)
    print(md.split("## Top", 1)[0].strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
