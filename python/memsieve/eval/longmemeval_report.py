"""summary.json, summary.md and the plots of ``memsieve eval longmemeval``.

The prose is computed: each sentence compares numbers of the summary (which
arm, which question type, which reason), so it moves when they do. Nothing
here quotes the data: per-question rows and the texts of dropped evidence stay
in questions.jsonl.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from memsieve.eval.metrics import primary_key
from memsieve.eval.report import DATED_NOTE, md_table, pct

#: The overall table's columns: (header, metric key or None for a field, format).
_TYPE_METRICS = ("answer_recall", "recall_any", "recall_all", "recall_share", "ndcg")


def _k(meta: dict[str, Any]) -> int:
    return primary_key(meta["ks"])


def _metric(entry: dict[str, Any], avg: str, key: str) -> float | None:
    return entry[avg].get(key)


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def narrative(summary: dict[str, Any]) -> list[str]:
    """Sentences computed from the summary."""
    meta, arms = summary["meta"], summary["arms"]
    k = _k(meta)
    keys = [f"answer_recall@{k}", f"recall_any@{k}", f"recall_all@{k}", f"recall_share@{k}"]
    names = {keys[0]: f"answer recall@{k}", keys[1]: f"recall_any@{k}", keys[2]: f"recall_all@{k}",
             keys[3]: f"evidence share@{k}"}
    out: list[str] = []
    base = arms.get("add-all")
    if base is not None:
        out.append(f"Storing everything (add-all, {base['stored']:.0f} memories over {meta['questions']} "
                   f"scopes), micro " + ", ".join(f"{names[x]} {pct(base['micro'].get(x))}" for x in keys)
                   + "; macro " + ", ".join(f"{pct(base['macro'].get(x))}" for x in keys) + ".")
    ext = f"answer_recall_extractive@{k}"
    if arms and all(e["micro"].get(ext) is not None for e in arms.values()):
        first = next(iter(arms.values()))["micro"]
        out.append(f"On the {first.get('n_' + ext, 0)} of {first.get(f'n_answer_recall@{k}', 0)} questions whose "
                   f"answer's every content word is in their evidence turns, answer recall@{k} is "
                   + ", ".join(f"{arm} {pct(e['micro'][ext])}" for arm, e in arms.items())
                   + "; the others' answers are computed (a count, an interval) or a preference rubric, whose "
                   "tokens a hit may hold by chance.")
    for arm, e in arms.items():
        if arm == "add-all" or base is None:
            continue
        deltas = []
        for x in keys:
            a, b = e["micro"].get(x), base["micro"].get(x)
            if a is not None and b is not None:
                deltas.append(f"{names[x]} {pct(a)} ({_pts(a - b)})")
        out.append(f"{arm} stored {pct(e['stored_fraction'])}% of add-all's memories; micro "
                   + ", ".join(deltas) + " points against add-all.")
        cells = []
        for qtype, row in e["per_category"].items():
            for x in keys:
                a, b = row.get(x), base["per_category"].get(qtype, {}).get(x)
                if a is not None and b is not None:
                    cells.append((a - b, qtype, x))
        if cells:
            worst, best = min(cells), max(cells)
            if worst[0] < 0:
                out.append(f"{arm}'s largest loss is {names[worst[2]]} on {worst[1]} ({_pts(worst[0])} points); "
                           + (f"its largest gain {names[best[2]]} on {best[1]} ({_pts(best[0])})."
                              if best[0] > 0 else "it gains nowhere."))
            else:
                out.append(f"{arm} loses on no question type and metric of {', '.join(names.values())}.")
        if e["evidence_turns"]:
            reasons = e.get("evidence_drop_reasons") or {}
            lost = e["evidence_turns"] - e["evidence_stored"]
            told = "; ".join(f"{n:g} {why}" for why, n in reasons.items()) if reasons else "none"
            were = "was" if lost == 1 else "were"
            out.append(f"{arm} kept {e['evidence_stored']:g} of {e['evidence_turns']:g} evidence (has_answer) turns "
                       f"as memories of their own; {lost:g} {were} not stored ({e['evidence_folded']:g} folded into "
                       f"another memory, {e['evidence_lost']:g} lost): {told}.")
    ms, rnd = arms.get("memsieve"), arms.get("random")
    if ms is not None and rnd is not None:
        x = keys[0]
        a, r = ms["micro"].get(x), rnd["micro"].get(x)
        if a is not None and r is not None:
            verdict = "above" if a > r else ("level with" if a == r else "below")
            out.append(f"At the same size ({pct(rnd['stored_fraction'])}% stored), a random drop reaches "
                       f"{names[x]} {pct(r)} micro (mean of {len(rnd.get('seeds') or [])} seeds); memsieve's "
                       f"{pct(a)} is {verdict} it.")
    for arm, e in arms.items():
        t, p = e["micro"].get(f"recall_all_text@{k}"), e["micro"].get(f"recall_all@{k}")
        if t is not None and p is not None and abs(p - t) >= 0.0005:
            out.append(f"For {arm}, recall_all@{k} by provenance is {pct(p)} and by exact text {pct(t)}: "
                       f"the {_pts(p - t)} points are evidence turns reachable only through a memory they were "
                       f"folded into.")
    ceil = summary.get("ceilings") or {}
    if all(r in ceil and ceil[r]["micro"] is not None for r in ("evidence turns", "answer sessions")):
        out.append(f"Read whole, before any search, the evidence turns hold answer recall "
                   f"{pct(ceil['evidence turns']['micro'])} micro and the answer sessions "
                   f"{pct(ceil['answer sessions']['micro'])}: a search whose first {k} hits were exactly "
                   f"the evidence turns would score the first; answer words above the second come from "
                   f"sessions that do not hold the answer (see \"What the data holds\").")
    if meta.get("reference_time_passed"):
        out.append(f"Each question was searched with `{meta['reference_time_hook']}` set to its question date.")
    else:
        out.append(f"The question date was not passed: `Memory.search` takes no `{meta['reference_time_hook']}` "
                   f"yet (the harness passes it once it does).")
    return out


def _overall_rows(arms: dict[str, Any], avg: str, ks: list[int]) -> tuple[list[str], list[list[str]]]:
    k = primary_key(ks)
    header = (["arm", "stored", "stored %", "evidence own %", "evidence kept %"] + [f"answer@{x}" for x in ks]
              + [f"undated@{k}", f"extractive@{k}"] + [f"any@{x}" for x in ks] + [f"all@{x}" for x in ks]
              + [f"share@{x}" for x in ks]
              + [f"any text@{k}", f"all text@{k}", f"session@{k}", f"NDCG@{max(ks)}", "ingest s", "search ms"])
    rows = []
    for arm, e in arms.items():
        m = e[avg]
        own = e["evidence_stored"] / e["evidence_turns"] if e["evidence_turns"] else None
        rows.append([arm, f"{e['stored']:.0f}", pct(e["stored_fraction"]), pct(own), pct(e.get("evidence_kept_fraction"))]
                    + [pct(m.get(f"answer_recall@{x}")) for x in ks] + [pct(m.get(f"answer_recall_undated@{k}")),
                                                                        pct(m.get(f"answer_recall_extractive@{k}"))]
                    + [pct(m.get(f"recall_any@{x}")) for x in ks] + [pct(m.get(f"recall_all@{x}")) for x in ks]
                    + [pct(m.get(f"recall_share@{x}")) for x in ks]
                    + [pct(m.get(f"recall_any_text@{k}")), pct(m.get(f"recall_all_text@{k}")),
                       pct(m.get(f"session_recall_any@{k}")), pct(m.get(f"ndcg@{max(ks)}")),
                       f"{e['ingest_s']:.1f}", "-" if e["search_ms_mean"] is None else f"{e['search_ms_mean']:.1f}"])
    return header, rows


def markdown(summary: dict[str, Any]) -> str:
    """summary.md: the prose, the overall micro and macro tables, per type, dropped evidence, bookkeeping."""
    meta, arms = summary["meta"], summary["arms"]
    ks, k = meta["ks"], _k(meta)
    sel = meta["selection"]
    how = (f"{sel['per_type']} per question_type drawn with seed {sel['seed']}" if sel["per_type"] else "all")
    if sel.get("limit"):
        how += f", first {sel['limit']}"
    out = ["# LongMemEval evaluation of the write gate", ""]
    out += [f"Data: `{Path(meta['data']).name}`, {meta['questions']} questions ({how}); one scope per question "
            f"holding its haystack, one memory candidate per non-empty turn. Every question is searched with "
            f"`Memory.search` (default mode, now `{meta['search_default']}`) in its own scope. Percentages. "
            f"`any`/`all`: some / every has_answer turn is in the top k by provenance (a hit's sources, NOOPs "
            f"folded into it included; LongMemEval's recall_any and recall_all); `share`: the share of a question's "
            f"has_answer turns in the top k, averaged; `text`: the same by the hit's text containing the turn's; `session`: a hit "
            f"from an answer session; NDCG binary on has_answer provenance; `evidence own`: has_answer turns stored "
            f"as memories of their own, `kept`: those plus the ones folded into another memory. {DATED_NOTE} "
            f"Abstention questions "
            f"(`_abs`) are out of answer recall; questions without has_answer turns are out of turn recall.", ""]
    out += ["## What the numbers say", ""] + [f"- {s}" for s in narrative(summary)] + [""]
    out += ["## Overall", ""]
    for avg, what in (("micro", "per question"), ("macro", "mean of the question-type means")):
        header, rows = _overall_rows(arms, avg, ks)
        out += [f"**{avg.capitalize()}** ({what})", "", md_table(header, rows), ""]
    first = next(iter(arms.values()))
    types = sorted(first["per_category"])
    header = ["arm"] + [f"{t} (n={first['per_category'][t]['n']})" for t in types]
    out += ["## Per question type", ""]
    for name in _TYPE_METRICS:
        metric = f"{name}@{max(ks) if name == 'ndcg' else k}"
        rows = [[arm] + [pct(e["per_category"].get(t, {}).get(metric)) for t in types] for arm, e in arms.items()]
        out += [f"`{metric}`", "", md_table(header, rows), ""]
    out += _ceiling_section(summary, k)
    out += ["## Evidence turns the write path did not store", "",
            "Counts by reason (texts, novelty, information and the memory each was folded into are in "
            f"`{meta.get('questions_file', 'questions.jsonl')}`, which stays out of git).", ""]
    rows = []
    for arm, e in arms.items():
        for why, n in (e.get("evidence_drop_reasons") or {}).items():
            rows.append([arm, why, f"{n:g}"])
    out += [md_table(["arm", "reason", "evidence turns"], rows) if rows else "None: every evidence turn was stored.", ""]
    rows = [[arm, why, f"{n:g}"] for arm, e in arms.items() for why, n in (e.get("noop_reasons") or {}).items()]
    if rows:
        out += ["All NOOPs (every turn, evidence or not), by reason", "", md_table(["arm", "reason", "NOOPs"], rows), ""]
    out += _bookkeeping(meta, arms)
    return "\n".join(out) + "\n"


def _ceiling_section(summary: dict[str, Any], k: int) -> list[str]:
    """Answer recall of the data read whole, beside each arm's answer recall@k."""
    ceil = summary.get("ceilings")
    if not ceil:
        return []
    types = sorted(next(iter(ceil.values()))["per_type"])
    header = ["reader", "micro", "macro"] + types
    rows = [[reading, pct(c["micro"]), pct(c["macro"])]
            + [pct(c["per_type"].get(t, {}).get("recall")) for t in types] for reading, c in ceil.items()]
    key = f"answer_recall@{k}"
    rows += [[f"{arm}, first {k} hits", pct(e["micro"].get(key)), pct(e["macro"].get(key))]
             + [pct(e["per_category"].get(t, {}).get(key)) for t in types] for arm, e in summary["arms"].items()]
    return ["## What the data holds", "",
            "Answer recall of each question's haystack read whole, before any search, every text dated as a "
            "hit is: its has_answer turns, every turn of its answer sessions, every turn. Many answers are "
            "computed (a count, an interval) or a preference rubric, said nowhere; their words are found "
            "only by chance. The arms' figures are repeated below for comparison.", "",
            md_table(header, rows), ""]


