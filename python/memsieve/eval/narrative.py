"""Reading the numbers: goal checks, frontier comparisons, the recommended
default, and the prose of the summary.

The prose is computed. Each sentence is picked by comparing numbers (which arm
gains most, in which cell, whether a goal holds, which frontier lies higher),
so when the numbers move, the conclusions move with them: the largest gain and
the largest loss are found by search over every (stream, arm, average or
category) cell, never named in advance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memsieve.eval.locomo import CATEGORY_LABELS
from memsieve.eval.metrics import primary_key

GATED = ("maxcos", "sage", "memsieve", "llm")
MAX_STORED = 0.75
MAX_LOSS = 0.01          # "within 1 point"
RANDOM_SHARE = 1.0 / 3.0
FRONTIER_TOL = 0.001     # "on or above": 0.1 point of slack for rounding


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def _pc(x: float) -> str:
    return f"{100 * x:.1f}%"


def interpolate(points: Sequence[tuple[float, float]], x: float) -> float | None:
    """Linear interpolation of a frontier (stored fraction, recall) at ``x``; None outside its range."""
    pts = sorted(points)
    if not pts or x < pts[0][0] - 1e-9 or x > pts[-1][0] + 1e-9:
        return None
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return pts[0][1]


def frontier(sweep: Sequence[dict[str, Any]], stream: str, arm: str, metric: str, avg: str = "micro"
             ) -> list[tuple[float, float]]:
    """(stored fraction, metric) of every swept configuration of one family on one stream."""
    return [(p["stored_fraction"], p[avg][metric]) for p in sweep
            if p["stream"] == stream and p["arm"] == arm and p["stored_fraction"] is not None
            and p[avg].get(metric) is not None]


def goal_checks(summary: dict[str, Any], sweep: Sequence[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """The issue's goals for the memsieve arm, per stream, each with its measurement."""
    key = f"answer_recall@{k}"
    out = []
    for stream, arms in summary.items():
        ms, base, rnd = arms.get("memsieve"), arms.get("add-all"), arms.get("random")
        if ms is None or base is None:
            continue
        frac = ms["stored_fraction"]
        out.append({"stream": stream, "goal": f"stores <= {MAX_STORED:.0%} of add-all", "ok": frac <= MAX_STORED,
                    "detail": f"{_pc(frac)}"})
        for avg in ("micro", "macro"):
            d = ms[avg][key] - base[avg][key]
            out.append({"stream": stream, "goal": f"{key} {avg} within 1 point of add-all", "ok": d >= -MAX_LOSS,
                        "detail": f"{100 * d:+.2f} points"})
        if rnd is not None:
            loss_m = base["micro"][key] - ms["micro"][key]
            loss_r = base["micro"][key] - rnd["micro"][key]
            ok = loss_m <= 0 or (loss_r > 0 and loss_m <= RANDOM_SHARE * loss_r)
            out.append({"stream": stream, "goal": "loses <= 1/3 of random's loss at the same size", "ok": ok,
                        "detail": f"memsieve {_pts(-loss_m)}, random {_pts(-loss_r)} at {_pc(rnd['stored_fraction'])}"})
        for other in ("maxcos", "sage"):
            y = interpolate(frontier(sweep, stream, other, key), frac)
            if y is None:
                out.append({"stream": stream, "goal": f"on or above the {other} frontier", "ok": None,
                            "detail": f"{other}'s sweep does not reach {_pc(frac)} stored"})
            else:
                gap = ms["micro"][key] - y
                out.append({"stream": stream, "goal": f"on or above the {other} frontier", "ok": gap >= -FRONTIER_TOL,
                            "detail": f"{_pts(gap)} points vs {other} at {_pc(frac)} stored"})
    return out


