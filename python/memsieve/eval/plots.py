"""The evaluation's figures (matplotlib, Agg backend, PNG).

- ``frontier.png`` / ``frontier_macro.png``: stored fraction against
  answer-token recall@10 for every swept configuration, one line per family;
- ``novelty_hist.png``: the novelty of every gated candidate, by decision, per
  gated arm and stream, with the arm's median tau;
- ``tau_trace.png``: tau after each add() call in one conversation's scope.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from memsieve.eval.metrics import primary_key  # noqa: E402
from memsieve.eval.narrative import frontier  # noqa: E402

STYLE = {
    "maxcos": dict(color="tab:blue", marker="o"),
    "sage": dict(color="tab:orange", marker="s"),
    "memsieve": dict(color="tab:green", marker="^"),
    "memsieve-fixed": dict(color="tab:olive", marker="v"),
    "random": dict(color="tab:gray", marker="x"),
    "llm": dict(color="tab:purple", marker="*"),
}


def _frontier_plot(path: Path, summary: dict[str, Any], sweep: Sequence[dict[str, Any]], key: str, avg: str) -> None:
    streams = list(summary)
    fig, axes = plt.subplots(1, len(streams), figsize=(6.2 * len(streams), 4.8), squeeze=False)
    for ax, stream in zip(axes[0], streams):
        head_gate = summary[stream].get("memsieve", {}).get("gate", {"profile": "memsieve"})
        for fam, style in STYLE.items():
            if fam == "memsieve":
                # One line for gamma alone; other k / kappa_c settings are dots.
                pts = [(p["stored_fraction"], p[avg][key]) for p in sweep
                       if p["stream"] == stream and p["arm"] == fam and p[avg].get(key) is not None
                       and _without_gamma(p["gate"]) == _without_gamma(head_gate)]
            else:
                pts = frontier(sweep, stream, fam, key, avg)
            if not pts:
                continue
            xs, ys = zip(*sorted(pts))
            ax.plot([100 * x for x in xs], [100 * y for y in ys], label=fam, alpha=0.85, **style)
        others = [p for p in sweep if p["stream"] == stream and p["arm"] == "memsieve"
                  and _without_gamma(p["gate"]) != _without_gamma(head_gate) and p[avg].get(key) is not None]
        if others:
            ax.scatter([100 * p["stored_fraction"] for p in others], [100 * p[avg][key] for p in others],
                       s=16, color="tab:green", alpha=0.4, label="memsieve, other k or kappa_c")
        for arm, e in summary[stream].items():
            y = e[avg].get(key)
            if y is None or e.get("stored_fraction") is None:
                continue
            mk = "*" if arm == "add-all" else "D"
            ax.scatter([100 * e["stored_fraction"]], [100 * y], s=90, marker=mk, edgecolor="black", zorder=5,
                       color=STYLE.get(arm, {}).get("color", "black"))
            ax.annotate(arm, (100 * e["stored_fraction"], 100 * y), textcoords="offset points", xytext=(4, -12),
                        fontsize=8)
        base = summary[stream].get("add-all")
        if base is not None and base[avg].get(key) is not None:
            ax.axhline(100 * base[avg][key] - 1.0, color="black", lw=0.7, ls=":", label="add-all - 1 point")
        ax.axvline(75, color="red", lw=0.7, ls=":", label="75% stored")
        ax.set_title(f"{stream}: {key} ({avg})")
        ax.set_xlabel("stored, % of add-all")
        ax.set_ylabel(f"{key} (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _without_gamma(gate: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in gate.items() if k != "gamma"}


def _novelty_plot(path: Path, results: Sequence[dict[str, Any]]) -> None:
    heads = [r for r in results if r.get("novelty") and r["spec"]["arm"] in ("maxcos", "sage", "memsieve", "llm")]
    streams = sorted({r["stream"] for r in heads})
    arms = [a for a in ("maxcos", "sage", "memsieve", "llm") if any(r["spec"]["arm"] == a for r in heads)]
    if not heads:
        return
    fig, axes = plt.subplots(len(streams), len(arms), figsize=(4.2 * len(arms), 3.4 * len(streams)), squeeze=False)
    for i, stream in enumerate(streams):
        for j, arm in enumerate(arms):
            ax = axes[i][j]
            r = next((r for r in heads if r["stream"] == stream and r["spec"]["arm"] == arm), None)
            if r is None:
                ax.axis("off")
                continue
            finite = [(n, t, e) for n, t, e in r["novelty"] if math.isfinite(n)]
            bins = [x / 50 for x in range(0, 61)]
            for event, color in (("ADD", "tab:green"), ("NOOP", "tab:red"), ("UPDATE", "tab:blue")):
                vals = [min(n, 1.2) for n, _t, e in finite if e == event]
                if vals:
                    ax.hist(vals, bins=bins, alpha=0.6, color=color, label=f"{event} ({len(vals)})")
            taus = sorted(t for _n, t, _e in finite if math.isfinite(t))
            if taus:
                ax.axvline(taus[len(taus) // 2], color="black", ls="--", lw=1, label=f"median tau {taus[len(taus) // 2]:.3f}")
            ax.set_title(f"{stream} / {arm}", fontsize=9)
            ax.set_xlabel("novelty (cosine-distance units, clipped at 1.2)", fontsize=8)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _trace_plot(path: Path, results: Sequence[dict[str, Any]], scope: str) -> None:
    heads = [r for r in results if r.get("trace") and r["spec"]["arm"] in ("maxcos", "sage", "memsieve", "llm")]
    streams = sorted({r["stream"] for r in heads})
    if not heads:
        return
    fig, axes = plt.subplots(1, len(streams), figsize=(6.2 * len(streams), 4), squeeze=False)
    for ax, stream in zip(axes[0], streams):
        for r in heads:
            if r["stream"] != stream:
                continue
            arm = r["spec"]["arm"]
            taus = [row[1] for row in r["trace"]]
            ax.plot(range(1, len(taus) + 1), taus, label=arm, color=STYLE.get(arm, {}).get("color"), lw=1.2)
        ax.set_title(f"tau after each add() call, scope {scope} ({stream})")
        ax.set_xlabel("add() call")
        ax.set_ylabel("tau (cosine-distance units)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_plots(out: Path, *, summary: dict[str, Any], sweep: Sequence[dict[str, Any]],
                results: Sequence[dict[str, Any]], meta: dict[str, Any]) -> list[Path]:
    """Write every PNG into ``out``; returns their paths."""
    key = f"answer_recall@{primary_key(meta['ks'])}"
    paths = [out / "frontier.png", out / "frontier_macro.png", out / "novelty_hist.png", out / "tau_trace.png"]
    _frontier_plot(paths[0], summary, sweep, key, "micro")
    _frontier_plot(paths[1], summary, sweep, key, "macro")
    _novelty_plot(paths[2], results)
    _trace_plot(paths[3], results, meta.get("trace_scope", "?"))
    return [p for p in paths if p.exists()]
