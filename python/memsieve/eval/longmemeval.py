"""``memsieve eval longmemeval``: the LoCoMo arms on LongMemEval's per-question haystacks.

Each question is one scope. Its haystack goes in through ``Memory.add_many``,
one item per non-empty turn, dated by the turn's session (``valid_from``),
sourced ``<session_id>:<turn_index>`` and tagged with its ``role``. Then the
question is searched in its own scope with the default ``Memory.search``
(``limit=k`` for each cut-off) and scored (see :func:`score_hits`).

Every arm of :mod:`memsieve.eval.arms` runs in its own ``Memory`` on its own
SQLite file (``--store``, a temporary directory by default): ``add-all``,
``maxcos``, ``sage``, ``memsieve`` and ``random`` (at the rate the memsieve arm
dropped, mean of three seeds). Vectors come from one
:class:`~memsieve.eval.vectors.VectorTable`, filled from an on-disk cache, so a
second run embeds nothing.

Writes ``summary.json``, ``summary.md``, ``recall_by_type.png``,
``stored_vs_recall.png`` and ``questions.jsonl`` (one row per question and arm;
it quotes the data, so it stays out of git) into ``--out``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memsieve.errors import ConfigError
from memsieve.eval.arms import (MAIN_ARMS, RANDOM_SEEDS, ArmSpec, StreamRun, _credit, _credits, _sum_stats,
                                default_search_mode, main_specs, random_spec)
from memsieve.eval.longmemeval_ceiling import reader_ceilings
from memsieve.eval.longmemeval_data import LmeDataset, LmeQuestion, load_longmemeval
from memsieve.eval.metrics import aggregate, answer_recall, content_tokens, percentile
from memsieve.eval.runinfo import check_out, code_version
from memsieve.eval.vectors import VectorTable, embed_texts
from memsieve.text.passages import part_spans
from memsieve.read.render import render_line
from memsieve.read.when import stage_off
from memsieve.resources import cache_root

#: Characters of a folded-into memory's text kept in a dropped-evidence record.
FOLDED_TEXT_CHARS = 160
#: The search argument that would carry the question's date, once ``Memory.search`` takes one.
REFERENCE_TIME_PARAM = "reference_time"


def default_cache_path() -> Path:
    """Where vectors are cached when ``--embedding-cache`` is not given: in memsieve's cache
    folder (:func:`memsieve.resources.cache_root`; ``~/.cache/memsieve`` by default)."""
    return cache_root() / "eval" / "longmemeval-vectors.npz"


@dataclass(kw_only=True)
class LmeOptions:
    """Everything one run needs (the CLI's arguments, typed).

    Attributes:
        data: a LongMemEval JSON file (plain or gzipped).
        out: output directory.
        arms: headline arms (any of :data:`memsieve.eval.arms.MAIN_ARMS`).
        ks: cut-offs; each is its own ``search(limit=k)``; NDCG is at the largest.
        per_type / seed: keep ``per_type`` questions of each type, drawn with ``seed``.
        limit: keep the first ``limit`` questions (after ``per_type``).
        questions: question ids to keep (all when None).
        store: SQLite file; each arm writes ``<stem>.<arm>[-seed<s>]<suffix>`` beside
            it (None: a temporary directory, removed afterwards).
        embedding_cache: an ``.npz`` of vectors to reuse and extend (None: no cache).
        memsieve_gate: GateConfig overrides for the memsieve arm.
        batch_size: ``add_many``'s batch size.
        progress: show progress bars.
        embedder_factory: builds the embedder (default: the packaged ONNX model).
        before_now: also score every arm with the search as it was before queries had a "now"
            (no reference time, memsieve.read.when's stage off), as ``<arm> before now``.
    """

    data: str
    out: str
    arms: tuple[str, ...] = MAIN_ARMS
    ks: tuple[int, ...] = (5, 10)
    per_type: int | None = None
    seed: int = 0
    limit: int | None = None
    questions: list[str] | None = None
    store: str | None = None
    embedding_cache: str | None = None
    memsieve_gate: dict[str, Any] = field(default_factory=dict)
    batch_size: int = 64
    progress: bool = True
    embedder_factory: Any = None
    before_now: bool = False


def metric_keys(ks: Sequence[int]) -> list[str]:
    """Every per-question metric, for each cut-off in ``ks`` (NDCG at the largest)."""
    names = ("answer_recall", "answer_recall_undated", "answer_recall_unfolded", "reader_chars",
             "answer_recall_extractive", "recall_any", "recall_all",
             "recall_share",
             "recall_any_text", "recall_all_text", "session_recall_any")
    return [f"{m}@{k}" for m in names for k in ks] + [f"ndcg@{max(ks)}"]


def search_kwargs(search: Callable[..., Any], question: LmeQuestion) -> dict[str, Any]:
    """Extra arguments of ``search`` for this question: the question's date as
    ``reference_time`` when ``search`` accepts that parameter, else nothing.

    A hook: ``Memory.search`` does not take a reference time yet; when it does,
    every question is searched as of its own date with no change here.
    """
    if REFERENCE_TIME_PARAM in inspect.signature(search).parameters:
        return {REFERENCE_TIME_PARAM: question.question_date}
    return {}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _session_of(source: str) -> str:
    return source.rsplit(":", 1)[0]


def ndcg(relevant: Sequence[bool], n_relevant: int, k: int) -> float | None:
    """Binary NDCG@k: DCG of ``relevant`` (best first) over the DCG of ``min(n_relevant, k)`` hits at the top.

    None when nothing is relevant (no evidence turn).
    """
    if n_relevant <= 0:
        return None
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(relevant[:k]) if r)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(n_relevant, k)))
    return dcg / ideal


def score_hits(q: LmeQuestion, hits: Sequence[Any], provenance: Sequence[set[str]], own: Sequence[set[str]],
               k: int) -> dict[str, float | None]:
    """The metrics of one question at cut-off k.

    Args:
        q: the question (its evidence turns, answer sessions and answer).
        hits: ``search(limit=k)``'s results, best first.
        provenance: per hit, the turn ids it holds: its own source plus those of
            the NOOPs folded into it.
        own: per hit, the turn ids its own text was written from.

    Returns:
        ``recall_any`` / ``recall_all`` (some / every evidence turn's id is in a
        hit's provenance; LongMemEval's own definitions), ``recall_share`` (the
        share of the evidence turns that are), the same ``_text`` (a hit's text equals or contains the
        evidence turn's text, whitespace collapsed), ``session_recall_any`` (a hit
        was written from an answer session), ``answer_recall`` (answer tokens in
        the hits as the reader sees them, dated, each with its ``folded`` texts), ``answer_recall_unfolded``
        (the same without them), ``answer_recall_undated``, ``reader_chars`` (the characters of those lines);
        ``answer_recall_extractive``, the same for a question whose answer's
        every token is in its evidence turns (a stated fact, not a computed
        count or interval, whose tokens any turn may hold by chance); None
        where the question has no evidence turn (recall) or no answer tokens
        or is an abstention question (answer recall), or an answer that is not
        extractive (extractive answer recall).
    """
    top, prov, mine = list(hits)[:k], list(provenance)[:k], list(own)[:k]
    ev = q.evidence
    out: dict[str, float | None] = {}
    if ev:
        seen = set().union(*prov) if prov else set()
        found = [e in seen for e in ev]
        texts = [_norm(h.text) for h in top]
        by_text = [any(_norm(t.text) in x for x in texts) for t in ev.values()]
        out.update({f"recall_any@{k}": float(any(found)), f"recall_all@{k}": float(all(found)),
                    f"recall_share@{k}": sum(found) / len(found),
                    f"recall_any_text@{k}": float(any(by_text)), f"recall_all_text@{k}": float(all(by_text))})
    else:
        out.update({f"{m}@{k}": None for m in ("recall_any", "recall_all", "recall_share", "recall_any_text",
                                                "recall_all_text")})
    answer_sessions = set(q.answer_session_ids)
    out[f"session_recall_any@{k}"] = (float(any(_session_of(s) in answer_sessions for srcs in mine for s in srcs))
                                      if answer_sessions else None)
    answer = None if q.abstention else q.answer
    lines = [render_line(h, dated=True) for h in top]
    out[f"answer_recall@{k}"] = answer_recall(answer, lines, k)
    out[f"answer_recall_unfolded@{k}"] = answer_recall(answer, [render_line(h, dated=True, folded=False)
                                                                for h in top], k)
    out[f"reader_chars@{k}"] = float(sum(len(line) for line in lines))
    out[f"answer_recall_undated@{k}"] = answer_recall(answer, [h.text for h in top], k)
    out[f"answer_recall_extractive@{k}"] = out[f"answer_recall@{k}"] if is_extractive(q) else None
    return out


def is_extractive(q: LmeQuestion) -> bool:
    """Whether every content token of the question's answer is in its evidence turns' texts."""
    if q.abstention or not q.evidence:
        return False
    wanted = set(content_tokens(str(q.answer)))
    said = {t for turn in q.evidence.values() for t in content_tokens(turn.text)}
    return bool(wanted) and wanted <= said


def reason_kind(d: Any) -> str:
    """A NOOP decision's reason as a category (its sentence carries numbers and words of its own)."""
    layer = getattr(d, "layer", None)
    if layer == "exact":
        return "exact duplicate"
    if layer == "novelty":
        info = getattr(d, "information", float("nan"))
        return "novelty < tau, little new information" if info == info else "novelty < tau"
    if layer == "band":
        return "band policy noop"
    if layer == "llm":
        return "llm decided noop"
    return f"{layer}"


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


@dataclass
class ArmRun:
    """One arm over the selected questions: per-question rows and totals."""

    spec: ArmSpec
    rows: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    candidates: int = 0
    offered: int = 0
    ingest_s: float = 0.0
    search_ms: list[float] = field(default_factory=list)
    provenance_checked: int = 0
    provenance_missing: int = 0
    noop_reasons: Counter = field(default_factory=Counter)
    before: "ArmRun | None" = None  # the same stores searched as before queries had a "now"


def run_arm(spec: ArmSpec, ds: LmeDataset, table: VectorTable, store: Path, ks: tuple[int, ...], *,
            batch_size: int = 64, progress: bool = True, max_text_chars: int = 4000,
            before_now: bool = False) -> ArmRun:
    """Ingest and score every question with one arm, in a fresh SQLite file at ``store``.

    With ``before_now``, each question is also searched with the time stage off
    and no reference time, into ``arm.before``.
    """
    from tqdm import tqdm

    from memsieve import GateConfig, Memory

    arm = ArmRun(spec)
    if before_now:
        arm.before = ArmRun(spec)
    dropped: set[int] | None = None
    if spec.drop_rate is not None:
        total = sum(len(q.candidates()) for q in ds.questions)
        dropped = set(random.Random(spec.seed).sample(range(total), round(spec.drop_rate * total)))
    position = 0
    mem = Memory(store, embedder=table, gate=GateConfig(**spec.gate), max_text_chars=max_text_chars)
    try:
        for q in tqdm(ds.questions, desc=spec.label, unit="question", disable=not progress):
            pairs = q.candidates()
            arm.candidates += len(pairs)
            kept = pairs
            if dropped is not None:
                kept = [p for i, p in enumerate(pairs, start=position) if i not in dropped]
                position += len(pairs)
            arm.offered += len(kept)
            run = StreamRun()
            decided: dict[str, Any] = {}
            if kept:
                items = [{"content": c.text, "role": t.role, "valid_from": c.valid_from, "source": t.id}
                         for c, t in kept]
                t0 = time.perf_counter()
                decisions = mem.add_many(items, user_id=q.question_id, batch_size=batch_size)
                arm.ingest_s += time.perf_counter() - t0
                for (cand, turn), ds_ in zip(kept, decisions):
                    for d in ds_:
                        _credit(run, d, cand)
                        if d.event == "NOOP":
                            arm.noop_reasons[reason_kind(d)] += 1
                    decided[turn.id] = ds_[-1] if ds_ else None
            row = score_question(mem, q, run, ks, arm)
            fate = _evidence_fate(mem, q, decided, offered={t.id for _c, t in kept})
            row.update(fate)
            arm.rows.append(row)
            if arm.before is not None:
                with stage_off():
                    old = score_question(mem, q, run, ks, arm.before, reference_time=False)
                arm.before.rows.append({**old, **fate})
            scope_stats = mem.stats(user_id=q.question_id)
            arm.stats = _sum_stats(arm.stats, {k: v for k, v in scope_stats.items()
                                               if k in ("events", "layers", "active_memories")})
    finally:
        mem.close()
    if arm.before is not None:
        arm.before.stats, arm.before.candidates, arm.before.offered = arm.stats, arm.candidates, arm.offered
        arm.before.ingest_s, arm.before.noop_reasons = arm.ingest_s, arm.noop_reasons
    return arm


def score_question(mem: Any, q: LmeQuestion, run: StreamRun, ks: tuple[int, ...], arm: ArmRun, *,
                   reference_time: bool = True) -> dict[str, Any]:
    """Search ``q`` in its scope at every cut-off and score it (see :func:`score_hits`).

    ``reference_time=False`` searches without the question's date.
    """
    how = search_kwargs(mem.search, q) if reference_time else {}
    limit = max(ks)
    row: dict[str, Any] = {"question_id": q.question_id, "question_type": q.question_type,
                           "abstention": q.abstention, "question": q.question, "answer": q.answer,
                           "question_date": q.question_date, "evidence": list(q.evidence),
                           "reference_time_passed": bool(how)}
    for k in sorted(ks, reverse=True):
        t0 = time.perf_counter()
        hits = mem.search(q.question, user_id=q.question_id, limit=k, **how)
        ms = (time.perf_counter() - t0) * 1000.0
        own, prov = _credits(run, hits)
        prov = [p | set(getattr(h, "sources", None) or []) for p, h in zip(prov, hits)]
        if k == limit:
            arm.search_ms.append(ms)
            for h, p in zip(hits, _credits(run, hits)[1]):
                arm.provenance_checked += 1
                arm.provenance_missing += not p <= set(getattr(h, "sources", None) or [])
            relevant = [bool(p & set(q.evidence)) for p in prov]
            row[f"ndcg@{k}"] = ndcg(relevant, len(q.evidence), k)
            row.update({"latency_ms": round(ms, 3), "retrieved_sources": [sorted(p) for p in prov],
                        "retrieved_texts": [render_line(h, dated=True) for h in hits]})
        row.update(score_hits(q, hits, prov, own, k))
    return row


def _evidence_fate(mem: Any, q: LmeQuestion, decided: dict[str, Any], *, offered: set[str]) -> dict[str, Any]:
    """What the write path did with each evidence turn, and for each NOOP'd one why."""
    stored = folded = lost = 0
    drops = []
    for tid, turn in q.evidence.items():
        if tid not in offered:
            lost += 1
            drops.append({"turn": tid, "role": turn.role, "event": "DROPPED", "reason_kind": "random drop",
                          "text": turn.text})
            continue
        d = decided.get(tid)
        if d is None:
            lost += 1
            continue
        if d.event in ("ADD", "UPDATE"):
            stored += 1
            continue
        into_text = None
        if d.memory_id is not None:
            folded += 1
            try:
                into_text = mem.get(d.memory_id, user_id=q.question_id).text[:FOLDED_TEXT_CHARS]
            except Exception:  # noqa: BLE001 - a record for reading, never a reason to stop the run
                into_text = None
        else:
            lost += 1
        drops.append({"turn": tid, "role": turn.role, "event": d.event, "layer": d.layer,
                      "reason_kind": reason_kind(d), "reason": d.reason, "novelty": _finite(d.novelty),
                      "tau": _finite(d.tau), "information": _finite(getattr(d, "information", None)),
                      "folded_into": d.memory_id, "folded_into_text": into_text, "text": turn.text})
    return {"evidence_turns": len(q.evidence), "evidence_stored": stored, "evidence_folded": folded,
            "evidence_lost": lost, "evidence_dropped": drops}


def _arm_result(arm: ArmRun, ks: tuple[int, ...]) -> dict[str, Any]:
    agg = aggregate(arm.rows, metric_keys(ks), answer_categories=None, group="question_type")
    ev = {key: sum(r[key] for r in arm.rows) for key in ("evidence_turns", "evidence_stored", "evidence_folded",
                                                          "evidence_lost")}
    drop_reasons = Counter(d["reason_kind"] for r in arm.rows for d in r["evidence_dropped"])
    events = arm.stats.get("events") or {}
    return {"spec": asdict(arm.spec), "label": arm.spec.label, **agg,
            "stored": int(arm.stats.get("active_memories", 0)), "noops": int(events.get("NOOP", 0)),
            "events": events, "layers": arm.stats.get("layers") or {},
            "candidates": arm.candidates, "offered": arm.offered,
            **ev, "evidence_kept_fraction": ((ev["evidence_stored"] + ev["evidence_folded"]) / ev["evidence_turns"]
                                             if ev["evidence_turns"] else None),
            "evidence_drop_reasons": dict(drop_reasons.most_common()),
            "noop_reasons": dict(arm.noop_reasons.most_common()),
            "ingest_s": round(arm.ingest_s, 2),
            "search_ms_mean": round(sum(arm.search_ms) / len(arm.search_ms), 3) if arm.search_ms else None,
            "search_ms_p95": round(percentile(arm.search_ms, 95) or 0.0, 3) if arm.search_ms else None,
            "search_s": round(sum(arm.search_ms) / 1000.0, 2),
            "provenance_checked": arm.provenance_checked, "provenance_missing": arm.provenance_missing}


def _mean_results(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The random arm's entry: the mean of its seeds (counts and metrics alike)."""
    from memsieve.eval.report import _mean_tree

    entry = _mean_tree(results)
    entry["label"] = results[0]["label"].split(" seed=")[0]
    entry["seeds"] = [{"seed": r["spec"]["seed"], "stored": r["stored"], "micro": r["micro"]} for r in results]
    entry["evidence_drop_reasons"] = dict(sum((Counter(r["evidence_drop_reasons"]) for r in results), Counter()))
    entry["noop_reasons"] = dict(sum((Counter(r["noop_reasons"]) for r in results), Counter()))
    return entry


def _store_path(base: Path, spec: ArmSpec) -> Path:
    name = spec.arm + (f"-seed{spec.seed}" if spec.drop_rate is not None else "")
    path = base.with_name(f"{base.stem}.{name}{base.suffix or '.sqlite'}")
    if path.exists():
        raise ConfigError(f"store file {str(path)!r} already exists; remove it or pass another --store")
    return path


def run_longmemeval(opts: LmeOptions) -> dict[str, Any]:
    """Run every asked arm, write every output file; return the summary."""
    from memsieve.eval import longmemeval_report as report

    unknown = [a for a in opts.arms if a not in MAIN_ARMS]
    if unknown or not opts.arms:
        raise ConfigError(f"unknown arm(s) {unknown}; use any of {', '.join(MAIN_ARMS)}")
    if not opts.ks or any(k < 1 for k in opts.ks):
        raise ConfigError(f"--k needs positive integers, got {opts.ks}; e.g. --k 5,10")
    ks = tuple(sorted(set(opts.ks)))
    wall0 = time.perf_counter()
    code = code_version()
    ds = load_longmemeval(opts.data, per_type=opts.per_type, seed=opts.seed, limit=opts.limit, ids=opts.questions)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)  # after the data loaded: a bad file leaves nothing behind
    turns = [c.text for q in ds.questions for c, _t in q.candidates()]
    # A turn's parts (a long one's passages, a short one's sentence keys) are
    # embedded here too, so that they are cached like the turns themselves.
    pieces = [t[a:b] for t in dict.fromkeys(turns) for _, a, b in part_spans(t)]
    texts = turns + pieces + [q.question for q in ds.questions]
    table, embed_info = embed_texts(texts, embedder_factory=opts.embedder_factory,
                                    embedding_cache=opts.embedding_cache, progress=opts.progress)
    heads = main_specs(memsieve_gate=opts.memsieve_gate)
    needed = [a for a in MAIN_ARMS if a in opts.arms and a != "random"]
    if "random" in opts.arms:
        needed = list(dict.fromkeys(["add-all"] + needed + ["memsieve"]))
    max_chars = max(4000, ds.counts.longest_turn_chars)
    with tempfile.TemporaryDirectory(prefix="memsieve-lme-") as tmp:
        base = Path(opts.store) if opts.store else Path(tmp) / "longmemeval.sqlite"
        base.parent.mkdir(parents=True, exist_ok=True)
        runs: dict[str, list[ArmRun]] = {}
        t_arms = time.perf_counter()
        for a in needed:
            runs[a] = [run_arm(heads[a], ds, table, _store_path(base, heads[a]), ks, batch_size=opts.batch_size,
                               progress=opts.progress, max_text_chars=max_chars, before_now=opts.before_now)]
        if "random" in opts.arms:
            base_stored = int(runs["add-all"][0].stats.get("active_memories", 0))
            ms_stored = int(runs["memsieve"][0].stats.get("active_memories", 0))
            rate = round(max(0.0, 1.0 - ms_stored / max(base_stored, 1)), 4)
            runs["random"] = [run_arm(spec, ds, table, _store_path(base, spec), ks, batch_size=opts.batch_size,
                                      progress=opts.progress, max_text_chars=max_chars)
                              for spec in (random_spec(rate, s) for s in RANDOM_SEEDS)]
        arms_s = time.perf_counter() - t_arms
    per_arm = {a: [_arm_result(r, ks) for r in rs] for a, rs in runs.items()}
    summary_arms: dict[str, Any] = {}
    base_stored = per_arm["add-all"][0]["stored"] if "add-all" in per_arm else None
    for a in MAIN_ARMS:
        if a not in per_arm:
            continue
        entry = per_arm[a][0] if len(per_arm[a]) == 1 else _mean_results(per_arm[a])
        entry["stored_fraction"] = entry["stored"] / base_stored if base_stored else None
        summary_arms[a] = entry
        before = runs[a][0].before if len(runs[a]) == 1 else None
        if before is not None:
            old = _arm_result(before, ks)
            old["stored_fraction"], old["label"] = entry["stored_fraction"], f"{a} before now"
            summary_arms[f"{a} before now"] = old
    meta = {"data": str(opts.data), "questions": len(ds.questions), "selection": ds.selection,
            "loader": asdict(ds.counts), "arms": list(summary_arms), "ks": list(ks),
            "search": "default", "search_default": default_search_mode(),
            "reference_time_hook": REFERENCE_TIME_PARAM,
            "reference_time_passed": any(r["reference_time_passed"] for rs in runs.values() for r in rs[0].rows),
            "before_now": opts.before_now,
            "memsieve_gate": opts.memsieve_gate, "max_text_chars": max_chars, "batch_size": opts.batch_size,
            "store": "temporary directory" if not opts.store else str(opts.store),
            "embedding": {**embed_info, "hits_in_arms": table.hits, "misses_in_arms": table.misses},
            "code": code, "cpu_count": os.cpu_count(), "arms_s": round(arms_s, 1)}
    rows_path = write_questions(out, runs)
    meta["questions_file"] = rows_path.name
    meta["wall_s"] = round(time.perf_counter() - wall0, 1)
    summary = {"meta": meta, "arms": summary_arms, "ceilings": reader_ceilings(ds.questions)}
    report.write_all(out, summary)
    return summary


def write_questions(out: Path, runs: dict[str, list[ArmRun]]) -> Path:
    """questions.jsonl: one row per question and arm (and seed); it quotes the data."""
    path = out / "questions.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for a, rs in runs.items():
            for r in rs:
                for name, part in ((a, r), (f"{a} before now", r.before)):
                    for row in part.rows if part is not None else []:
                        fh.write(json.dumps({"arm": name, "label": r.spec.label,
                                             "seed": r.spec.seed if r.spec.drop_rate is not None else None, **row},
                                            ensure_ascii=False) + "\n")
    return path


def _gate_overrides(text: str | None) -> dict[str, Any]:
    from memsieve.eval.runner import _gate_overrides as parse

    return parse(text)


def add_arguments(subparsers: Any) -> None:
    """Add ``longmemeval`` to ``memsieve eval``'s subparsers (see memsieve.eval.commands)."""
    p = subparsers.add_parser("longmemeval", help="LongMemEval: the arms on every question's own haystack")
    p.add_argument("data", help="LongMemEval JSON file, plain or .gz (e.g. longmemeval_s_dev.json.gz), read in place")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--arms", default=",".join(MAIN_ARMS), help=f"comma-separated arms (default {','.join(MAIN_ARMS)})")
    p.add_argument("--k", default="5,10", help="cut-offs, comma-separated (default 5,10; NDCG at the largest)")
    p.add_argument("--per-type", type=int, help="keep N questions of each question_type")
    p.add_argument("--seed", type=int, default=0, help="seed of --per-type's draw (default 0)")
    p.add_argument("--limit", type=int, help="keep the first N questions (after --per-type)")
    p.add_argument("--questions", help="question ids to keep, comma-separated")
    p.add_argument("--store", help="SQLite file; each arm writes <stem>.<arm>.sqlite beside it "
                                   "(default: a temporary directory, removed afterwards)")
    p.add_argument("--embedding-cache", default=str(default_cache_path()),
                   help="vectors to reuse and extend, an .npz (default %(default)s)")
    p.add_argument("--no-embedding-cache", action="store_true", help="embed everything, cache nothing")
    p.add_argument("--memsieve-gate", help="GateConfig overrides for the memsieve arm, e.g. gamma=0.6")
    p.add_argument("--batch-size", type=int, default=64, help="add_many's batch size (default 64)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.add_argument("--before-now", action="store_true",
                   help="also score each arm with the search as it was before queries had a reference time "
                        "(as '<arm> before now'), on the same stores")
    p.set_defaults(func=main_longmemeval)


def main_longmemeval(args: argparse.Namespace) -> int:
    """Run ``eval longmemeval`` from parsed arguments; print the headline and where the results went."""
    check_out(args.out)
    try:
        ks = tuple(int(k) for k in str(args.k).split(",") if k.strip())
    except ValueError:
        raise ConfigError(f"--k expects integers like 5,10, got {args.k!r}") from None
    opts = LmeOptions(
        data=args.data, out=args.out, arms=tuple(a.strip() for a in args.arms.split(",") if a.strip()), ks=ks,
        per_type=args.per_type, seed=args.seed, limit=args.limit,
        questions=[x.strip() for x in args.questions.split(",") if x.strip()] if args.questions else None,
        store=args.store, embedding_cache=None if args.no_embedding_cache else args.embedding_cache,
        memsieve_gate=_gate_overrides(args.memsieve_gate), batch_size=args.batch_size,
        progress=not args.no_progress, before_now=args.before_now)
    run_longmemeval(opts)
    out = Path(opts.out)
    print((out / "summary.md").read_text().split("\n## ", 2)[0].strip())
    print(f"\nwrote {', '.join(sorted(p.name for p in out.iterdir()))} to {out}", file=sys.stderr)
    return 0

