"""Turn job results into summary.json, sweep.json, summary.md and the plots."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memsieve.eval import narrative
from memsieve.eval.locomo import CATEGORY_LABELS
from memsieve.eval.metrics import primary_key

# How answer recall is scored, said once for every report that shows it.
DATED_NOTE = ("Answer recall is scored on each hit as the reader sees it, `[8 May 2023] text` "
              "(memsieve.read.render's default date format), at `search(limit=k)`; `undated` is the same "
              "over the bare text.")


def _mean_tree(trees: Sequence[Any]) -> Any:
    """Leaf-wise mean of equally shaped dicts of numbers (None where any is None)."""
    first = trees[0]
    if isinstance(first, dict):
        return {k: _mean_tree([t.get(k) for t in trees]) for k in first}
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        vals = [t for t in trees if isinstance(t, (int, float))]
        if len(vals) != len(trees):
            return None
        if all(v == first for v in vals):
            return first  # keeps counts such as a category's n as integers
        return sum(vals) / len(vals)
    return first


_ARM_FIELDS = ("stored", "noops", "llm_calls", "llm_tokens", "llm_faults", "ingest_s", "search_ms_mean",
               "search_ms_p95", "candidates", "offered", "alignment_faults", "provenance_missing",
               "provenance_checked")


def _arm_entry(results: Sequence[dict[str, Any]], base_stored: int) -> dict[str, Any]:
    spec = results[0]["spec"]
    entry: dict[str, Any] = {key: _mean_tree([r[key] for r in results]) for key in ("micro", "macro", "per_category")}
    for key in _ARM_FIELDS:
        entry[key] = _mean_tree([r[key] for r in results])
    entry["stored_fraction"] = entry["stored"] / base_stored if base_stored else None
    entry["label"] = spec["label"]
    entry["gate"] = spec["gate"]
    entry["events"] = _mean_tree([r["events"] for r in results]) if len(results) == 1 else None
    entry["layers"] = results[0]["layers"] if len(results) == 1 else None
    if "consolidation" in results[0]:
        entry["consolidation"] = results[0]["consolidation"]
    if spec["drop_rate"] is not None:
        entry["drop_rate"] = spec["drop_rate"]
        entry["seeds"] = [{"seed": r["spec"]["seed"], "stored": r["stored"],
                           **{k: r["micro"][k] for k in r["micro"] if k.startswith("answer_recall@")}}
                          for r in sorted(results, key=lambda r: r["spec"]["seed"])]
    return entry


def build(results: Sequence[dict[str, Any]], *, streams: Sequence[str], arms: Sequence[str]
          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Summary ({stream: {arm: entry}}) and the sweep's points (one per configuration).

    The random arm's entry is the mean over its seeds; so is each random sweep point.
    """
    summary: dict[str, Any] = {}
    points: list[dict[str, Any]] = []
    for stream in streams:
        mine = [r for r in results if r["stream"] == stream]
        heads = [r for r in mine if r["headline"]]
        base = next((r for r in heads if r["spec"]["arm"] == "add-all"), None)
        base_stored = base["stored"] if base else max((r["stored"] for r in mine), default=0)
        summary[stream] = {}
        for arm in arms:
            group = [r for r in heads if r["spec"]["arm"] == arm]
            if group:
                summary[stream][arm] = _arm_entry(group, base_stored)
        by_config: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in mine:
            s = r["spec"]
            by_config[json.dumps([s["arm"], s["gate"], s["drop_rate"], s["llm"]], sort_keys=True)].append(r)
        for group in by_config.values():
            e = _arm_entry(group, base_stored)
            s = group[0]["spec"]
            points.append({"stream": stream, "arm": s["arm"], "label": s["label"].split(" seed=")[0],
                           "params": s["params"], "gate": s["gate"], "headline": any(r["headline"] for r in group),
                           "seeds": len(group), "stored": e["stored"], "stored_fraction": e["stored_fraction"],
                           "noops": e["noops"], "micro": e["micro"], "macro": e["macro"]})
    return summary, points