def _bookkeeping(meta: dict[str, Any], arms: dict[str, Any]) -> list[str]:
    ld, emb = meta["loader"], meta["embedding"]
    out = ["## Checks and bookkeeping", ""]
    out.append(f"- File: {ld['questions_in_file']} questions ({', '.join(f'{t} {n}' for t, n in ld['types_in_file'].items())}). "
               f"Kept: {', '.join(f'{t} {n}' for t, n in meta['selection']['types'].items())}.")
    out.append(f"- Kept questions: {ld['sessions']} sessions, {ld['turns']} turns ({ld['empty_turns_skipped']} empty, "
               f"skipped), {ld['evidence_turns']} has_answer turns; {ld['questions_without_evidence']} question(s) "
               f"without one; {ld['abstention_questions']} abstention question(s); {ld['repeated_session_ids']} "
               f"repeated session id(s) within a haystack (their turns share source ids). Longest turn "
               f"{ld['longest_turn_chars']} characters (`max_text_chars` {meta['max_text_chars']}).")
    out.append(f"- Embeddings: {emb['distinct_texts']} distinct texts, {emb['embedded']} embedded and "
               f"{emb['reused']} reused from the cache ({emb['source']}, {emb['embed_s']} s, {emb['embedder']}); the "
               f"arms made {emb['hits_in_arms']} lookups and {emb['misses_in_arms']} misses.")
    missing = sum(e.get("provenance_missing") or 0 for e in arms.values())
    checked = sum(e.get("provenance_checked") or 0 for e in arms.values())
    out.append(f"- Provenance: of {checked:g} hits checked, {missing:g} lacked in `SearchResult.sources` an id the "
               f"harness saw credited to that memory.")
    out.append(f"- Cost: arms {meta['arms_s']} s on {meta['cpu_count']} CPU(s) (" + ", ".join(
        f"{a} ingest {e['ingest_s']:.1f} s, search {e['search_s']:.1f} s" for a, e in arms.items())
        + f"); whole run {meta['wall_s']} s before the report. Store: {meta['store']}.")
    code = meta.get("code") or {}
    out.append(f"- Code: {code.get('commit')}" + (" (with uncommitted changes)" if code.get("dirty_files") else "") + ".")
    return out + [""]


