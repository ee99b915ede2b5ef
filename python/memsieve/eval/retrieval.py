"""``memsieve eval locomo --retrieval``: what each search mode finds when everything is stored.

The gate is switched off (the add-all arm): each write stream goes into one
fresh ``Memory(":memory:")``, one scope per conversation, and then every
question is searched in its own scope with each mode ``Memory.search`` accepts
(or those asked for). Each hit is scored as the reader is shown it, dated by
:func:`memsieve.read.render.render_line`; undated recall is reported beside it.
Latency is the wall time of ``Memory.search`` per question; the question's
vector comes from the run's precomputed table, so it excludes running the model.

Writes ``retrieval.json`` (every number) and ``retrieval.md`` (tables, and
sentences computed from them) into ``--out``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsieve.eval.arms import (StreamRun, check_search_mode, default_search_mode, ingest, main_specs,
                                score_questions, search_modes)
from memsieve.eval.locomo import CATEGORY_LABELS, STREAMS, Dataset, load_locomo
from memsieve.eval.metrics import aggregate, percentile, primary_key
from memsieve.eval.report import DATED_NOTE, md_table, pct
from memsieve.eval.runinfo import code_version
from memsieve.eval.vectors import embed_all
from memsieve.read.render import DATE_FORMATS, DEFAULT_DATE_FORMAT


@dataclass(kw_only=True)
class RetrievalOptions:
    """One retrieval-table run.

    Attributes:
        data: the LoCoMo JSON file.
        out: output directory.
        streams: which write streams.
        modes: search modes to compare (None: every mode ``Memory.search`` accepts, less ``auto``).
        ks: recall cut-offs; the largest is the search limit.
        conversations: sample_ids to keep (all when None).
        embedding_cache: an .npz to reuse vectors from/to.
        progress: show progress bars.
        embedder_factory: builds the embedder (default: the packaged ONNX model).
    """

    data: str
    out: str
    streams: tuple[str, ...] = STREAMS
    modes: tuple[str, ...] | None = None
    ks: tuple[int, ...] = (5, 10, 20)
    conversations: list[str] | None = None
    embedding_cache: str | None = None
    progress: bool = True
    embedder_factory: Any = None


def retrieval_keys(ks: tuple[int, ...]) -> list[str]:
    """The metrics of the table, for each cut-off."""
    names = ("answer_recall", "answer_recall_undated", "evidence_recall") + tuple(f"answer_recall_{f}" for f in DATE_FORMATS)
    return [f"{m}@{k}" for m in names for k in ks]


def score_mode(mem: Any, conversations: Any, run: Any, ks: tuple[int, ...], mode: str) -> dict[str, Any]:
    """Every question of ``conversations`` searched with ``mode``: metrics and latency.

    Returns:
        ``aggregate``'s {"micro", "macro", "per_category"} plus
        ``latency_ms`` {"p50", "p95", "mean", "n"}.
    """
    rows = score_questions(mem, conversations, run, ks, mode=mode, keep_texts=False)
    lat = [float(r["latency_ms"]) for r in rows]
    entry: dict[str, Any] = aggregate(rows, retrieval_keys(ks))
    entry["latency_ms"] = {"p50": percentile(lat, 50), "p95": percentile(lat, 95),
                           "mean": sum(lat) / len(lat) if lat else None, "n": len(lat)}
    return entry


@contextmanager
def stored_everything(ds: Dataset, table: Any, stream: str) -> Iterator[tuple[Any, StreamRun]]:
    """A fresh ``Memory(":memory:")`` holding all of ``stream`` (gate off), one scope per conversation.

    Args:
        ds: the loaded dataset.
        table: the embedder (the run's :class:`~memsieve.eval.vectors.VectorTable`).
        stream: ``"turns"`` or ``"observations"``.

    Yields:
        (memory, run): the open Memory and what ingesting did (provenance, counts); closed on exit.
    """
    from memsieve import GateConfig, Memory

    add_all = main_specs()["add-all"]
    mem = Memory(":memory:", embedder=table, gate=GateConfig(**add_all.gate))
    try:
        yield mem, ingest(mem, ds.conversations, stream, add_all)
    finally:
        mem.close()


def run_retrieval(opts: RetrievalOptions) -> dict[str, Any]:
    """Store everything, search with every mode, write retrieval.json and retrieval.md; return the report."""
    modes = tuple(check_search_mode(m) for m in opts.modes) if opts.modes else search_modes()
    ks = tuple(sorted(set(opts.ks)))
    wall0 = time.perf_counter()
    code = code_version()
    ds = load_locomo(opts.data, conversations=opts.conversations)
    table, embed_info = embed_all(ds, streams=opts.streams, embedder_factory=opts.embedder_factory,
                                  embedding_cache=opts.embedding_cache, progress=opts.progress)
    results: dict[str, dict[str, Any]] = {}
    timings: dict[str, Any] = {}
    for stream in opts.streams:
        with stored_everything(ds, table, stream) as (mem, run):
            results[stream] = {}
            for mode in modes:
                t0 = time.perf_counter()
                results[stream][mode] = {"stored": int(run.stats.get("active_memories", 0)),
                                         **score_mode(mem, ds.conversations, run, ks, mode)}
                timings[f"{stream}/{mode}_s"] = round(time.perf_counter() - t0, 2)
            timings[f"{stream}/ingest_s"] = round(run.ingest_s, 2)
    meta = {"data": str(opts.data), "conversations": [c.sample_id for c in ds.conversations],
            "questions": len(ds.questions), "streams": list(opts.streams), "modes": list(modes),
            "search_default": default_search_mode(), "date_format_default": DEFAULT_DATE_FORMAT, "ks": list(ks), "code": code, "embedding": embed_info,
            "timings": timings, "wall_s": round(time.perf_counter() - wall0, 1)}
    report = {"meta": meta, "results": results, "narrative": retrieval_narrative(results, primary_key(ks))}
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "retrieval.json").write_text(json.dumps(report, indent=1, allow_nan=False) + "\n")
    (out / "retrieval.md").write_text(retrieval_markdown(report))
    return report


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def retrieval_markdown(report: dict[str, Any]) -> str:
    """retrieval.md: the computed sentences, then per stream the micro, macro and per-category tables."""
    meta, results = report["meta"], report["results"]
    ks = meta["ks"]
    k = primary_key(ks)
    out = ["# LoCoMo retrieval: every search mode, everything stored", ""]
    out += [f"Data: `{Path(meta['data']).name}` ({len(meta['conversations'])} conversations, {meta['questions']} "
            f"questions), gate off (add-all), each question in its own conversation's scope. {DATED_NOTE} "
            f"Percentages; latency in ms per `Memory.search` call at the largest k (query vector precomputed). "
            f"`Memory.search`'s default mode is `{meta['search_default']}`.", ""]
    out += ["## What the numbers say", ""] + [f"- {s}" for s in report["narrative"]] + [""]
    for stream, modes in results.items():
        out += [f"## Stream `{stream}`", ""]
        for avg in ("micro", "macro"):
            header = (["mode", "stored"] + [f"answer@{x}" for x in ks] + [f"undated@{x}" for x in ks]
                      + [f"evidence@{k}", "p50 ms", "p95 ms"])
            rows = [[mode, str(e["stored"])] + [pct(e[avg].get(f"answer_recall@{x}")) for x in ks]
                    + [pct(e[avg].get(f"answer_recall_undated@{x}")) for x in ks]
                    + [pct(e[avg].get(f"evidence_recall@{k}")), _ms(e["latency_ms"]["p50"]),
                       _ms(e["latency_ms"]["p95"])] for mode, e in modes.items()]
            out += [f"**{avg.capitalize()}**", "", md_table(header, rows), ""]
        first = next(iter(modes.values()))
        cats = sorted(first["per_category"], key=int)
        header = ["mode"] + [f"{c} {CATEGORY_LABELS.get(int(c), '?')} (n={first['per_category'][c]['n']})"
                             for c in cats]
        rows = [[mode] + [f"{pct(e['per_category'][c].get(f'answer_recall@{k}'))} "
                          f"({pct(e['per_category'][c].get(f'answer_recall_undated@{k}'))})" for c in cats]
                for mode, e in modes.items()]
        out += [f"Per category, answer@{k} dated (undated)", "", md_table(header, rows), ""]
        out += _date_format_table(modes, k, cats)
    t = meta["timings"]
    out += ["## Cost", "", f"- Whole run {meta['wall_s']} s; embedding {meta['embedding']['embed_s']} s "
            f"({meta['embedding']['distinct_texts']} distinct texts, {meta['embedding']['source']}); "
            + "; ".join(f"{name.removesuffix('_s')} {v} s" for name, v in t.items()) + ".", ""]
    return "\n".join(out) + "\n"


def _date_format_table(modes: dict[str, Any], k: int, cats: list[str]) -> list[str]:
    """Dated answer@k in each date format: micro, macro and the temporal category (2), per mode."""
    header = ["mode"] + [f"{f} {avg}" for avg in ("micro", "macro") for f in DATE_FORMATS]
    header += [f"{f} temporal" for f in DATE_FORMATS] if "2" in cats else []
    rows = []
    for mode, e in modes.items():
        row = [mode] + [pct(e[avg].get(f"answer_recall_{f}@{k}")) for avg in ("micro", "macro") for f in DATE_FORMATS]
        row += [pct(e["per_category"]["2"].get(f"answer_recall_{f}@{k}")) for f in DATE_FORMATS] if "2" in cats else []
        rows.append(row)
    return [f"Date formats, answer@{k} (`iso` = `[2023-05-08]`, `long` = `[8 May 2023]`; "
            f"the default is `{DEFAULT_DATE_FORMAT}`)", "", md_table(header, rows), ""]


def _format_lift(scored: dict[str, Any], k: int) -> str | None:
    """One sentence: what the long date format adds over ISO, micro and macro, per mode."""
    iso, long_ = f"answer_recall_iso@{k}", f"answer_recall_long@{k}"
    parts = [f"{m} {100 * (e['micro'][long_] - e['micro'][iso]):+.1f} micro / "
             f"{100 * (e['macro'][long_] - e['macro'][iso]):+.1f} macro"
             for m, e in scored.items() if e["micro"].get(iso) is not None and e["micro"].get(long_) is not None]
    return (f"Long dates (`[8 May 2023]`) instead of ISO (`[2023-05-08]`) move answer@{k}: " + ", ".join(parts) + "."
            ) if parts else None


def retrieval_narrative(results: dict[str, dict[str, Any]], k: int) -> list[str]:
    """Sentences computed from the table: the best mode per stream, what the dates add, where, and speed."""
    key, undated = f"answer_recall@{k}", f"answer_recall_undated@{k}"
    out: list[str] = []
    for stream, modes in results.items():
        scored = {m: e for m, e in modes.items() if e["micro"].get(key) is not None}
        if not scored:
            continue
        ranked = sorted(scored, key=lambda m: -scored[m]["micro"][key])
        out.append(f"On `{stream}`, dated answer@{k} micro is highest with {_leaders(scored, key, 'micro')}; "
                   f"macro with {_leaders(scored, key, 'macro')}. All modes, micro: "
                   + ", ".join(f"{m} {pct(scored[m]['micro'][key])}" for m in ranked) + ".")
        lifts = {m: e["micro"][key] - e["micro"][undated] for m, e in scored.items()
                 if e["micro"].get(undated) is not None}
        if lifts:
            lo, hi = min(lifts.values()), max(lifts.values())
            cat, mode, lift = _largest_category_lift(scored, key, undated)
            where = (f"; the largest gain is in category {cat} ({CATEGORY_LABELS.get(int(cat), '?')}), "
                     f"{100 * lift:+.1f} points with {mode}") if cat is not None else ""
            out.append(f"Showing each hit's date moves micro answer@{k} on `{stream}` by {100 * lo:+.1f} to "
                       f"{100 * hi:+.1f} points across modes{where}.")
        lift_sentence = _format_lift(scored, k)
        if lift_sentence:
            out.append(f"On `{stream}`: {lift_sentence}")
        cats = sorted(next(iter(scored.values()))["per_category"], key=int)
        winners = []
        for c in cats:
            vals = {m: e["per_category"][c].get(key) for m, e in scored.items()}
            vals = {m: v for m, v in vals.items() if v is not None}
            if vals:
                m = max(vals, key=lambda x: vals[x])
                winners.append(f"{CATEGORY_LABELS.get(int(c), c)} {m} ({pct(vals[m])})")
        if winners:
            out.append(f"Best mode per category on `{stream}` (dated answer@{k}): " + ", ".join(winners) + ".")
        speed = sorted((e["latency_ms"]["p50"], m, e["latency_ms"]["p95"]) for m, e in modes.items()
                       if e["latency_ms"]["p50"] is not None)
        if speed:
            out.append(f"Search latency on `{stream}`, p50 (p95): "
                       + ", ".join(f"{m} {p50:.2f} ms ({p95:.2f})" for p50, m, p95 in speed) + ".")
    return out


def _leaders(scored: dict[str, Any], key: str, avg: str) -> str:
    """The mode(s) with the highest ``avg`` value of ``key`` (ties named together), with the value."""
    vals = {m: e[avg].get(key) for m, e in scored.items() if e[avg].get(key) is not None}
    if not vals:
        return "no mode (no answerable question)"
    top = max(vals.values())
    names = [m for m, v in vals.items() if round(v, 6) == round(top, 6)]
    return f"{' and '.join(names)} ({pct(top)}{', a tie' if len(names) > 1 else ''})"


def _largest_category_lift(scored: dict[str, Any], key: str, undated: str) -> tuple[str | None, str | None, float]:
    best: tuple[str | None, str | None, float] = (None, None, float("-inf"))
    for mode, e in scored.items():
        for c, row in e["per_category"].items():
            if row.get(key) is not None and row.get(undated) is not None and row[key] - row[undated] > best[2]:
                best = (c, mode, row[key] - row[undated])
    return best if best[0] is not None else (None, None, 0.0)