def search_phrase(meta: dict[str, Any]) -> str:
    """How the questions were searched, from the run's meta: "`Memory.search` (mode hybrid, its default)"."""
    mode = meta.get("search")
    if mode is None:
        return "`Memory.search`"
    default = ", its default" if mode == meta.get("search_default") else ""
    return f"`Memory.search` (mode {mode}{default})"


def pct(x: float | None, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage string ("-" when missing)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}"


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def markdown(summary: dict[str, Any], sweep: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """summary.md: the narrative, the micro and macro tables, per category, the checks."""
    ks = meta["ks"]
    k = primary_key(ks)
    out = ["# LoCoMo evaluation of the write gate", ""]
    out += [f"Data: `{Path(meta['data']).name}` ({', '.join(meta['conversations'])}; {meta['questions']} "
            f"questions). All numbers are percentages unless marked; recall@k is over the top k of "
            f"{search_phrase(meta)} in the question's own conversation scope. {DATED_NOTE}", ""]
    out += ["## What the numbers say", ""] + [f"- {s}" for s in narrative.narrative(summary, sweep, meta)] + [""]
    for stream, arms in summary.items():
        out += [f"## Stream `{stream}`", ""]
        for avg in ("micro", "macro"):
            header = ["arm", "stored", "stored %", "NOOPs"] + [f"answer@{x}" for x in ks] + \
                     [f"answer@{k} undated", f"evidence@{k}", f"provenance@{k}", "LLM calls", "ingest s", "search ms"]
            rows = []
            for arm, e in arms.items():
                m = e[avg]
                rows.append([arm, f"{e['stored']:.0f}", pct(e["stored_fraction"]), f"{e['noops']:.0f}"]
                            + [pct(m.get(f"answer_recall@{x}")) for x in ks]
                            + [pct(m.get(f"{name}@{k}")) for name in ("answer_recall_undated", "evidence_recall",
                                                                        "provenance_recall")]
                            + [f"{e['llm_calls']:.0f}", f"{e['ingest_s']:.1f}",
                               "-" if e["search_ms_mean"] is None else f"{e['search_ms_mean']:.2f}"])
            what = "per question" if avg == "micro" else "mean of the category means"
            out += [f"**{avg.capitalize()}** ({what})", "", md_table(header, rows), ""]
        cats = sorted({c for e in arms.values() for c in e["per_category"]}, key=int)
        header = ["arm"] + [f"{c} {CATEGORY_LABELS.get(int(c), '?')} (n={arms[next(iter(arms))]['per_category'][c]['n']})"
                            for c in cats]
        for metric in (f"answer_recall@{k}", f"evidence_recall@{k}"):
            rows = [[arm] + [pct(e["per_category"][c].get(metric)) for c in cats] for arm, e in arms.items()]
            out += [f"Per category, `{metric}`", "", md_table(header, rows), ""]
    out += ["## Goals for the memsieve default", ""]
    goal_rows = [[g["stream"], g["goal"], "yes" if g["ok"] else ("n/a" if g["ok"] is None else "**no**"), g["detail"]]
                 for g in narrative.goal_checks(summary, sweep, k)]
    out += [md_table(["stream", "goal", "met", "measured"], goal_rows), ""]
    out += ["## Sweep", "", "Every configuration run, per stream (random: mean of 3 seeds).", ""]
    header = ["stream", "configuration", "stored %", f"answer@{k} micro", f"answer@{k} macro", f"evidence@{k} micro"]
    rows = [[p["stream"], p["label"], pct(p["stored_fraction"]), pct(p["micro"].get(f"answer_recall@{k}")),
             pct(p["macro"].get(f"answer_recall@{k}")), pct(p["micro"].get(f"evidence_recall@{k}"))]
            for p in sorted(sweep, key=lambda p: (p["stream"], p["arm"], -(p["stored_fraction"] or 0)))]
    out += [md_table(header, rows), ""]
    out += _checks_md(meta)
    return "\n".join(out) + "\n"


def _checks_md(meta: dict[str, Any]) -> list[str]:
    out = ["## Checks and bookkeeping", ""]
    cc = meta["category_check"]
    verdict = "consistent with" if cc["consistent"] else "**inconsistent** with"
    out.append(f"- Category labels: the question texts are {verdict} the map 1 multi-hop, 2 temporal, "
               f"3 open-domain, 4 single-hop, 5 adversarial.")
    for c in cc["checks"]:
        obs = c["observed"]
        out.append(f"  - {c['label']} = category {c['category']}: {c['claim']} -> category {c['winner']} "
                   f"({'ok' if c['ok'] else 'MISMATCH'}; when {pct(obs.get('when_share'))}%, "
                   f"evidence/question {obs.get('mean_evidence')}, would/likely {pct(obs.get('hypothetical_share'))}%, "
                   f"n={obs.get('n')})")
    ld = meta["loader"]
    out.append(f"- Evidence ids: {ld['evidence_ids']} usable; {ld['evidence_repaired']} repaired "
               f"(e.g. 'D:11:26' -> 'D11:26'), {ld['evidence_split']} split out of one string "
               f"('D8:6; D9:17'), {ld['evidence_malformed']} unusable ('D'), {ld['evidence_unknown_turn']} naming "
               f"no turn of the conversation; {ld['questions_without_evidence']} question(s) left without evidence "
               f"(out of evidence recall).")
    out.append(f"- Observation sources: {ld['fact_ids']} ids, {ld['fact_ids_repaired']} split or repaired, "
               f"{ld['fact_ids_malformed']} unusable, {ld['facts_malformed']} malformed facts skipped, "
               f"{ld['sessions_without_observation']} session(s) without observations.")
    out.append("- Category 5 (adversarial) has no `answer`, only a distractor `adversarial_answer`: it is left "
               "out of answer-token recall (micro and macro) and kept in evidence recall. "
               "`adversarial_recall@k` in questions.jsonl and summary.json records how much of the distractor "
               "the retrieved text contains, for reference only.")
    emb = meta["embedding"]
    out.append(f"- Embeddings: {emb['distinct_texts']} distinct texts embedded once ({emb['source']}, "
               f"{emb['embed_s']} s, {emb['embedder']}) through one CachedEmbedder keyed by text SHA-256; every "
               f"arm and sweep point read those vectors ({emb['hits_in_arms']} lookups, "
               f"{emb['misses_in_arms']} misses).")
    out.append(f"- Cost: {meta['job_count']} store runs in {meta['jobs_s']} s with {meta['jobs']} worker(s) on "
               f"{meta['cpu_count']} CPU(s); whole run {meta['wall_s']} s before plots.")
    out.append(f"- Per-question rows: `{meta.get('questions_file', 'questions.jsonl')}`.")
    return out + [""]


def write_all(out: Path, *, summary: dict[str, Any], sweep: list[dict[str, Any]], meta: dict[str, Any],
              results: Sequence[dict[str, Any]]) -> None:
    """Write summary.json, sweep.json, summary.md and the PNG plots."""
    from memsieve.eval import plots

    meta["narrative"] = narrative.narrative(summary, sweep, meta)
    meta["goals"] = narrative.goal_checks(summary, sweep, primary_key(meta["ks"]))
    meta["recommendation"] = narrative.recommend(sweep, primary_key(meta["ks"]))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=_json_default) + "\n")
    (out / "sweep.json").write_text(json.dumps(sweep, indent=1, default=_json_default) + "\n")
    (out / "summary.md").write_text(markdown(summary, sweep, meta))
    plots.write_plots(out, summary=summary, sweep=sweep, results=results, meta=meta)


def _json_default(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return str(x)
