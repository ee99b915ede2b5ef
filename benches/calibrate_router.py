"""Calibrate the router on half of LoCoMo's dev split; judge it against the default mode on the other half.

Every turn of every dev conversation is stored the way the evaluation's
retrieval table stores it (``memsieve.eval.retrieval.stored_everything``: one
``add()`` per turn, dated by its session, gate off, one scope per
conversation), so the search modes are judged alone. The modes are those
``Memory.search`` accepts (read from its signature at run time, less ``auto``),
and the router can route to; the **default** is ``Memory.search``'s default
``mode``. Every answerable question is searched once with each mode (top 10),
scoring

- correct = answer-token recall@10 of the results as the reader is shown them,
  dated (``memsieve.read.render.render_results``: ``[YYYY-MM-DD] text`` per line),
  the evaluation's primary measure (``memsieve.eval.metrics.answer_recall``);
- cost = the search's latency in ms (query vectors are looked up, not computed).

Category 5 (adversarial) has no answer and is left out. Alternate conversations
(by sample id: 3 of 6) calibrate the routing table of each preset and the
nearest-centroid classifier; the other 3 judge the routed search of each preset
against the default mode, with a paired bootstrap 95% interval of the
difference (micro: per question; macro: mean of the per-category means).

    python benches/calibrate_router.py [--json FILE] [--doc docs/ROUTER.md]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo_dev.json"
VECTOR_CACHE = Path(tempfile.gettempdir()) / "memsieve-bench-search-vectors.npz"
MARK_BEGIN = "<!-- results:begin (written by benches/calibrate_router.py) -->"
MARK_END = "<!-- results:end -->"
BOOTSTRAP_DRAWS = 2000


def modes() -> tuple[tuple[str, ...], str]:
    """(the modes to calibrate over, the default mode): Memory.search's modes the router accepts."""
    from memsieve.eval.arms import default_search_mode, search_modes
    from memsieve.router import BACKENDS

    return tuple(m for m in search_modes() if m in BACKENDS), default_search_mode()


def recall(answer: str, hits: list[Any], limit: int) -> float | None:
    """Answer-token recall of the dated rendering of ``hits`` (None: the answer has no content token)."""
    from memsieve.eval.metrics import answer_recall
    from memsieve.read.render import render_results

    return answer_recall(answer, render_results(hits, dated=True).split("\n"), limit)


def summarize(recalls: list[tuple[str, float]], costs: list[float]) -> dict[str, float]:
    """Micro (per question) and macro (mean of categories) recall, latency."""
    by_cat: dict[str, list[float]] = {}
    for cat, r in recalls:
        by_cat.setdefault(cat, []).append(r)
    return {"micro": statistics.fmean(r for _, r in recalls),
            "macro": statistics.fmean(statistics.fmean(v) for v in by_cat.values()),
            "latency_ms": statistics.fmean(costs), "latency_ms_median": statistics.median(costs),
            "n": len(recalls), **{f"recall[{c}]": statistics.fmean(v) for c, v in sorted(by_cat.items())}}


def paired_interval(routed: np.ndarray, base: np.ndarray, cats: np.ndarray, rng: np.random.Generator) -> dict:
    """Mean micro and macro difference routed - base with paired bootstrap 95% intervals over questions."""
    n_cat = int(cats.max()) + 1

    def macro(values: np.ndarray, c: np.ndarray) -> float:
        sums, counts = np.bincount(c, values, n_cat), np.bincount(c, minlength=n_cat)
        return float((sums[counts > 0] / counts[counts > 0]).mean())

    draws = rng.integers(0, len(routed), (BOOTSTRAP_DRAWS, len(routed)))
    diff = routed - base
    micro_boot = diff[draws].mean(axis=1)
    macro_boot = np.array([macro(routed[d], cats[d]) - macro(base[d], cats[d]) for d in draws])
    return {"micro": {"mean": float(diff.mean()), "ci95": [float(np.quantile(micro_boot, q)) for q in (0.025, 0.975)]},
            "macro": {"mean": macro(routed, cats) - macro(base, cats),
                      "ci95": [float(np.quantile(macro_boot, q)) for q in (0.025, 0.975)]}}


