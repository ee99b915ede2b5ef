"""``memsieve eval locomo``: run every arm (and the sweep) and write the results.

The run has three stages:

1. load the conversations and embed every distinct text once (turns, facts,
   questions) through one ``CachedEmbedder``;
2. run the jobs (one arm configuration on one stream, each in its own fresh
   ``Memory(":memory:")``), in ``--jobs`` worker processes that read the shared
   vectors; the random arm runs last, at the rate the memsieve arm dropped;
3. write questions.jsonl, summary.json, summary.md, sweep.json, meta.json and the
   plots into ``--out``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memsieve.errors import ConfigError
from memsieve.eval.arms import (MAIN_ARMS, RANDOM_SEEDS, ArmSpec, check_search_mode, default_search_mode, ingest,
                                main_specs, random_spec, score_questions, search_modes)
from memsieve.eval.consolidate_arm import CONSOLIDATE_ARMS, consolidate_all, consolidate_specs, wants_consolidation
from memsieve.eval.locomo import STREAMS, Dataset, check_category_labels, load_locomo
from memsieve.eval.metrics import aggregate, percentile
from memsieve.eval.runinfo import check_out, code_version
from memsieve.eval.sweep import GRIDS, sweep_specs
from memsieve.eval.vectors import VectorTable, embed_all

GZIP_ABOVE_BYTES = 30 * 1024 * 1024


@dataclass(kw_only=True)
class EvalOptions:
    """Everything one run needs (the CLI's arguments, typed).

    Attributes:
        data: the LoCoMo JSON file.
        out: output directory.
        streams: which write streams.
        arms: which headline arms (``llm`` is added when ``llm_base_url`` is set).
        ks: recall cut-offs; the largest is the search limit.
        conversations: sample_ids to keep (all when None).
        sweep: ``full``, ``quick`` or ``none``.
        jobs: worker processes (1 runs everything in this process).
        memsieve_gate: GateConfig overrides for the memsieve arm and the sweep's base.
        llm_base_url / llm_model / llm_api_key: the LLM arm's endpoint.
        trace_scope: the conversation whose tau is plotted (the first when None).
        embedding_cache: an .npz to reuse vectors across runs (never needed for one run).
        search: the ``Memory.search`` mode every question is searched with
            (None: ``Memory.search``'s own default).
        progress: show progress bars.
        embedder_factory: builds the embedder (default: the packaged ONNX model).
        consolidate_min_sim: ``min_sim`` of the ``+consolidate`` arms (None: consolidation's default).
    """

    data: str
    out: str
    streams: tuple[str, ...] = STREAMS
    arms: tuple[str, ...] = MAIN_ARMS
    ks: tuple[int, ...] = (5, 10, 20)
    conversations: list[str] | None = None
    sweep: str = "full"
    jobs: int = 2
    memsieve_gate: dict[str, Any] = field(default_factory=dict)
    llm_base_url: str | None = None
    llm_model: str = "local"
    llm_api_key: str = "not-needed"
    trace_scope: str | None = None
    embedding_cache: str | None = None
    search: str | None = None
    progress: bool = True
    embedder_factory: Any = None
    consolidate_min_sim: float | None = None


@dataclass(frozen=True)
class Job:
    stream: str
    spec: ArmSpec
    headline: bool

    @property
    def key(self) -> str:
        s = self.spec
        return json.dumps([self.stream, s.arm, s.gate, s.drop_rate, s.seed, s.llm], sort_keys=True)


def metric_keys(ks: tuple[int, ...]) -> list[str]:
    """Every per-question metric a job aggregates, for each cut-off in ``ks``."""
    return [f"{m}@{k}" for m in ("answer_recall", "answer_recall_undated", "answer_recall_unfolded", "reader_chars",
                                 "evidence_recall", "provenance_recall", "adversarial_recall") for k in ks]


# Set in the parent before the workers fork; read by run_job in either process.
_STATE: dict[str, Any] = {}


def run_job(job: Job) -> dict[str, Any]:
    """One arm configuration on one stream, in a fresh in-memory store."""
    from memsieve import GateConfig, Memory

    ds: Dataset = _STATE["dataset"]
    table: VectorTable = _STATE["table"]
    ks: tuple[int, ...] = _STATE["ks"]
    hits0, misses0 = table.hits, table.misses
    spec = job.spec
    llm = _STATE.get("llm") if spec.llm else None
    t0 = time.perf_counter()
    mem = Memory(":memory:", embedder=table, llm=llm, gate=GateConfig(**spec.gate))
    try:
        run = ingest(mem, ds.conversations, job.stream, spec, trace_scope=_STATE["trace_scope"])
        merged = consolidate_all(mem, ds.conversations, run, spec) if wants_consolidation(spec) else None
        rows = score_questions(mem, ds.conversations, run, ks, mode=_STATE["search"], keep_texts=job.headline)
    finally:
        mem.close()
    keys = metric_keys(ks)
    agg = aggregate(rows, keys)
    lat = [float(r["latency_ms"]) for r in rows]
    llm_stats = run.stats.get("llm") or {}
    result: dict[str, Any] = {
        "key": job.key, "stream": job.stream, "spec": asdict(spec), "headline": job.headline,
        **agg,
        "stored": int(run.stats.get("active_memories", 0)),
        "noops": int((run.stats.get("events") or {}).get("NOOP", 0)),
        "events": run.stats.get("events", {}), "layers": run.stats.get("layers", {}),
        "candidates": run.candidates, "offered": run.offered,
        "llm_calls": int(llm_stats.get("calls", 0)),
        "llm_tokens": int(llm_stats.get("prompt_tokens", 0)) + int(llm_stats.get("completion_tokens", 0)),
        "llm_faults": int(llm_stats.get("faults", 0)),
        "ingest_s": round(run.ingest_s, 3),
        "search_ms_mean": round(sum(lat) / len(lat), 3) if lat else None,
        "search_ms_p95": round(percentile(lat, 95) or 0.0, 3) if lat else None,
        "job_s": round(time.perf_counter() - t0, 3),
        "alignment_faults": run.alignment_faults,
        "provenance_checked": run.provenance_checked, "provenance_missing": run.provenance_missing,
        "embed_hits": table.hits - hits0, "embed_misses": table.misses - misses0,
    }
    if merged is not None:
        result["consolidation"] = merged
    if job.headline:
        result["rows"] = rows
        result["novelty"] = run.novelty
        result["trace"] = run.trace
    return result


def _run_jobs(jobs: list[Job], opts: EvalOptions, desc: str) -> list[dict[str, Any]]:
    from tqdm import tqdm

    ds: Dataset = _STATE["dataset"]
    per_q = len(ds.questions)
    weight = {j.key: _cost(ds, j) + per_q for j in jobs}
    ordered = sorted(jobs, key=lambda j: -weight[j.key])  # longest first packs workers best
    out = []
    with tqdm(total=sum(weight.values()), desc=desc, unit="op", disable=not opts.progress) as bar:
        if opts.jobs <= 1 or len(jobs) <= 1:
            for j in ordered:
                out.append(run_job(j))
                bar.update(weight[j.key])
        else:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(min(opts.jobs, len(jobs))) as pool:
                for res in pool.imap_unordered(run_job, ordered):
                    out.append(res)
                    bar.update(weight[res["key"]])
    return out


# Relative cost of one add() call, so the progress bar's ETA is honest: SAGE
# re-estimates its density (a PCA) once per call, ~0.2 s; the others ~1 ms.
_CALL_COST = {"sage": 200.0}


def _cost(ds: Dataset, job: Job) -> int:
    calls = sum(len(calls) for c in ds.conversations for _s, calls in c.stream(job.stream))
    n = sum(len(chunk) for c in ds.conversations for _s, calls in c.stream(job.stream) for chunk in calls)
    per_call = _CALL_COST.get(job.spec.arm, 0.0)
    return int(n * (1.0 - (job.spec.drop_rate or 0.0)) + per_call * calls)


def run_locomo(opts: EvalOptions) -> dict[str, Any]:
    """Run the evaluation and write every output file; return the summary."""
    from memsieve.eval import report

    for s in opts.streams:
        if s not in STREAMS:
            raise ConfigError(f"unknown stream {s!r}; use one of {', '.join(STREAMS)}")
    known = MAIN_ARMS + ("llm",) + CONSOLIDATE_ARMS
    unknown = [a for a in opts.arms if a not in known]
    if unknown:
        raise ConfigError(f"unknown arm(s) {unknown}; use any of {', '.join(known)}")
    if opts.sweep not in GRIDS:
        raise ConfigError(f"unknown sweep level {opts.sweep!r}; use one of {', '.join(GRIDS)}")
    if not opts.ks or any(k < 1 for k in opts.ks):
        raise ConfigError(f"--k needs positive integers, got {opts.ks}; e.g. --k 5,10,20")
    search = check_search_mode(opts.search)
    wall0 = time.perf_counter()
    code = code_version()  # before any job: the tree the arms actually ran
    out = Path(opts.out)
    ds = load_locomo(opts.data, conversations=opts.conversations)
    out.mkdir(parents=True, exist_ok=True)  # after the data loaded: a bad path leaves nothing behind
    table, embed_info = embed_all(ds, streams=opts.streams, embedder_factory=opts.embedder_factory,
                                  embedding_cache=opts.embedding_cache, progress=opts.progress)
    arms = tuple(opts.arms) + (("llm",) if opts.llm_base_url and "llm" not in opts.arms else ())
    _STATE.update(dataset=ds, table=table, ks=tuple(sorted(set(opts.ks))), search=search,
                  trace_scope=opts.trace_scope or ds.conversations[0].sample_id,
                  llm=_llm_config(opts) if "llm" in arms else None)

    heads = main_specs(memsieve_gate=opts.memsieve_gate)
    heads.update(consolidate_specs(memsieve_gate=opts.memsieve_gate, min_sim=opts.consolidate_min_sim))
    if "llm" in arms:
        heads["llm"] = ArmSpec(arm="llm", label="memsieve + LLM band", gate={"profile": "memsieve",
                               **opts.memsieve_gate}, llm=True)
    needed = [a for a in arms if a in heads]
    if "random" in arms and "add-all" not in needed:
        needed = ["add-all"] + needed
    if "random" in arms and "memsieve" not in needed:
        needed.append("memsieve")
    jobs = [Job(s, heads[a], True) for s in opts.streams for a in needed]
    head_keys = {j.key for j in jobs}
    # Sweep only the families whose headline arm was asked for.
    swept = [(spec, only) for spec, only in sweep_specs(opts.sweep, memsieve_base=opts.memsieve_gate)
             if spec.arm.split("-")[0] in arms]
    jobs += [j for s in opts.streams for spec, only in swept
             if (only is None or s in only) and (j := Job(s, spec, False)).key not in head_keys]
    t_jobs = time.perf_counter()
    results = _run_jobs(jobs, opts, "arms and sweep")
    if "random" in arms:
        rand_jobs = []
        for s in opts.streams:
            base = _find(results, s, heads["add-all"])
            ms = _find(results, s, heads["memsieve"])
            rate = max(0.0, 1.0 - ms["stored"] / max(base["stored"], 1))
            rand_jobs += [Job(s, random_spec(round(rate, 4), seed), True) for seed in RANDOM_SEEDS]
        results += _run_jobs(rand_jobs, opts, "random arm")
    jobs_s = time.perf_counter() - t_jobs

    meta = {
        "data": str(opts.data), "conversations": [c.sample_id for c in ds.conversations],
        "questions": len(ds.questions), "streams": list(opts.streams), "arms": list(arms),
        "ks": list(_STATE["ks"]), "search": search, "search_default": default_search_mode(),
        "rendering": "dated", "sweep": opts.sweep, "jobs": opts.jobs, "cpu_count": os.cpu_count(),
        "python": platform.python_version(), "memsieve_gate": opts.memsieve_gate, "code": code,
        "trace_scope": _STATE["trace_scope"], "loader": asdict(ds.counts),
        "category_check": check_category_labels(ds.questions),
        "embedding": {**embed_info, "hits_in_arms": sum(r["embed_hits"] for r in results),
                      "misses_in_arms": sum(r["embed_misses"] for r in results)},
        "job_count": len(results), "jobs_s": round(jobs_s, 1),
    }
    summary, sweep = report.build(results, streams=opts.streams, arms=arms)
    rows_path = write_questions(out, results)
    meta["questions_file"] = rows_path.name
    meta["wall_s"] = round(time.perf_counter() - wall0, 1)
    report.write_all(out, summary=summary, sweep=sweep, meta=meta, results=results)
    meta["wall_s_with_plots"] = round(time.perf_counter() - wall0, 1)
    (out / "meta.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    return summary


def _find(results: list[dict[str, Any]], stream: str, spec: ArmSpec) -> dict[str, Any]:
    key = Job(stream, spec, True).key
    return next(r for r in results if r["key"] == key)


def write_questions(out: Path, results: list[dict[str, Any]]) -> Path:
    """questions.jsonl (gzipped when over ~30 MB): one row per question, arm, stream and seed."""
    lines = []
    for r in sorted((r for r in results if r.get("rows")), key=lambda r: (r["stream"], r["spec"]["arm"],
                                                                          r["spec"]["seed"])):
        spec = r["spec"]
        for row in r["rows"]:
            lines.append(json.dumps({"stream": r["stream"], "arm": spec["arm"], "label": spec["label"],
                                     "seed": spec["seed"] if spec["drop_rate"] is not None else None,
                                     **row}, ensure_ascii=False))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    for stale in ("questions.jsonl", "questions.jsonl.gz"):
        (out / stale).unlink(missing_ok=True)
    if len(data) > GZIP_ABOVE_BYTES:
        path = out / "questions.jsonl.gz"
        with gzip.GzipFile(path, "wb", mtime=0) as fh:
            fh.write(data)
    else:
        path = out / "questions.jsonl"
        path.write_bytes(data)
    return path


def _llm_config(opts: EvalOptions) -> Any:
    from memsieve.llm.client import LLMConfig

    if not opts.llm_base_url:
        raise ConfigError("the llm arm needs an endpoint; pass --llm-base-url http://127.0.0.1:8080/v1")
    return LLMConfig(base_url=opts.llm_base_url, model=opts.llm_model, api_key=opts.llm_api_key)


def _gate_overrides(text: str | None) -> dict[str, Any]:
    """``--memsieve-gate``'s KEY=VALUE pairs, each key a GateConfig option and the whole a valid GateConfig:
    checked here, before anything is embedded, not in a worker after it."""
    from dataclasses import fields

    from memsieve import GateConfig

    if not text:
        return {}
    out: dict[str, Any] = {}
    known = {f.name for f in fields(GateConfig)}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ConfigError(f"--memsieve-gate expects KEY=VALUE pairs, got {part!r}; e.g. gamma=0.6,kappa_c=4")
        if key.strip() not in known:
            raise ConfigError(f"--memsieve-gate names no GateConfig option {key.strip()!r}; use any of "
                              f"{', '.join(sorted(known))}")
        try:
            out[key.strip()] = int(value) if value.strip().isdigit() else float(value)
        except ValueError:
            out[key.strip()] = value.strip()
    GateConfig(**out)  # a ConfigError naming a bad value, now
    return out


def add_arguments(subparsers: Any) -> None:
    """Add ``locomo`` to ``memsieve eval``'s subparsers (see memsieve.eval.commands)."""
    p = subparsers.add_parser("locomo", help="LoCoMo: every arm on both write streams, with the sweep")
    p.add_argument("data", help="LoCoMo JSON file (e.g. locomo_dev.json), read in place")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--stream", choices=STREAMS, help="one write stream (both when omitted)")
    p.add_argument("--arms", default=",".join(MAIN_ARMS), help="comma-separated headline arms")
    p.add_argument("--k", default="5,10,20", help="recall cut-offs, comma-separated")
    p.add_argument("--conversations", help="sample_ids to keep, comma-separated")
    p.add_argument("--sweep", default="full", choices=list(GRIDS), help="sweep grid (default full)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    p.add_argument("--memsieve-gate", help="GateConfig overrides for the memsieve arm, e.g. gamma=0.6")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint: adds the LLM arm")
    p.add_argument("--llm-model", default="local", help="model name for the LLM arm")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the API key (default OPENAI_API_KEY)")
    p.add_argument("--trace-scope", help="conversation whose tau is plotted (default: the first)")
    p.add_argument("--embedding-cache", help="reuse vectors from/to this .npz across runs")
    p.add_argument("--search", metavar="MODE",
                   help=f"Memory.search mode for every question: one of {', '.join(search_modes())} "
                        f"(default: Memory.search's own, now {default_search_mode()})")
    p.add_argument("--retrieval", action="store_true",
                   help="instead of the arms: store everything and compare search modes (retrieval.md/.json)")
    p.add_argument("--modes", help="with --retrieval: modes to compare, comma-separated (default: all)")
    p.add_argument("--consolidate-min-sim", type=float, default=None,
                   help="min_sim of the +consolidate arms (default: Memory.consolidate's)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=main_locomo)


def main_locomo(args: argparse.Namespace) -> int:
    """Run ``eval locomo`` from parsed arguments; print where the results went."""
    check_out(args.out)
    try:
        ks = tuple(int(k) for k in str(args.k).split(",") if k.strip())
    except ValueError:
        raise ConfigError(f"--k expects integers like 5,10,20, got {args.k!r}") from None
    streams = (args.stream,) if args.stream else STREAMS
    conversations = [c.strip() for c in args.conversations.split(",")] if args.conversations else None
    if args.retrieval:
        return _main_retrieval(args, ks=ks, streams=streams, conversations=conversations)
    opts = EvalOptions(
        data=args.data, out=args.out, streams=streams,
        arms=tuple(a.strip() for a in args.arms.split(",") if a.strip()), ks=ks,
        conversations=conversations, sweep=args.sweep, jobs=max(1, args.jobs), memsieve_gate=_gate_overrides(args.memsieve_gate),
        llm_base_url=args.llm_base_url, llm_model=args.llm_model,
        llm_api_key=os.environ.get(args.llm_api_key_env, "not-needed"),
        trace_scope=args.trace_scope, embedding_cache=args.embedding_cache, search=args.search,
        progress=not args.no_progress, consolidate_min_sim=args.consolidate_min_sim,
    )
    run_locomo(opts)
    out = Path(opts.out)
    print((out / "summary.md").read_text().split("\n## ", 2)[0].strip())
    print(f"\nwrote {', '.join(sorted(p.name for p in out.iterdir()))} to {out}", file=sys.stderr)
    return 0


def _main_retrieval(args: argparse.Namespace, *, ks: tuple[int, ...], streams: tuple[str, ...],
                    conversations: list[str] | None) -> int:
    from memsieve.eval.retrieval import RetrievalOptions, run_retrieval

    if args.search and args.modes:
        raise ConfigError("--retrieval takes --modes (several) or --search (one), not both")
    wanted = args.modes or args.search
    modes = tuple(m.strip() for m in wanted.split(",") if m.strip()) if wanted else None
    run_retrieval(RetrievalOptions(data=args.data, out=args.out, streams=streams, modes=modes, ks=ks,
                                   conversations=conversations, embedding_cache=args.embedding_cache,
                                   progress=not args.no_progress))
    out = Path(args.out)
    print((out / "retrieval.md").read_text().split("\n## Stream", 1)[0].strip())
    print(f"\nwrote retrieval.md, retrieval.json to {out}", file=sys.stderr)
    return 0
