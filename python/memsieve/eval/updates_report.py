"""Aggregation and the markdown report of ``memsieve eval updates``.

The per-item rows come from :class:`memsieve.eval.updates.ItemRunner`; every
number in the prose is computed here from them, so the text cannot drift from
the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memsieve.eval.updates_data import KINDS, VERSION_KINDS

#: The criteria an item can be scored on; None in a row means "does not apply".
CRITERIA = ("found", "newer_first", "noop", "forgotten", "answer_noop")
#: Issue 9's goals: (kind, criterion, minimum share).
GOALS = (("detail", "ok", 0.97), ("correction", "ok", 0.97), ("event", "ok", 0.97),
         ("paraphrase", "noop", 0.90), ("forget", "forgotten", 1.0))


def _rate(rows: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """{"n": rows where ``key`` applies, "hits": rows where it holds, "rate": hits / n or None}."""
    vals = [r[key] for r in rows if r.get(key) is not None]
    hits = sum(1 for v in vals if v)
    return {"n": len(vals), "hits": hits, "rate": hits / len(vals) if vals else None}


def _group(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"items": len(rows), "accuracy": _rate(rows, "ok")["rate"]}
    for key in ("ok",) + CRITERIA:
        out[key] = _rate(rows, key)
    for key in ("candidates", "stored", "noops", "errors"):
        out[key] = sum(int(r.get(key) or 0) for r in rows)
    out["unsupported"] = sum(1 for r in rows for t in r.get("turns", [])
                             if (t.get("forget") or {}).get("supported") is False)
    return out


def summarize(rows: Sequence[dict[str, Any]], *, seconds: float) -> dict[str, Any]:
    """Per kind, micro (per item) and macro (mean of the kinds' accuracies).

    Args:
        rows: the per-item rows of one arm.
        seconds: the arm's wall time.

    Returns:
        {"per_kind": {kind: group}, "micro": group, "macro": accuracy or None,
         "goals": [{"kind", "criterion", "target", "value", "met"}], "seconds": float}
    """
    per_kind = {k: _group([r for r in rows if r["kind"] == k]) for k in KINDS if any(r["kind"] == k for r in rows)}
    accs = [g["accuracy"] for g in per_kind.values() if g["accuracy"] is not None]
    goals = []
    for kind, crit, target in GOALS:
        value = per_kind[kind][crit]["rate"] if kind in per_kind else None
        goals.append({"kind": kind, "criterion": crit, "target": target, "value": value,
                      "met": value is not None and value >= target})
    return {"per_kind": per_kind, "micro": _group(rows), "macro": sum(accs) / len(accs) if accs else None,
            "goals": goals, "seconds": round(seconds, 2)}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _frac(rate: dict[str, Any]) -> str:
    return "–" if not rate["n"] else f"{rate['hits']}/{rate['n']}"


def _arm_table(arm: dict[str, Any]) -> list[str]:
    head = ("kind", "items", "accuracy", "found", "newer first", "NOOP", "forgotten", "answer NOOPed",
            "turns", "stored", "NOOPs")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    groups = list(arm["per_kind"].items()) + [("**micro**", arm["micro"])]
    for kind, g in groups:
        cells = [kind, str(g["items"]), _pct(g["accuracy"])] + [_frac(g[c]) for c in CRITERIA]
        cells += [str(g["candidates"]), str(g["stored"]), str(g["noops"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(f"| **macro** | | {_pct(arm['macro'])} | | | | | | | | |")
    return lines


def _comparison(arms: dict[str, Any]) -> list[str]:
    names = list(arms)
    lines = ["| kind | " + " | ".join(f"{n}: accuracy | {n}: stored/turns" for n in names) + " |",
             "|---|" + "---|---|" * len(names)]
    kinds = [k for k in KINDS if any(k in a["per_kind"] for a in arms.values())]
    for kind in kinds + ["micro"]:
        cells = [kind]
        for n in names:
            g = arms[n]["micro"] if kind == "micro" else arms[n]["per_kind"].get(kind)
            cells += ["n/a", "n/a"] if g is None else [_pct(g["accuracy"]), f"{g['stored']}/{g['candidates']}"]
        lines.append("| " + " | ".join(cells) + " |")
    macro = ["macro"] + [c for n in names for c in (_pct(arms[n]["macro"]), "")]
    lines.append("| " + " | ".join(macro) + " |")
    return lines


def prose(name: str, arm: dict[str, Any]) -> str:
    """A paragraph on one arm, every number from ``arm``."""
    m = arm["micro"]
    kinds = arm["per_kind"]
    parts = [f"**{name}**: {m['ok']['hits']} of {m['items']} items pass (micro {_pct(m['accuracy'])}, "
             f"macro {_pct(arm['macro'])}); {m['stored']} of {m['candidates']} turns stored, {m['noops']} NOOPs"
             + (f"; {m['errors']} turns failed in the LLM step." if m["errors"] else ".")]
    versions = [g for k, g in kinds.items() if k in VERSION_KINDS]
    if versions:
        dropped = sum(g["answer_noop"]["hits"] for g in versions)
        n_ver = sum(g["answer_noop"]["n"] for g in versions)
        stale_first = sum(g["newer_first"]["n"] - g["newer_first"]["hits"] for g in versions)
        n_newer = sum(g["newer_first"]["n"] for g in versions)
        parts.append(f"In {dropped} of {n_ver} version items (details, corrections, preferences, negations, "
                     f"events) the turn carrying the answer was a NOOP, so the new information exists only "
                     f"as a rejection; the newer version failed to rank first in {stale_first} of {n_newer}.")
    worst = min(((k, g) for k, g in kinds.items() if g["accuracy"] is not None), key=lambda kg: kg[1]["accuracy"],
                default=None)
    if worst is not None:
        parts.append(f"The weakest kind is {worst[0]} ({_pct(worst[1]['accuracy'])}).")
    if "paraphrase" in kinds:
        p = kinds["paraphrase"]["noop"]
        parts.append(f"{p['hits']} of {p['n']} paraphrases were NOOPs.")
    if "forget" in kinds:
        f = kinds["forget"]
        parts.append(f"{f['forgotten']['hits']} of {f['forgotten']['n']} forget requests left nothing findable"
                     + (f" ({f['unsupported']} not supported: this version has no Memory.forget)."
                        if f["unsupported"] else "."))
    return " ".join(parts)


def markdown(result: dict[str, Any]) -> str:
    """The whole report: prose per arm, the goals, one table per arm, and a comparison when several ran."""
    meta, arms = result["meta"], result["arms"]
    lines = [f"# Updates set: {meta['split']} split, {meta['items']} item{'' if meta['items'] == 1 else 's'}", "",
             f"Default `Memory.search` at limit {meta['limit']}, embedder {meta['embedder']}, "
             f"LLM {meta['llm'] or 'none'}; code {meta['code'] or 'unknown'}; {meta['wall_s']} s.", ""]
    for name, arm in arms.items():
        lines += [prose(name, arm), ""]
    for name, arm in arms.items():
        met = [f"{g['kind']} {g['criterion']} {_pct(g['value'])} (goal {_pct(g['target'])}: "
               f"{'met' if g['met'] else 'not run' if g['value'] is None else 'missed'})" for g in arm["goals"]]
        lines += [f"Goals, {name}: " + "; ".join(met) + ".", ""]
    if len(arms) > 1:
        lines += ["## Arms side by side", ""] + _comparison(arms) + [""]
    for name, arm in arms.items():
        llm = arm.get("llm")
        calls = (f", {llm.get('calls', 0)} LLM calls, {llm.get('prompt_tokens', 0) + llm.get('completion_tokens', 0)}"
                 " tokens") if llm else ""
        lines += [f"## {name} ({arm['seconds']} s{calls})", ""] + _arm_table(arm) + [""]
    lines += ["Columns: accuracy = items passing every criterion of their kind; found = every expected token in "
              "the top results; newer first = the newer version ranks above the stale one; NOOP = a paraphrase "
              "was not stored; forgotten = no stale token findable after a forget request; answer NOOPed = the "
              "turn carrying the answer was dropped by the gate (a diagnosis, not a criterion).", ""]
    return "\n".join(lines)