class Bench:
    """The stored dev split and timed searches over it."""

    def __init__(self, mem: Any, backends: tuple[str, ...], *, limit: int, repeats: int) -> None:
        self.mem, self.backends, self.limit, self.repeats = mem, backends, limit, repeats

    def timed(self, fn: Any) -> tuple[Any, float]:
        # The fastest of a few runs: the machine is shared, and the minimum is the
        # least disturbed estimate of what the search itself costs.
        best, out = float("inf"), None
        for _ in range(self.repeats):
            t = time.perf_counter()
            out = fn()
            best = min(best, 1000 * (time.perf_counter() - t))
        return out, best

    def fixed_row(self, q: Any, rotate: int) -> dict[str, tuple[float, float]] | None:
        """Every backend on one question (order rotating): {backend: (recall, ms)}, None if unscorable."""
        row = {}
        for j in range(len(self.backends)):
            b = self.backends[(rotate + j) % len(self.backends)]
            hits, ms = self.timed(lambda: self.mem.search(q.question, user_id=q.sample_id, mode=b, limit=self.limit))
            r = recall(q.answer, hits, self.limit)
            if r is None:
                return None
            row[b] = (r, ms)
        return row


def run(args: argparse.Namespace) -> dict:
    from memsieve.eval.locomo import CATEGORY_LABELS, load_locomo
    from memsieve.eval.retrieval import stored_everything
    from memsieve.eval.vectors import embed_all
    from memsieve.router import (PRESETS, CalibrationSample, NearestCentroidClassifier, RoutedSearch,
                                 build_routing_table)

    t_start, started = time.perf_counter(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    backends, default = modes()
    ds = load_locomo(args.data)
    table, embed_info = embed_all(ds, streams=("turns",), embedding_cache=str(args.embedding_cache), progress=False)
    scopes = sorted(c.sample_id for c in ds.conversations)
    calib_scopes, eval_scopes = scopes[0::2], scopes[1::2]
    questions = [q for q in ds.questions if q.answer is not None and q.category in CATEGORY_LABELS
                 and q.category != 5]
    adversarial = len(ds.questions) - len(questions)
    label = {q.qid: CATEGORY_LABELS[q.category] for q in questions}
    t0 = time.perf_counter()
    with stored_everything(ds, table, "turns") as (mem, ingest_run):
        ingest_s = time.perf_counter() - t0
        stored = sum(len(mem.get_all(user_id=s)) for s in scopes)
        for sid in scopes:  # warm each scope's state before timing
            for b in backends:
                mem.search("warm up", user_id=sid, mode=b, limit=args.limit)
        bench = Bench(mem, backends, limit=args.limit, repeats=args.repeats)

        # Phase 1: every calibration question on every backend.
        calib, no_content = [], 0
        for i, q in enumerate(x for x in questions if x.sample_id in calib_scopes):
            row = bench.fixed_row(q, i)
            if row is None:
                no_content += 1
            else:
                calib.append((q, row))
        samples = [CalibrationSample(label[q.qid], b, ms, r) for q, row in calib for b, (r, ms) in row.items()]
        clf = NearestCentroidClassifier(min_margin=args.min_margin).fit(
            mem.embed([q.question for q, _ in calib]), [label[q.qid] for q, _ in calib])
        tables = {p: build_routing_table(samples, preset=p, min_samples_per_cell=args.min_samples,
                                         accuracy_tolerance=args.tolerance) for p in PRESETS}
        routers = {p: RoutedSearch(mem, t, clf) for p, t in tables.items()}

        # Phase 2: each evaluation question on the fixed backends and through each preset's
        # router, interleaved so that load from other processes falls on every arm alike.
        evals, decisions = [], []
        routed_rows: dict[str, list[tuple[float, float, str]]] = {p: [] for p in PRESETS}
        for i, q in enumerate(x for x in questions if x.sample_id in eval_scopes):
            row = bench.fixed_row(q, i)
            if row is None:
                no_content += 1
                continue
            evals.append((q, row))
            for j in range(len(PRESETS)):
                p = PRESETS[(i + j) % len(PRESETS)]
                (hits, decision), ms = bench.timed(
                    lambda: routers[p].search(q.question, user_id=q.sample_id, limit=args.limit))
                routed_rows[p].append((recall(q.answer, hits, args.limit) or 0.0, ms, decision.backend))
            decisions.append(decision)

    def fixed_summary(rows: list, b: str) -> dict[str, float]:
        return summarize([(label[q.qid], row[b][0]) for q, row in rows], [row[b][1] for _, row in rows])

    cat_names = sorted({label[q.qid] for q, _ in evals})
    cats = np.array([cat_names.index(label[q.qid]) for q, _ in evals])
    base = np.array([row[default][0] for _, row in evals])
    rng = np.random.default_rng(0)
    presets = {}
    for p in PRESETS:
        rows, tbl = routed_rows[p], tables[p]
        true_cat = summarize([(label[q.qid], row[tbl.backend_for(label[q.qid])][0]) for q, row in evals],
                             [row[tbl.backend_for(label[q.qid])][1] for _, row in evals])
        presets[p] = {"table": tbl.to_dict(),
                      "routed": summarize([(label[q.qid], r) for (r, _, _), (q, _) in zip(rows, evals)],
                                          [ms for _, ms, _ in rows]),
                      "routed_true_category": true_cat,
                      "backend_counts": {b: sum(1 for *_, used in rows if used == b) for b in backends},
                      "gain_vs_default": paired_interval(np.array([r for r, _, _ in rows]), base, cats, rng)}
    return {
        "data": str(args.data), "date": started,
        "limit": args.limit, "backends": list(backends), "default_mode": default,
        "scoring": "answer-token recall@10 of render_results(hits, dated=True)",
        "min_samples_per_cell": args.min_samples, "accuracy_tolerance": args.tolerance,
        "min_margin": args.min_margin, "calibration_conversations": calib_scopes,
        "evaluation_conversations": eval_scopes, "turns": ingest_run.candidates, "stored": stored,
        "repeats": args.repeats, "questions_answerable": len(questions), "questions_adversarial_excluded": adversarial,
        "questions_without_content_tokens": no_content,
        "calibration_questions": len(calib), "evaluation_questions": len(evals),
        "classifier": {"accuracy": statistics.fmean(d.predicted == label[q.qid] for d, (q, _) in zip(decisions, evals)),
                       "below_min_margin": sum(d.category is None for d in decisions),
                       "categories": list(clf.categories), "counts": list(clf.counts)},
        "calibration_fixed": {b: fixed_summary(calib, b) for b in backends},
        "fixed": {b: fixed_summary(evals, b) for b in backends},
        "per_question_oracle": summarize([(label[q.qid], max(r for r, _ in row.values())) for q, row in evals],
                                         [statistics.fmean(ms for _, ms in row.values()) for _, row in evals]),
        "presets": presets, "embed": embed_info,
        "seconds": {"ingest": ingest_s, "total": time.perf_counter() - t_start},
    }


def table_text(res: dict) -> str:
    from memsieve.eval.locomo import CATEGORY_LABELS

    cats = [f"recall[{c}]" for c in list(CATEGORY_LABELS.values())[:4]]
    head = f"| arm | micro | macro | {' | '.join(c[7:-1] for c in cats)} | latency ms |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def line(name: str, s: dict) -> None:
        per = " | ".join(f"{s.get(c, float('nan')):.3f}" for c in cats)
        lines.append(f"| {name} | {s['micro']:.3f} | {s['macro']:.3f} | {per} | {s['latency_ms']:.3f} |")

    for b, s in res["fixed"].items():
        line(f"fixed {b}" + (" (default)" if b == res["default_mode"] else ""), s)
    for p, r in res["presets"].items():
        line(f"routed {p}", r["routed"])
        line(f"routed {p}, true category", r["routed_true_category"])
    line("per-question oracle (upper bound)", res["per_question_oracle"])
    return "\n".join(lines)


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def verdict(res: dict) -> str:
    """The plain answer: does any preset beat the default mode, with its intervals."""
    default = res["default_mode"]
    out = []
    beats = []
    for p, r in res["presets"].items():
        g = r["gain_vs_default"]
        (mlo, mhi), (alo, ahi) = g["micro"]["ci95"], g["macro"]["ci95"]
        out.append(f"- {p}: micro {_pts(g['micro']['mean'])} points [{_pts(mlo)}, {_pts(mhi)}], "
                   f"macro {_pts(g['macro']['mean'])} [{_pts(alo)}, {_pts(ahi)}]")
        if mlo > 0 and alo > 0:
            beats.append(p)
    if beats:
        head = (f"**Routing beats the default `{default}`** with {', '.join(beats)}: both intervals of the gain "
                "exclude zero.")
    else:
        head = (f"**Routing does not beat the default `{default}`**: no preset's gain has both its micro and its "
                "macro interval above zero. Use the default; the router stays available (`mode=\"auto\"`) for a "
                "workload whose own calibration says otherwise.")
    return "\n".join([head, "", f"Gain over fixed `{default}` on the evaluation half (points of answer recall@"
                      f"{res['limit']}, dated; paired bootstrap 95% interval, {BOOTSTRAP_DRAWS} draws):", "", *out])


def narrative(res: dict) -> str:
    """Sentences chosen and filled from the numbers of this run."""
    fixed, out = res["fixed"], []
    default = res["default_mode"]
    for p, r in res["presets"].items():
        routed, truth = r["routed"], r["routed_true_category"]
        counts = ", ".join(f"{b} {n}" for b, n in r["backend_counts"].items() if n)
        used = [b for b, n in r["backend_counts"].items() if n]
        gap = truth["micro"] - routed["micro"]
        clf_note = (f"the classifier's mistakes cost {100 * gap:.1f} micro points against routing by the true "
                    "category" if gap > 0.0005 else
                    "routing by the true category would not have done better" if gap > -0.0005 else
                    f"the classifier's mistakes happened to help by {-100 * gap:.1f} micro points")
        if len(used) == 1:
            extra = routed["latency_ms"] - fixed[used[0]]["latency_ms"]
            out.append(f"{p} sent every query to {used[0]}, so it retrieves exactly what fixed {used[0]} does; "
                       f"its {extra:+.3f} ms over fixed {used[0]} is the cost of classifying the query.")
            continue
        ratio = routed["latency_ms"] / fixed[default]["latency_ms"]
        out.append(f"{p}: sent queries to {counts}; mean latency {routed['latency_ms']:.3f} ms "
                   f"({ratio:.2f}x fixed {default}); {clf_note}.")
    clf = res["classifier"]
    n_cat = len(clf["categories"])
    out.append(f"The nearest-centroid classifier labels {100 * clf['accuracy']:.1f}% of the evaluation questions "
               f"with their LoCoMo category ({n_cat} categories, so chance is about {100 / n_cat:.0f}%); "
               f"{clf['below_min_margin']} fell below the margin floor {res['min_margin']:g} and took the "
               "default route.")
    orc = res["per_question_oracle"]
    out.append(f"Picking the best mode for each question after the fact would reach {orc['micro']:.3f} micro, "
               f"{100 * (orc['micro'] - fixed[default]['micro']):.1f} points over fixed {default}: that is the "
               "most any per-query router could win here.")
    return "\n\n".join(out)


def routes_text(res: dict) -> str:
    lines = ["| preset | category | backend | from calibration | reason |", "|---|---|---|---|---|"]
    for p, r in res["presets"].items():
        t = r["table"]
        for route in t["routes"] + [t["default"]]:
            lines.append(f"| {p} | {route['category']} | {route['backend']} | "
                         f"{'yes' if route['from_calibration'] else 'no'} | {route['reason']}: {route['detail']} |")
    return "\n".join(lines)


def results_markdown(res: dict, argv: list[str], commit: str, *, label: str = "") -> str:
    return "\n".join([
        MARK_BEGIN,
        "## Results on LoCoMo dev",
        "",
        f"Run: `python benches/calibrate_router.py {shlex.join(argv)}` on commit `{commit}`, "
        f"{res.get('date', 'date not recorded')}. Modes: {', '.join(res['backends'])}; default "
        f"`{res['default_mode']}`{f' ({label})' if label else ''}. {res['turns']} turns stored as {res['stored']} memories (gate off, dated by "
        f"session); {res['questions_answerable']} answerable questions, {res['questions_adversarial_excluded']} "
        f"adversarial (category 5, no answer) excluded, {res['questions_without_content_tokens']} left out because "
        f"their answer has no content token. Calibration on {', '.join(res['calibration_conversations'])} "
        f"({res['calibration_questions']} questions), evaluation on {', '.join(res['evaluation_conversations'])} "
        f"({res['evaluation_questions']} questions). Scored: {res['scoring']}. "
        f"min_samples_per_cell={res['min_samples_per_cell']}, accuracy_tolerance={res['accuracy_tolerance']}, "
        f"cost = search latency in ms (fastest of {res['repeats']}). Whole run {res['seconds']['total']:.0f} s.",
        "",
        verdict(res),
        "",
        "Evaluation half, answer-token recall@10 of the dated lines (micro = per question, macro = mean of "
        "categories):",
        "",
        table_text(res),
        "",
        narrative(res),
        "",
        "The tables the three presets derived from the calibration half:",
        "",
        routes_text(res),
        "",
        MARK_END,
    ])


def write_doc(path: Path, block: str) -> None:
    from bench_search import write_doc as write_block  # benches/ is on sys.path when a bench runs

    write_block(path, block, begin=MARK_BEGIN, end=MARK_END, new_file="# The calibrated router\n", heading="")


def git_commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "log", "-1", "--format=%h"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo dev JSON (read in place)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write all numbers here")
    parser.add_argument("--doc", type=Path, help="rewrite the results section of this markdown file")
    parser.add_argument("--embedding-cache", type=Path, default=VECTOR_CACHE, help="an .npz of the vectors, reused")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--min-samples", type=int, default=10)
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--min-margin", type=float, default=0.0)
    parser.add_argument("--repeats", type=int, default=2, help="time each search this often, keep the fastest")
    parser.add_argument("--label", default="", help="a note on the backends, printed in the doc's run line")
    args = parser.parse_args(argv)
    res = run(args)
    print(verdict(res), table_text(res), routes_text(res), narrative(res), sep="\n\n")
    print(f"\ntimes (s): {json.dumps({k: round(v, 1) for k, v in res['seconds'].items()})}")
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=2), encoding="utf-8")
    if args.doc:
        write_doc(args.doc, results_markdown(res, argv, git_commit(), label=args.label))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
