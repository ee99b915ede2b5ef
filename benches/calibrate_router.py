"""Calibrate the router on LoCoMo's dev split and check whether routing pays off.

Every turn of every dev conversation is stored ("Speaker: text", its dia_id as
source) in one in-memory Memory with the gate off (profile "none"), one scope
per conversation, so the search backends are judged alone. Every question is
then searched once with each backend (dense, keyword, hybrid, top 10), scoring

- correct = answer-token recall@10: the share of the answer's content tokens
  (lowercased, punctuation removed, a small stopword list dropped) that occur
  in the ten retrieved texts;
- cost = the search's latency in milliseconds.

Category 5 (adversarial) has no answer, only a distractor, so it is left out of
calibration, of the classifier and of the evaluation. Half of the conversations
(alternate ones by sample id) calibrate the routing table and the nearest-centroid
classifier; the other half evaluates the routed search of each preset against
each fixed backend.

    python benches/calibrate_router.py [--json FILE] [--doc docs/ROUTER.md]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path("/work/shared/data/locomo/locomo_dev.json")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
BACKENDS = ("dense", "keyword", "hybrid")
# Function words only; "may" stays because LoCoMo answers use it as a month.
STOPWORDS = frozenset("""
a an the and or but of to in on at by for with from into about as is are was were be been being
it its this that these those he she they them his her their him i me my you your we our us
do does did has have had not no so if then than there here what which who whom when where why how
s t d ll m re ve
""".split())
_PUNCT = re.compile(r"[^\w\s]|_")
MARK_BEGIN = "<!-- results:begin (written by benches/calibrate_router.py) -->"
MARK_END = "<!-- results:end -->"


def tokens(text: str) -> set[str]:
    return {t for t in _PUNCT.sub(" ", text.lower()).split() if t not in STOPWORDS}


def answer_recall(answer: str, texts: list[str]) -> float | None:
    want = tokens(answer)
    if not want:
        return None
    seen: set[str] = set()
    for t in texts:
        seen |= tokens(t)
    return len(want & seen) / len(want)


@dataclass
class Question:
    scope: str
    text: str
    answer: str
    category: str


def load(path: Path) -> tuple[dict[str, list[tuple[str, str]]], list[Question], int]:
    """Turns per conversation and the answerable questions; also the count of category-5 questions."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    turns: dict[str, list[tuple[str, str]]] = {}
    questions, adversarial = [], 0
    for sample in raw:
        sid, conv = sample["sample_id"], sample["conversation"]
        sessions = sorted((int(k.split("_")[1]), v) for k, v in conv.items()
                          if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
        turns[sid] = [(f"{t['speaker']}: {t['text']}", str(t.get("dia_id", ""))) for _, sess in sessions
                      for t in sess if str(t.get("text", "")).strip()]
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORY_NAMES or "answer" not in qa:
                adversarial += 1
                continue
            questions.append(Question(sid, qa["question"], str(qa["answer"]), CATEGORY_NAMES[qa["category"]]))
    return turns, questions, adversarial


def summarize(recalls: list[tuple[str, float]], costs: list[float]) -> dict[str, float]:
    """Micro (per question) and macro (mean of categories) recall, mean latency."""
    by_cat: dict[str, list[float]] = {}
    for cat, r in recalls:
        by_cat.setdefault(cat, []).append(r)
    return {"micro": statistics.fmean(r for _, r in recalls),
            "latency_ms_median": statistics.median(costs),
            "macro": statistics.fmean(statistics.fmean(v) for v in by_cat.values()),
            "latency_ms": statistics.fmean(costs), "n": len(recalls),
            **{f"recall[{c}]": statistics.fmean(v) for c, v in sorted(by_cat.items())}}


def run(args: argparse.Namespace) -> dict:
    from memsieve import GateConfig, Memory
    from memsieve.embedding import CachedEmbedder, default_embedder
    from memsieve.router import (PRESETS, CalibrationSample, NearestCentroidClassifier, RoutedSearch,
                                 build_routing_table)

    t_start = time.perf_counter()
    turns, questions, adversarial = load(args.data)
    scopes = sorted(turns)
    calib_scopes, eval_scopes = scopes[0::2], scopes[1::2]
    embedder = CachedEmbedder(default_embedder())
    t0 = time.perf_counter()
    embedder.embed([t for conv in turns.values() for t, _ in conv] + [q.text for q in questions])
    embed_s = time.perf_counter() - t0

    mem = Memory(":memory:", embedder=embedder, gate=GateConfig(profile="none"))
    t0 = time.perf_counter()
    for sid in scopes:
        for text, dia in turns[sid]:
            mem.add(text, user_id=sid, source=dia or None)
    ingest_s = time.perf_counter() - t0
    stored = {sid: len(mem.get_all(user_id=sid)) for sid in scopes}
    for sid in scopes:  # warm each scope's gate state and the FTS pages before timing
        for b in BACKENDS:
            mem.search("warm up", user_id=sid, mode=b, limit=args.limit)

    def timed(fn) -> tuple[object, float]:
        # The fastest of a few runs: the machine is shared, and the minimum is the
        # least disturbed estimate of what the search itself costs.
        best, out = float("inf"), None
        for _ in range(args.repeats):
            t = time.perf_counter()
            out = fn()
            best = min(best, 1000 * (time.perf_counter() - t))
        return out, best

    def fixed_row(q: Question, rotate: int) -> dict[str, tuple[float, float]] | None:
        row = {}
        for j in range(len(BACKENDS)):
            b = BACKENDS[(rotate + j) % len(BACKENDS)]
            hits, ms = timed(lambda: mem.search(q.text, user_id=q.scope, mode=b, limit=args.limit))
            r = answer_recall(q.answer, [h.text for h in hits])
            if r is None:
                return None
            row[b] = (r, ms)
        return row

    # Phase 1: every calibration question on every backend (the order rotates so none is always first).
    calib, no_content = [], 0
    for i, q in enumerate(x for x in questions if x.scope in calib_scopes):
        row = fixed_row(q, i)
        if row is None:
            no_content += 1
        else:
            calib.append((q, row))
    samples = [CalibrationSample(q.category, b, ms, r) for q, row in calib for b, (r, ms) in row.items()]
    clf = NearestCentroidClassifier(min_margin=args.min_margin).fit(
        embedder.embed([q.text for q, _ in calib]), [q.category for q, _ in calib])
    tables = {p: build_routing_table(samples, preset=p, min_samples_per_cell=args.min_samples,
                                     accuracy_tolerance=args.tolerance) for p in PRESETS}
    routers = {p: RoutedSearch(mem, t, clf) for p, t in tables.items()}

    # Phase 2: each evaluation question on the fixed backends and through each preset's
    # router, interleaved so that load from other processes falls on every arm alike.
    evals = []
    routed_rows: dict[str, list[tuple[float, float, str]]] = {p: [] for p in PRESETS}
    decisions = []
    for i, q in enumerate(x for x in questions if x.scope in eval_scopes):
        row = fixed_row(q, i)
        if row is None:
            no_content += 1
            continue
        evals.append((q, row))
        for j in range(len(PRESETS)):
            p = PRESETS[(i + j) % len(PRESETS)]
            (hits, decision), ms = timed(lambda: routers[p].search(q.text, user_id=q.scope, limit=args.limit))
            routed_rows[p].append((answer_recall(q.answer, [h.text for h in hits]) or 0.0, ms, decision.backend))
        decisions.append(decision)

    clf_acc = statistics.fmean(d.predicted == q.category for d, (q, _) in zip(decisions, evals))
    unsure = sum(d.category is None for d in decisions)
    fixed = {b: summarize([(q.category, row[b][0]) for q, row in evals], [row[b][1] for _, row in evals])
             for b in BACKENDS}
    calib_fixed = {b: summarize([(q.category, row[b][0]) for q, row in calib], [row[b][1] for _, row in calib])
                   for b in BACKENDS}
    oracle = summarize([(q.category, max(r for r, _ in row.values())) for q, row in evals],
                       [statistics.fmean(ms for _, ms in row.values()) for _, row in evals])
    best_micro = max(BACKENDS, key=lambda b: fixed[b]["micro"])
    best_macro = max(BACKENDS, key=lambda b: fixed[b]["macro"])
    cat_names = sorted({q.category for q, _ in evals})
    cat_idx = np.array([cat_names.index(q.category) for q, _ in evals])
    fixed_r = {b: np.array([row[b][0] for _, row in evals]) for b in BACKENDS}

    def macro(values: np.ndarray, cats: np.ndarray) -> float:
        sums, counts = np.bincount(cats, values, len(cat_names)), np.bincount(cats, minlength=len(cat_names))
        return float((sums[counts > 0] / counts[counts > 0]).mean())

    rng = np.random.default_rng(0)
    presets = {}
    for p in PRESETS:
        table, rows = tables[p], routed_rows[p]
        chosen = {b: sum(1 for *_, used in rows if used == b) for b in BACKENDS}
        # The same table given the true category: what a perfect classifier would give.
        true_cat = summarize([(q.category, row[table.backend_for(q.category)][0]) for q, row in evals],
                             [row[table.backend_for(q.category)][1] for _, row in evals])
        diff = np.array([r - row[best_micro][0] for (r, _, _), (_, row) in zip(rows, evals)])
        draws = rng.integers(0, len(diff), (2000, len(diff)))
        boot = diff[draws].mean(axis=1)
        routed_r = np.array([r for r, _, _ in rows])
        macro_diff = np.array([macro(routed_r[d], cat_idx[d]) - macro(fixed_r[best_macro][d], cat_idx[d])
                               for d in draws])
        presets[p] = {"table": table.to_dict(),
                      "routed": summarize([(q.category, r) for (r, _, _), (q, _) in zip(rows, evals)],
                                          [ms for _, ms, _ in rows]),
                      "routed_true_category": true_cat, "backend_counts": chosen,
                      "micro_gain_vs_best_fixed": {"backend": best_micro, "mean": float(diff.mean()),
                                                   "ci95": [float(np.quantile(boot, 0.025)),
                                                            float(np.quantile(boot, 0.975))]},
                      "macro_gain_vs_best_fixed": {"backend": best_macro,
                                                   "ci95": [float(np.quantile(macro_diff, 0.025)),
                                                            float(np.quantile(macro_diff, 0.975))]}}
    mem.close()
    return {
        "data": str(args.data), "limit": args.limit, "min_samples_per_cell": args.min_samples,
        "accuracy_tolerance": args.tolerance, "min_margin": args.min_margin,
        "calibration_conversations": calib_scopes, "evaluation_conversations": eval_scopes,
        "turns": sum(len(v) for v in turns.values()), "stored": sum(stored.values()),
        "repeats": args.repeats, "questions_answerable": len(questions), "questions_adversarial_excluded": adversarial,
        "questions_without_content_tokens": no_content,
        "calibration_questions": len(calib), "evaluation_questions": len(evals),
        "classifier": {"accuracy": clf_acc, "below_min_margin": unsure, "categories": list(clf.categories),
                       "counts": list(clf.counts)},
        "calibration_fixed": calib_fixed, "fixed": fixed, "per_question_oracle": oracle, "presets": presets,
        "seconds": {"embed": embed_s, "ingest": ingest_s, "total": time.perf_counter() - t_start},
    }


def table_text(res: dict) -> str:
    cats = [f"recall[{c}]" for c in CATEGORY_NAMES.values()]
    head = f"| arm | micro | macro | {' | '.join(c[7:-1] for c in cats)} | latency ms |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def line(name: str, s: dict) -> None:
        per = " | ".join(f"{s.get(c, float('nan')):.3f}" for c in cats)
        lines.append(f"| {name} | {s['micro']:.3f} | {s['macro']:.3f} | {per} | {s['latency_ms']:.3f} |")

    for b, s in res["fixed"].items():
        line(f"fixed {b}", s)
    for p, r in res["presets"].items():
        line(f"routed {p}", r["routed"])
        line(f"routed {p}, true category", r["routed_true_category"])
    line("per-question oracle (upper bound)", res["per_question_oracle"])
    return "\n".join(lines)


def narrative(res: dict) -> str:
    """Sentences chosen and filled from the numbers of this run."""
    fixed = res["fixed"]
    out = []
    for measure in ("micro", "macro"):
        best_b = max(fixed, key=lambda b: fixed[b][measure])
        best = fixed[best_b][measure]
        wins = {p: r["routed"][measure] - best for p, r in res["presets"].items()}
        better = [p for p, d in wins.items() if d > 0.0005]
        if better:
            top = max(better, key=lambda p: wins[p])
            sentence = (f"On {measure} answer recall@{res['limit']}, routing beats the best fixed backend "
                        f"({best_b}, {best:.3f}) with {', '.join(better)}; the largest gain is "
                        f"{100 * wins[top]:+.1f} points ({top}).")
            lo, hi = res["presets"][top][f"{measure}_gain_vs_best_fixed"]["ci95"]
            sentence += (f" The paired bootstrap 95% interval of that gain is [{100 * lo:+.1f}, {100 * hi:+.1f}] "
                         "points" + (", which includes zero: on this split the gain is not distinguishable "
                                     "from noise." if lo <= 0.0 <= hi else ", which excludes zero."))
            out.append(sentence)
        else:
            worst = min(wins, key=lambda p: wins[p])
            out.append(f"On {measure} answer recall@{res['limit']}, routing does not beat the best fixed backend "
                       f"({best_b}, {best:.3f}): the presets land between {100 * min(wins.values()):+.1f} and "
                       f"{100 * max(wins.values()):+.1f} points from it (worst: {worst}).")
    cheapest = min(fixed, key=lambda b: fixed[b]["latency_ms"])
    for p, r in res["presets"].items():
        routed, truth = r["routed"], r["routed_true_category"]
        counts = ", ".join(f"{b} {n}" for b, n in r["backend_counts"].items() if n)
        gap = truth["micro"] - routed["micro"]
        clf_note = (f"the classifier's mistakes cost {100 * gap:.1f} micro points against routing by the true "
                    "category" if gap > 0.0005 else
                    "routing by the true category would not have done better" if gap > -0.0005 else
                    f"the classifier's mistakes happened to help by {-100 * gap:.1f} micro points")
        used = [b for b, n in r["backend_counts"].items() if n]
        if len(used) == 1:
            extra = routed["latency_ms"] - fixed[used[0]]["latency_ms"]
            out.append(f"{p} sent every query to {used[0]}, so it retrieves exactly what fixed {used[0]} does; "
                       f"its {extra:+.3f} ms over fixed {used[0]} is the cost of classifying the query.")
            continue
        ratio = routed["latency_ms"] / fixed[cheapest]["latency_ms"]
        gain = 100 * (routed["micro"] - fixed[cheapest]["micro"])
        trade = (f"{ratio:.1f}x the latency of {cheapest} for {gain:+.1f} micro points" if ratio > 1.2 else
                 f"about the latency of {cheapest} ({ratio:.2f}x), {gain:+.1f} micro points from it")
        out.append(f"{p}: sent queries to {counts}; mean latency {routed['latency_ms']:.3f} ms, {trade}; "
                   f"{clf_note}.")
    clf = res["classifier"]
    n_cat = len(clf["categories"])
    out.append(f"The nearest-centroid classifier labels {100 * clf['accuracy']:.1f}% of the evaluation questions "
               f"with their LoCoMo category ({n_cat} categories, so chance is about {100 / n_cat:.0f}%); "
               f"{clf['below_min_margin']} fell below the margin floor {res['min_margin']:g} and took the "
               "default route.")
    orc = res["per_question_oracle"]
    best_fixed_micro = max(f["micro"] for f in fixed.values())
    out.append(f"Picking the best backend for each question after the fact would reach {orc['micro']:.3f} micro, "
               f"{100 * (orc['micro'] - best_fixed_micro):.1f} points over the best fixed backend: that is the "
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


def results_markdown(res: dict, argv: list[str]) -> str:
    return "\n".join([
        MARK_BEGIN,
        "## Results on LoCoMo dev",
        "",
        f"Run: `python benches/calibrate_router.py {' '.join(argv)}`. {res['turns']} turns stored as "
        f"{res['stored']} memories (gate off; {res['turns'] - res['stored']} exact duplicates dropped); {res['questions_answerable']} answerable "
        f"questions, {res['questions_adversarial_excluded']} adversarial (category 5, no answer) excluded, "
        f"{res['questions_without_content_tokens']} left out because their answer has no content token. "
        f"Calibration on {', '.join(res['calibration_conversations'])} ({res['calibration_questions']} questions), "
        f"evaluation on {', '.join(res['evaluation_conversations'])} ({res['evaluation_questions']} questions). "
        f"min_samples_per_cell={res['min_samples_per_cell']}, accuracy_tolerance={res['accuracy_tolerance']}, "
        f"cost = search latency in ms. Whole run {res['seconds']['total']:.0f} s.",
        "",
        "Evaluation half, answer-token recall@10 (micro = per question, macro = mean of categories):",
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
    text = path.read_text(encoding="utf-8") if path.exists() else "# The calibrated router\n"
    if MARK_BEGIN in text and MARK_END in text:
        head, rest = text.split(MARK_BEGIN, 1)
        text = head + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo dev JSON (read in place)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write all numbers here")
    parser.add_argument("--doc", type=Path, help="rewrite the results section of this markdown file")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--min-samples", type=int, default=10)
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--min-margin", type=float, default=0.0)
    parser.add_argument("--repeats", type=int, default=2, help="time each search this often, keep the fastest")
    args = parser.parse_args(argv)
    res = run(args)
    print(table_text(res))
    print()
    print(routes_text(res))
    print()
    print(narrative(res))
    print(f"\ntimes (s): {json.dumps({k: round(v, 1) for k, v in res['seconds'].items()})}")
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=2), encoding="utf-8")
    if args.doc:
        write_doc(args.doc, results_markdown(res, argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
