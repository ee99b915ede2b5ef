"""The arms of the evaluation, and what one arm does to one write stream.

An arm is a gate configuration (or a random drop) run in its own fresh
``Memory(path=":memory:")`` with one scope per conversation. Running an arm on a
stream means: feed every session's add() calls in order, keep the per-memory
provenance from the returned decisions, then ask every question in its own
conversation's scope and score the hits.
"""

from __future__ import annotations

import inspect
import math
import random
import time
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memsieve.errors import ConfigError
from memsieve.eval.locomo import Candidate, Conversation
from memsieve.eval.metrics import answer_recall, evidence_recall
from memsieve.read.render import DATE_FORMATS, render_line

MAIN_ARMS = ("add-all", "random", "maxcos", "sage", "memsieve")
RANDOM_SEEDS = (0, 1, 2)


def default_search_mode() -> str:
    """``Memory.search``'s default ``mode``, read from its signature (never assumed here)."""
    from memsieve import Memory

    return str(inspect.signature(Memory.search).parameters["mode"].default)


def search_modes() -> tuple[str, ...]:
    """The modes ``Memory.search`` accepts (its ``mode`` Literal), less ``auto``, which needs a router."""
    from memsieve import Memory

    hint = typing.get_type_hints(Memory.search).get("mode")
    return tuple(m for m in typing.get_args(hint) if isinstance(m, str) and m != "auto")


def check_search_mode(mode: str | None) -> str:
    """The mode to search with: ``mode``, or ``Memory.search``'s default when None.

    Raises:
        ConfigError: ``Memory.search`` does not accept ``mode`` (or it is ``auto``).
    """
    chosen = default_search_mode() if mode is None else mode
    modes = search_modes()
    if modes and chosen not in modes:
        raise ConfigError(f"unknown search mode {chosen!r}; use one of {', '.join(modes)} "
                          f"('auto' needs a router, which the evaluation does not build)")
    return chosen


@dataclass(frozen=True, kw_only=True)
class ArmSpec:
    """One configuration to run.

    Attributes:
        arm: the family (``add-all``, ``random``, ``maxcos``, ``sage``, ``memsieve``, ``llm``).
        label: a readable name of this configuration (``"maxcos cos>=0.75"``).
        gate: keyword arguments of ``GateConfig``.
        drop_rate: for ``random``: the share of candidates dropped before add().
        seed: for ``random``: the RNG seed.
        llm: whether the band goes through the configured LLM.
        params: the swept parameter values, for the frontier and the docs.
    """

    arm: str
    label: str
    gate: dict[str, Any]
    drop_rate: float | None = None
    seed: int = 0
    llm: bool = False
    params: dict[str, Any] = field(default_factory=dict)


def maxcos_spec(threshold: float) -> ArmSpec:
    """A fixed max-cosine gate: NOOP when the nearest memory's cosine >= threshold."""
    return ArmSpec(arm="maxcos", label=f"maxcos cos>={threshold:g}",
                   gate={"profile": "maxcos", "tau": round(1.0 - threshold, 6), "delta": 0.0},
                   params={"threshold": threshold})


def _label(name: str, overrides: dict[str, Any]) -> str:
    # Numbers in their shortest form; a text option (vectors="int8") as it is.
    return name + "".join(f" {k}={v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f" {k}={v}"
                          for k, v in overrides.items())


def sage_spec(**overrides: float) -> ArmSpec:
    """SAGE with its defaults as run, optionally with swept parameters."""
    gate: dict[str, Any] = {"profile": "sage"}
    gate.update(overrides)
    label = _label("sage", overrides)
    return ArmSpec(arm="sage", label=label, gate=gate, params=dict(overrides))


def memsieve_spec(**overrides: Any) -> ArmSpec:
    """memsieve's gate (GateConfig() defaults unless overridden)."""
    gate: dict[str, Any] = {"profile": "memsieve"}
    gate.update(overrides)
    label = _label("memsieve", overrides)
    return ArmSpec(arm="memsieve", label=label, gate=gate, params=dict(overrides))


def random_spec(rate: float, seed: int) -> ArmSpec:
    """Drop ``rate`` of the candidates at random (seeded), store the rest ungated."""
    return ArmSpec(arm="random", label=f"random drop={rate:.3f} seed={seed}", gate={"profile": "none"},
                   drop_rate=rate, seed=seed, params={"drop_rate": rate})


def main_specs(*, memsieve_gate: dict[str, Any] | None = None) -> dict[str, ArmSpec]:
    """The headline arms (random is filled in once memsieve's rate is known)."""
    return {
        "add-all": ArmSpec(arm="add-all", label="add-all", gate={"profile": "none"}),
        "maxcos": maxcos_spec(0.75),
        "sage": sage_spec(),
        "memsieve": memsieve_spec(**(memsieve_gate or {})),
    }