def _loss_profile(sweep: Sequence[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """For each configuration present on every stream: worst loss and stored fractions."""
    streams = sorted({p["stream"] for p in sweep})
    base = {p["stream"]: p for p in sweep if p["arm"] == "add-all"}
    configs: dict[str, dict[str, Any]] = {}
    for p in sweep:
        if p["arm"] == "add-all" or p["stream"] not in base:
            continue
        c = configs.setdefault(p["label"], {"label": p["label"], "arm": p["arm"], "gate": p["gate"],
                                            "params": p["params"], "streams": {}})
        b = base[p["stream"]]
        c["streams"][p["stream"]] = {"stored_fraction": p["stored_fraction"],
                                     "micro_delta": p["micro"][key] - b["micro"][key],
                                     "macro_delta": p["macro"][key] - b["macro"][key]}
    out = {}
    for label, c in configs.items():
        if sorted(c["streams"]) != streams:
            continue
        st = c["streams"].values()
        c["worst_loss"] = max(max(-s["micro_delta"], -s["macro_delta"]) for s in st)
        c["max_stored"] = max(s["stored_fraction"] for s in st)
        c["mean_stored"] = sum(s["stored_fraction"] for s in st) / len(c["streams"])
        c["feasible"] = c["max_stored"] <= MAX_STORED and c["worst_loss"] <= MAX_LOSS
        out[label] = c
    return out


def recommend(sweep: Sequence[dict[str, Any]], k: int) -> dict[str, Any]:
    """Pick one configuration per family, the same for both streams, and the winner.

    Rule (recall first): among configurations that lose at most one point of
    answer recall (micro and macro) on every stream, take the one storing the
    least on its worst stream (ties within 0.1 point of store broken by the
    smaller loss). When none stays within one point, take the smallest
    worst-case loss. ``meets_store_cap`` says whether the pick also stores
    <= 75% everywhere.
    """
    profile = _loss_profile(sweep, f"answer_recall@{k}")
    picks: dict[str, Any] = {}
    for fam in ("memsieve", "memsieve-fixed", "maxcos", "sage"):
        cands = [c for c in profile.values() if c["arm"] == fam]
        if not cands:
            continue
        within = [c for c in cands if c["worst_loss"] <= MAX_LOSS]
        if within:
            best = min(within, key=lambda c: (round(c["max_stored"] / FRONTIER_TOL), c["worst_loss"]))
        else:
            best = min(cands, key=lambda c: (c["worst_loss"], c["max_stored"]))
        picks[fam] = {**best, "within_loss": bool(within), "meets_store_cap": best["max_stored"] <= MAX_STORED}
    ranked = sorted(picks.values(), key=lambda c: (not c["within_loss"],
                                                   c["max_stored"] if c["within_loss"] else c["worst_loss"]))
    return {"picks": picks, "winner": ranked[0]["arm"] if ranked else None,
            "winner_label": ranked[0]["label"] if ranked else None,
            "rule": "lose at most 1 point (micro and macro) on every stream, then store the least on the worst stream"}


def _cells(summary: dict[str, Any], key: str) -> list[dict[str, Any]]:
    cells = []
    for stream, arms in summary.items():
        base = arms.get("add-all")
        if base is None:
            continue
        for arm, e in arms.items():
            if arm == "add-all":
                continue
            for avg in ("micro", "macro"):
                if e[avg].get(key) is not None and base[avg].get(key) is not None:
                    cells.append({"stream": stream, "arm": arm, "where": avg, "n": None,
                                  "value": e[avg][key], "base": base[avg][key], "delta": e[avg][key] - base[avg][key]})
            for c, pc in e["per_category"].items():
                bc = base["per_category"].get(c, {})
                if pc.get(key) is not None and bc.get(key) is not None:
                    cells.append({"stream": stream, "arm": arm, "n": pc["n"],
                                  "where": f"category {c} ({CATEGORY_LABELS.get(int(c), '?')})",
                                  "value": pc[key], "base": bc[key], "delta": pc[key] - bc[key]})
    return cells


def _describe(cell: dict[str, Any]) -> str:
    size = ""
    if cell["n"]:
        swing = abs(cell["delta"]) * cell["n"]
        size = f", n={cell['n']}, about {swing:.0f} question{'s' if round(swing) != 1 else ''}' worth of answer tokens"
    return (f"{cell['arm']} on {cell['stream']}, {cell['where']}: {_pts(cell['delta'])} points "
            f"({100 * cell['value']:.1f} against add-all's {100 * cell['base']:.1f}{size})")


def narrative(summary: dict[str, Any], sweep: Sequence[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    """Sentences computed from the numbers; see the module docstring."""
    k = primary_key(meta["ks"])
    key = f"answer_recall@{k}"
    out: list[str] = []
    cells = _cells(summary, key)
    if cells:
        gain = max(cells, key=lambda c: c["delta"])
        loss = min(cells, key=lambda c: c["delta"])
        if gain["delta"] > 0.0005:
            out.append(f"The largest gain over add-all in {key} is {_describe(gain)}.")
        else:
            out.append(f"No arm beats add-all in any cell of {key}; the closest is {_describe(gain)}.")
        if loss["delta"] < -0.0005:
            out.append(f"The largest loss is {_describe(loss)}.")
            gated = [c for c in cells if c["arm"] in GATED]
            if loss["arm"] not in GATED and gated:
                worst = min(gated, key=lambda c: c["delta"])
                if worst["delta"] < -0.0005:
                    out.append(f"Among the gates alone, the largest loss is {_describe(worst)}.")
                else:
                    out.append(f"None of the gates loses to add-all in any cell; only the {loss['arm']} "
                               "control does.")
        else:
            out.append(f"No arm loses to add-all in any cell of {key}.")
    out += _goal_sentences(goal_checks(summary, sweep, k))
    out += _micro_macro_sentences(summary, key)
    out += _provenance_sentences(summary, k)
    out += _recommend_sentences(recommend(sweep, k))
    out += _sage_sentences(summary, key)
    cc = meta.get("category_check")
    if cc is not None:
        bad = [c["label"] for c in cc["checks"] if not c["ok"]]
        out.append("The category labels agree with the question texts (e.g. "
                   f"{_pc(cc['by_category']['2']['when_share'])} of category 2 begins with 'When')."
                   if not bad and "2" in cc["by_category"] else
                   f"The category labels disagree with the question texts for: {', '.join(bad) or 'unknown'}.")
    return out


def _goal_sentences(goals: list[dict[str, Any]]) -> list[str]:
    out = []
    for stream in dict.fromkeys(g["stream"] for g in goals):
        mine = [g for g in goals if g["stream"] == stream]
        failed = [g for g in mine if g["ok"] is False]
        unknown = [g for g in mine if g["ok"] is None]
        if not failed and not unknown:
            out.append(f"On {stream}, the memsieve arm meets all {len(mine)} goals.")
        elif not failed:
            out.append(f"On {stream}, the memsieve arm meets every goal that could be checked; "
                       f"{'; '.join(g['detail'] for g in unknown)}.")
        else:
            out.append(f"On {stream}, the memsieve arm misses {len(failed)} of {len(mine)} goals: "
                       + "; ".join(f"{g['goal']} ({g['detail']})" for g in failed) + ".")
    return out


def _micro_macro_sentences(summary: dict[str, Any], key: str) -> list[str]:
    out = []
    for stream, arms in summary.items():
        ms, base = arms.get("memsieve"), arms.get("add-all")
        if ms is None or base is None:
            continue
        dm = ms["micro"][key] - base["micro"][key]
        dM = ms["macro"][key] - base["macro"][key]
        if dm * dM < 0 and max(abs(dm), abs(dM)) >= 0.0005:
            out.append(f"On {stream}, micro and macro disagree in sign for memsieve ({_pts(dm)} vs {_pts(dM)}): "
                       "small categories weigh as much as large ones in the macro mean.")
    return out


def _pick_text(c: dict[str, Any]) -> str:
    per = ", ".join(f"{st} {_pc(v['stored_fraction'])} stored at {_pts(v['micro_delta'])}/{_pts(v['macro_delta'])}"
                    for st, v in sorted(c["streams"].items()))
    return f"{c['label']} ({per} points micro/macro)"


def _recommend_sentences(rec: dict[str, Any]) -> list[str]:
    picks = rec["picks"]
    out = []
    kde = [picks[f] for f in ("memsieve", "memsieve-fixed") if f in picks]
    mc = picks.get("maxcos")
    if kde and mc:
        best = min(kde, key=lambda c: (not c["within_loss"], c["max_stored"] if c["within_loss"] else c["worst_loss"]))
        if best["within_loss"] and mc["within_loss"]:
            gap = mc["max_stored"] - best["max_stored"]
            if gap > FRONTIER_TOL:
                out.append(f"Within one point of add-all on both streams, the kernel-density gate stores less than "
                           f"plain max-cosine: {_pick_text(best)} against {_pick_text(mc)}.")
            elif gap < -FRONTIER_TOL:
                out.append(f"Plain max-cosine beats the kernel-density gate: within one point of add-all it stores "
                           f"less, {_pick_text(mc)} against {_pick_text(best)}; the default should be max-cosine.")
            else:
                out.append(f"The kernel-density gate and plain max-cosine tie: {_pick_text(best)} and {_pick_text(mc)}.")
        elif best["within_loss"]:
            out.append(f"Only the kernel-density gate stays within one point on both streams with one setting: "
                       f"{_pick_text(best)}.")
        elif mc["within_loss"]:
            out.append(f"Plain max-cosine beats the kernel-density gate: only it stays within one point on both "
                       f"streams with one setting, {_pick_text(mc)}; the default should be max-cosine.")
        else:
            out.append(f"No single setting of either gate stays within one point on both streams; the smallest "
                       f"worst-case losses are {_pick_text(best)} and {_pick_text(mc)}.")
    if rec["winner_label"]:
        win = picks[rec["winner"]]
        cap = ("and it also stores at most 75% on both streams" if win["meets_store_cap"] else
               f"but it stores {_pc(win['max_stored'])} on its fullest stream, over the 75% goal: no swept setting "
               "of any gate meets both the recall and the store goals on both streams")
        if not win["meets_store_cap"] and any(c["within_loss"] and c["meets_store_cap"] for c in picks.values()):
            cap = f"but it stores {_pc(win['max_stored'])} on its fullest stream, over the 75% goal"
        out.append(f"By the rule stated first ({rec['rule']}), the recommended default is {rec['winner_label']}, {cap}.")
    return out


def _provenance_sentences(summary: dict[str, Any], k: int) -> list[str]:
    out = []
    for stream, arms in summary.items():
        ms, base = arms.get("memsieve"), arms.get("add-all")
        if ms is None or base is None or ms["noops"] == 0:
            continue
        b = base["micro"][f"evidence_recall@{k}"]
        strict = ms["micro"][f"evidence_recall@{k}"] - b
        prov = ms["micro"][f"provenance_recall@{k}"] - b
        if strict >= -0.0005:
            continue
        if prov >= -0.0005:
            out.append(f"On {stream}, memsieve's strict evidence recall@{k} is {100 * -strict:.1f} points below "
                       f"add-all's, but counting the sources its NOOPs attached to the memories that absorbed them "
                       f"it is {_pts(prov)} against add-all: what the gate dropped is still traceable to its source.")
        else:
            out.append(f"On {stream}, memsieve's strict evidence recall@{k} is {100 * -strict:.1f} points below "
                       f"add-all's and provenance recovers only part of it ({_pts(prov)}).")
    return out


def _sage_sentences(summary: dict[str, Any], key: str) -> list[str]:
    out = []
    for stream, arms in summary.items():
        sage, ms, base = arms.get("sage"), arms.get("memsieve"), arms.get("add-all")
        if sage is None or base is None:
            continue
        d = sage["micro"][key] - base["micro"][key]
        frac = sage["stored_fraction"]
        if frac >= 0.95:
            out.append(f"On {stream}, SAGE as run hardly gates: it keeps {_pc(frac)} of what add-all stores "
                       f"({_pts(d)} points).")
        elif ms is not None and frac < ms["stored_fraction"] and d < ms["micro"][key] - base["micro"][key]:
            out.append(f"On {stream}, SAGE as run stores less than memsieve ({_pc(frac)} against "
                       f"{_pc(ms['stored_fraction'])}) and pays for it ({_pts(d)} points).")
        else:
            out.append(f"On {stream}, SAGE as run keeps {_pc(frac)} at {_pts(d)} points.")
    return out