def write_plots(out: Path, summary: dict[str, Any]) -> list[Path]:
    """recall_by_type.png and stored_vs_recall.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memsieve.eval.plots import STYLE

    meta, arms = summary["meta"], summary["arms"]
    k = _k(meta)
    colors = {**{a: s["color"] for a, s in STYLE.items()}, "add-all": "black"}
    first = next(iter(arms.values()))
    types = sorted(first["per_category"]) + ["overall"]
    metrics = [f"answer_recall@{k}", f"recall_any@{k}", f"recall_all@{k}"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.4 * len(metrics), 4.6), squeeze=False)
    width = 0.8 / max(len(arms), 1)
    for ax, metric in zip(axes[0], metrics):
        for j, (arm, e) in enumerate(arms.items()):
            ys = [e["per_category"].get(t, {}).get(metric) for t in types[:-1]] + [e["micro"].get(metric)]
            xs = [i + (j - (len(arms) - 1) / 2) * width for i in range(len(types))]
            ax.bar(xs, [100 * y if y is not None else 0 for y in ys], width, label=arm, color=colors.get(arm))
        ax.set_xticks(range(len(types)))
        ax.set_xticklabels([t.replace("single-session-", "ss-") for t in types], rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(f"{metric} (%)")
        ax.set_ylim(0, 105)
        ax.set_title(metric)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    paths = [out / "recall_by_type.png", out / "stored_vs_recall.png"]
    fig.savefig(paths[0], dpi=100)
    plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), squeeze=False)
    for ax, avg in zip(axes[0], ("micro", "macro")):
        for arm, e in arms.items():
            y = e[avg].get(f"answer_recall@{k}")
            if y is None or e.get("stored_fraction") is None:
                continue
            ax.scatter([100 * e["stored_fraction"]], [100 * y], s=80, color=colors.get(arm), edgecolor="black",
                       marker="*" if arm == "add-all" else "D", zorder=5)
            ax.annotate(arm, (100 * e["stored_fraction"], 100 * y), textcoords="offset points", xytext=(5, -12),
                        fontsize=8)
        ax.set_xlabel("stored, % of add-all")
        ax.set_ylabel(f"answer_recall@{k} (%)")
        ax.set_title(f"stored fraction vs answer recall@{k} ({avg})")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(paths[1], dpi=100)
    plt.close(fig)
    return paths


def _json_default(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return str(x)


def write_all(out: Path, summary: dict[str, Any]) -> None:
    """Write summary.json (numbers, no data text), summary.md and the plots."""
    summary["meta"]["narrative"] = narrative(summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=_json_default) + "\n")
    (out / "summary.md").write_text(markdown(summary))
    write_plots(out, summary)