@dataclass
class StreamRun:
    """What one arm did on one stream.

    Attributes:
        own: memory id -> dia_ids of the candidates its text was written from.
        provenance: memory id -> own dia_ids plus those of NOOPs folded into it.
        novelty: (novelty, tau, event) of every gated candidate, in order.
        candidates: candidates offered (before any random drop).
        offered: candidates actually passed to add().
        ingest_s: wall time inside add().
        trace: gate trace of the traced scope.
        stats: per-scope ``mem.stats`` summed.
        alignment_faults: calls whose decisions did not line up with their chunks.
        provenance_checked: retrieved hits whose reported ``sources`` were checked.
        provenance_missing: hits whose reported ``sources`` lacked an id the
            harness saw credited to that memory (should be 0).
    """

    own: dict[str, set[str]] = field(default_factory=dict)
    provenance: dict[str, set[str]] = field(default_factory=dict)
    novelty: list[tuple[float, float, str]] = field(default_factory=list)
    candidates: int = 0
    offered: int = 0
    ingest_s: float = 0.0
    trace: list[tuple[float, ...]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    alignment_faults: int = 0
    provenance_checked: int = 0
    provenance_missing: int = 0


def _align(decisions: Sequence[Any], chunk: Sequence[Candidate]) -> tuple[list[tuple[Any, Candidate]], bool]:
    """Pair decisions with the candidates they decided, by position, checked by text."""
    if len(decisions) == len(chunk) and all(d.text.strip() == c.text.strip() for d, c in zip(decisions, chunk)):
        return list(zip(decisions, chunk)), True
    by_text: dict[str, Candidate] = {c.text.strip(): c for c in chunk}
    pairs = [(d, by_text[d.text.strip()]) for d in decisions if d.text.strip() in by_text]
    return pairs, False


def ingest(mem: Any, conversations: Sequence[Conversation], stream: str, spec: ArmSpec, *,
           trace_scope: str | None = None, tick: Callable[[int], None] | None = None) -> StreamRun:
    """Feed a stream into ``mem``, one scope per conversation, sessions in order.

    ``turns`` makes one add() per turn; ``observations`` one add() per session and
    speaker with the list of facts, so facts are also gated against each other.
    A random arm drops exactly ``round(drop_rate * n)`` of the stream's n
    candidates before add(), chosen with ``random.Random(seed)``.
    """
    run = StreamRun()
    dropped: set[int] | None = None
    if spec.drop_rate is not None:
        # Drop exactly round(rate * n) candidates of the stream, chosen by the seed.
        total = sum(len(chunk) for conv in conversations for _s, calls in conv.stream(stream) for chunk in calls)
        dropped = set(random.Random(spec.seed).sample(range(total), round(spec.drop_rate * total)))
    position = 0
    for conv in conversations:
        for _session, calls in conv.stream(stream):
            for chunk in calls:
                run.candidates += len(chunk)
                if tick is not None:
                    tick(len(chunk))
                if dropped is not None:
                    kept = [c for i, c in enumerate(chunk, start=position) if i not in dropped]
                    position += len(chunk)
                    chunk = kept
                if not chunk:
                    continue
                run.offered += len(chunk)
                sources = sorted({s for c in chunk for s in c.sources})
                payload: Any = chunk[0].text if len(chunk) == 1 and stream == "turns" else [c.text for c in chunk]
                t0 = time.perf_counter()
                decisions = mem.add(payload, user_id=conv.sample_id, infer=False,
                                    source=sources or None, valid_from=chunk[0].valid_from)
                run.ingest_s += time.perf_counter() - t0
                pairs, aligned = _align(decisions, chunk)
                run.alignment_faults += not aligned
                for d, cand in pairs:
                    _credit(run, d, cand)
        if trace_scope is not None and conv.sample_id == trace_scope:
            run.trace = [tuple(float(x) for x in row) for row in mem.gate_trace(user_id=conv.sample_id)]
        scope_stats = mem.stats(user_id=conv.sample_id)
        run.stats = _sum_stats(run.stats, {k: v for k, v in scope_stats.items() if k in _PER_SCOPE})
    # LLM usage is counted per Memory, not per scope: read it once.
    run.stats["llm"] = dict(scope_stats.get("llm") or {}) if conversations else {}
    return run


_PER_SCOPE = ("events", "layers", "active_memories", "rejections")


def _credit(run: StreamRun, d: Any, cand: Candidate) -> None:
    src = set(cand.sources)
    if d.layer != "exact" and d.novelty is not None and not math.isnan(d.novelty):
        run.novelty.append((float(d.novelty), float(d.tau), d.event))
    if d.memory_id is None:
        return
    if d.event in ("ADD", "UPDATE"):
        run.own.setdefault(d.memory_id, set()).update(src)
        run.provenance.setdefault(d.memory_id, set()).update(src)
    elif d.event == "NOOP":
        run.provenance.setdefault(d.memory_id, set()).update(src)


def _sum_stats(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """Add one scope's stats into the running total (numbers add, dicts recurse)."""
    out = dict(total)
    for key, value in part.items():
        if isinstance(value, dict):
            out[key] = _sum_stats(out.get(key, {}), value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if key in ("tau", "kappa"):
                continue  # per-scope state, not additive
            out[key] = out.get(key, 0) + value
    return out


def score_questions(mem: Any, conversations: Sequence[Conversation], run: StreamRun, ks: Sequence[int], *,
                    mode: str | None = None, keep_texts: bool = True,
                    tick: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Search every question in its own scope and compute its metrics.

    Each hit is scored as the reader is shown it: rendered by
    :func:`memsieve.read.render.render_line`, ``[date] text`` from its
    ``valid_from`` in the default date format. ``answer_recall@k`` is computed
    over those dated lines (the primary measure); ``answer_recall_undated@k``
    over the bare texts, beside it; ``answer_recall_<format>@k`` over the lines
    dated in each format of :data:`memsieve.read.render.DATE_FORMATS`.
    Each cut-off k is scored on ``search(limit=k)`` itself; the row's ids,
    sources, texts and latency are those of the largest k.

    Strict evidence credits a retrieved memory with the dia_ids its own text was
    written from; provenance evidence also credits the dia_ids of NOOPs folded
    into it. Both come from the decisions the harness saw, per fact, because one
    add() of several facts carries one ``source`` list for the whole call; the
    store's ``SearchResult.sources`` is checked to contain them (counted in
    ``run.provenance_missing``).
    """
    limit = max(ks)
    how = {} if mode is None else {"mode": mode}
    rows = []
    for conv in conversations:
        for q in conv.questions:
            t0 = time.perf_counter()
            hits = mem.search(q.question, user_id=conv.sample_id, limit=limit, **how)
            latency_ms = (time.perf_counter() - t0) * 1000.0
            own, prov = _credits(run, hits)
            for i, h in enumerate(hits):
                # The store's own record must hold every id the harness saw go in.
                run.provenance_checked += 1
                run.provenance_missing += not prov[i] <= set(getattr(h, "sources", None) or [])
            row: dict[str, Any] = {"qid": q.qid, "sample_id": q.sample_id, "category": q.category,
                                   "question": q.question, "answer": q.answer,
                                   "adversarial_answer": q.adversarial_answer, "evidence": list(q.evidence),
                                   "latency_ms": round(latency_ms, 3), "retrieved_ids": [h.id for h in hits],
                                   "retrieved_sources": [sorted(p) for p in prov]}
            if keep_texts:
                row["retrieved_texts"] = [render_line(h, dated=True) for h in hits]
            for k in ks:
                # recall@k is what search(limit=k) returns: a fused mode's top k may depend on the limit
                # (its candidate depth grows with it), so a shorter limit is asked for, not cut from the longest.
                top = hits if k == limit else mem.search(q.question, user_id=conv.sample_id, limit=k, **how)
                top_own, top_prov = (own, prov) if k == limit else _credits(run, top)
                dated = [render_line(h, dated=True) for h in top]
                row[f"answer_recall@{k}"] = answer_recall(q.answer, dated, k)
                row[f"answer_recall_unfolded@{k}"] = answer_recall(
                    q.answer, [render_line(h, dated=True, folded=False) for h in top], k)
                row[f"reader_chars@{k}"] = float(sum(len(line) for line in dated))
                for fmt in DATE_FORMATS:
                    lines = [render_line(h, dated=True, date_format=fmt) for h in top]
                    row[f"answer_recall_{fmt}@{k}"] = answer_recall(q.answer, lines, k)
                row[f"answer_recall_undated@{k}"] = answer_recall(q.answer, [h.text for h in top], k)
                row[f"adversarial_recall@{k}"] = answer_recall(q.adversarial_answer, dated, k)
                row[f"evidence_recall@{k}"] = evidence_recall(q.evidence, top_own, k)
                row[f"provenance_recall@{k}"] = evidence_recall(q.evidence, top_prov, k)
            rows.append(row)
            if tick is not None:
                tick(1)
    return rows


def _credits(run: StreamRun, hits: Sequence[Any]) -> tuple[list[set[str]], list[set[str]]]:
    """Per hit: the dia_ids its own text was written from, and those plus the NOOPs folded into it."""
    own = [run.own[h.id] if h.id in run.own else _as_set(h.source) for h in hits]
    return own, [own[i] | run.provenance.get(h.id, set()) for i, h in enumerate(hits)]


def _as_set(source: Any) -> set[str]:
    if source is None:
        return set()
    if isinstance(source, str):
        return {source}
    return set(source)
