"""``memsieve.Memory``: the public face of the store, the gate and the search."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memsieve.consolidation import ConsolidationReport, Consolidator, Schedule
from memsieve.errors import ClosedError, ConfigError, EmbedderError, NotFoundError, is_choice
from memsieve.gate.cache import DEFAULT_MAX_CACHE_BYTES, ScopeGates
from memsieve.gate.config import GateConfig
from memsieve.inputs import (MAX_TEXT_CHARS, candidate_texts, check_count, check_embedder, check_flag, check_layer,
                             check_limit, check_metadata, check_path, check_progress, check_real, check_record_id,
                             check_router, check_sources, check_text, iso_time)
from memsieve.parts import LLM, Reranker, Router, check_llm, merging_llm
from memsieve.plain import plain_arguments
from memsieve.read.fusion import Fusion
from memsieve.read.render import DEFAULT_DATE_FORMAT, DateFormat, Order, render_results
from memsieve.read.rerank import DEFAULT_RERANK_DEPTH, check_reranker
from memsieve.read.search import DEFAULT_VERSION_COS, SearchMode, Searcher
from memsieve.records import Decision, Forgotten, HistoryEntry, MemoryItem, Rejection, SearchResult
from memsieve.scope import Scope, check_owner, warn_unreachable_scopes
from memsieve.scoped import ScopedMemory
from memsieve.stats import scope_stats
from memsieve.store import default_store, open_store
from memsieve.store.base import check_durability
from memsieve.write import candidates as bulk
from memsieve.text.lexicon import ENGLISH, Lexicon, check_lexicon
from memsieve.write.purge import Erasure, erasure as erasure_of
from memsieve.write.writer import Writer, one_at_a_time

if TYPE_CHECKING:
    from memsieve.embedding.protocol import Embedder
    from memsieve.llm import LLMConfig


@plain_arguments
class Memory:
    """Long-term memory whose write path decides mostly by arithmetic.

    Args:
        path: SQLite file (created if missing), ``":memory:"``, a
            ``postgresql://`` URL, or None for ``memsieve.store.default_path()``.
        embedder: anything with ``dim`` and ``embed(texts) -> (n, dim) float32``
            (``memsieve.parts.Embedder``); None loads the packaged ONNX MiniLM
            lazily on first use.
        llm: an ``memsieve.llm.LLMConfig`` (a client is built on first use) or
            a ready client (``memsieve.parts.LLM``) for fact extraction and the
            band's CRUD step, or None (the band then follows ``gate.band_policy``).
        gate: the gate configuration; None for the defaults.
        max_text_chars: longest accepted candidate text.
        index_min_size: scopes with at least this many memories use an hnswlib
            index for search; smaller ones are scanned exactly by the Rust core
            (benches/bench_index.py: below 20k memories the exact scan answers
            in under a millisecond; the index is 3.6x faster at 20k with
            recall@10 0.996 and 12x at 50k with 0.93).
        router: a ``memsieve.router.QueryRouter`` for ``search(mode="auto")``.
        max_cache_bytes: bound of the in-process cache of scopes' gate state
            (vectors, thresholds, indexes); idle scopes are evicted least
            recently used first and re-read from the store when next touched.
        reranker: an optional ``memsieve.read.rerank.Reranker`` (for example a local
            cross-encoder) that rescores the first ``rerank_depth`` results of
            every search.
        rerank_depth: how many first-stage results the reranker rescores.
        fusion: how ``search(mode="hybrid")``, the default, fuses the dense and
            keyword rankings (``memsieve.read.fusion.Fusion``; its defaults were
            chosen on the LoCoMo dev split, see docs/EVALUATION.md).
        version_cos: retrieved memories at least this close (cosine) are
            versions of one fact, and the newest is ranked first
            (memsieve.read.versions); 1.0 groups only what the write path linked.
        consolidate_every: run ``consolidate`` on a scope after every this
            many memories stored in it by ``add`` (None or 0: never).
        durability: ``"normal"`` (a killed process loses nothing committed;
            a power loss can undo the last commits) or ``"full"`` (an fsync per
            commit on SQLite; see memsieve.store.base.DURABILITY).
        lexicon: the language memories are written in (``memsieve.text.lexicon.Lexicon``;
            English by default): the change cues and word rarity the gate
            reads, the cues and subjects freshness reads, the phrasings of a
            request to forget.
    """

    # Open until close(); a class default, so that a half-built instance (a refused option) is not
    # taken for a closed one.
    _closed = False

    def __init__(self, path: str | os.PathLike[str] | None = None, *, embedder: Embedder | None = None,
                 llm: LLMConfig | LLM | None = None, gate: GateConfig | None = None,
                 max_text_chars: int = MAX_TEXT_CHARS, index_min_size: int = 20_000, router: Router | None = None,
                 max_cache_bytes: int = DEFAULT_MAX_CACHE_BYTES, reranker: Reranker | None = None,
                 rerank_depth: int = DEFAULT_RERANK_DEPTH, fusion: Fusion | None = None,
                 version_cos: float = DEFAULT_VERSION_COS, consolidate_every: int | None = None,
                 durability: str = "normal", lexicon: Lexicon = ENGLISH) -> None:
        self.gate_config = gate or GateConfig()
        if not isinstance(self.gate_config, GateConfig):
            raise ConfigError(f"gate must be a GateConfig, got {type(gate).__name__}")
        reranker = check_reranker(reranker)
        if fusion is not None and not isinstance(fusion, Fusion):
            raise ConfigError(f"fusion must be a memsieve.read.fusion.Fusion, got {type(fusion).__name__}")
        depth = check_limit(rerank_depth, where="rerank_depth")
        schedule = Schedule(consolidate_every)
        self._embedder = check_embedder(embedder)
        self._embedder_lock = threading.Lock()
        self.max_text_chars = check_count(max_text_chars, name="max_text_chars")
        self._closed = False
        self.lexicon = check_lexicon(lexicon)
        self.router = check_router(router)
        durability = check_durability(durability)
        llm = check_llm(llm)
        version_cos = check_real(version_cos, name="version_cos", low=0.0, high=1.0)
        self.store = open_store(default_store() if path is None else check_path(path), durability=durability)
        try:
            warn_unreachable_scopes(self.store.scope_keys())
            self._gates = ScopeGates(self.store, self.gate_config, index_min_size=index_min_size,
                                     max_cache_bytes=max_cache_bytes, lexicon=self.lexicon)
        except BaseException:
            self.store.close()  # a refused option leaves no open file behind
            raise
        self._searcher = Searcher(self.store, self._gates, embed=self.embed, reranker=reranker,
                                  rerank_depth=depth or DEFAULT_RERANK_DEPTH, fusion=fusion,
                                  version_cos=version_cos,
                                  lexicon=self.lexicon)
        write_embed = one_at_a_time(self.embed, shared=self._embedder_shared)
        self._consolidator = Consolidator(self.store, self._gates, self.gate_config, write_embed)
        self._writer = Writer(self.store, self._gates, self.gate_config, embed=write_embed,
                              consolidator=self._consolidator, schedule=schedule, llm=llm, lexicon=self.lexicon)

    # ---- parts loaded lazily -------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                from memsieve.embedding import default_embedder

                self._embedder = default_embedder()
            return self._embedder

    @property
    def llm(self) -> LLM | None:
        """The LLM client (built on first use from ``llm=LLMConfig(...)``), or None without one."""
        return self._writer.llm

    def _embedder_shared(self) -> bool:
        """Whether the embedder may be called from two threads at once (the writes' lock is skipped)."""
        from memsieve.embedding import safe_across_threads

        return safe_across_threads(self.embedder)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts with the configured embedder and validate the output.

        Returns:
            (n, dim) float32, C-contiguous, rows of unit norm.
        """
        from memsieve.embedding import validate_embeddings
        from memsieve.embedding.onnx import validates_own_output

        self._check_open()  # before the work: add, update, restore and search embed first
        emb = self.embedder
        try:
            raw = emb.embed(list(texts))
        except EmbedderError:
            raise
        except Exception as exc:  # a custom embedder may raise anything
            raise EmbedderError(f"the embedder {type(emb).__name__} failed: {exc}") from exc
        if validates_own_output(emb):
            return raw
        return validate_embeddings(raw, len(texts), int(emb.dim))

    # ---- gate state ----------------------------------------------------------

    @property
    def gates(self) -> ScopeGates:
        """The cache of every scope's gate state (bounded by ``max_cache_bytes``)."""
        return self._gates

    def scope(self, *, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None) -> ScopedMemory:
        """This memory with one scope bound: ``ana = mem.scope(user_id="ana"); ana.add("...")``.

        The handle's methods are this class's without ``user_id``, ``agent_id``
        and ``run_id``, and decide exactly as the keyword calls do.

        Raises:
            ScopeError: no id is given or one is malformed; checked here, once.
            ClosedError: this memory is closed.
        """
        self._check_open()
        return ScopedMemory(self, Scope.of(user_id, agent_id, run_id))

    def _check_open(self) -> None:
        """Raise ClosedError after close(), before any argument is read (the store would say so too,
        but only once a call reached it)."""
        if self._closed:
            raise ClosedError()

    # ---- writing (memsieve.write.writer) -------------------------------------

    def add(self, messages_or_text: Any, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: dict[str, Any] | None = None, infer: bool = False,
            source: str | Sequence[str] | None = None, valid_from: Any = None, replaces: Sequence[str] = (),
            replace_reason: str = "replaced by a later add") -> list[Decision]:
        """Gate and store text; return one Decision per candidate.

        Args:
            messages_or_text: a string, a list of strings, or chat messages
                (``[{"role": "user", "content": "..."}]``). Each item is one
                candidate unless ``infer`` is set.
            user_id: scope id (at least one of the three is required).
            agent_id: scope id.
            run_id: scope id.
            metadata: JSON-serializable dict stored with each new memory.
            infer: extract facts with the LLM first (requires ``llm``).
            source: where the text came from (an id, or a list of ids); kept as
                provenance and folded into the nearest memory on a NOOP.
            valid_from: when the fact began to hold (datetime or ISO string).
            replaces: ids of memories of this scope the text takes the place of (a value put
                again under its key): soft-deleted in the transaction that decides the text,
                before it is gated, each with ``replace_reason`` in its history. Not with ``infer``.
            replace_reason: why they were deleted, for their history.

        Raises:
            ScopeError, InvalidTextError: bad input; nothing is written.
            NotFoundError: an id of ``replaces`` is no memory of this scope; nothing is written.
            EmbedderError: the embedder failed; nothing is written.
            LLMError: fact extraction failed (``infer=True``); nothing is written.
        """
        scope = Scope.of(user_id, agent_id, run_id)
        infer = check_flag(infer, where="infer")
        replaced = [self.get(i, user_id=user_id, agent_id=agent_id, run_id=run_id)
                    for i in bulk.check_replaces(replaces, infer=infer)]
        replace_reason = check_text(replace_reason, where="replace_reason")
        pairs = candidate_texts(messages_or_text, max_chars=self.max_text_chars)
        meta = bulk.check_shared_metadata(check_metadata(metadata), count=len(pairs))
        for k, (_, role) in enumerate(pairs):
            bulk.check_role_clash(role, meta, where=f"message {k}")
        return self._writer.add(scope, pairs, metadata=meta, sources=check_sources(source),
                                valid_from=iso_time(valid_from, where="valid_from", keep_offset=True), infer=infer,
                                max_chars=self.max_text_chars, replaces=replaced, replace_reason=replace_reason)

    def add_many(self, items: Sequence[Any], *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, metadata: dict[str, Any] | None = None, batch_size: int = 256,
                 progress: Any = None) -> list[list[Decision]]:
        """Bulk ingest: one ``add()`` per item, decided the same, embedded and committed in chunks.

        Every item gets exactly the decisions its own ``add(item)`` call would
        get in this order (the gate, the exact-dedup lookup and the band see
        every earlier item); only the work is batched: ``batch_size`` texts per
        embedding call and per write transaction. A crash loses at most the
        chunk being written; the chunks before it are committed. The next
        chunk is embedded on a second thread while the current one is decided
        (the embedder is never called by two threads at once).

        Args:
            items: texts, or mappings with ``content`` (or ``text``) and
                optionally ``role``, ``valid_from``, ``source`` and
                ``metadata`` (see memsieve.write.candidates).
            metadata: stored with every item (an item's own keys win).
            batch_size: items per embedding call and per transaction (1 to 4096).
            progress: called with the number of items done after each chunk.

        Returns:
            One list of Decisions per item, in order.

        Raises:
            ScopeError, InvalidTextError, InvalidInputError: a bad item (named by
                index); nothing is written.
            EmbedderError: the embedder failed on a chunk; the chunks before
                it are committed, nothing of it or after it is written.
            CallbackError: ``progress`` raised; as for EmbedderError, the
                chunks before the call stay committed.

            An error raised once the work began carries ``committed`` (how many
            items, from the first, stay stored), ``decisions`` (theirs) and a
            note saying so: go on with ``items[err.committed:]``.
        """
        scope = Scope.of(user_id, agent_id, run_id)
        size = check_count(batch_size, name="batch_size")
        if size > 4096:
            raise ConfigError(f"batch_size must be at most 4096, got {size}; 256 is a good size")
        parsed = bulk.bulk_items(items, metadata=check_metadata(metadata), max_chars=self.max_text_chars)
        return self._writer.add_many(scope, parsed, batch_size=size,
                                     progress=check_progress(
                                         progress, takes="a count",
                                         after="the chunks before this call are committed and stay stored "
                                               "(add_many commits chunk by chunk); the items after them were "
                                               "not added"))

    def update(self, memory_id: str, text: str, *, reason: str = "updated by the user", user_id: str | None = None,
               agent_id: str | None = None, run_id: str | None = None) -> MemoryItem:
        """Replace a memory's text; the old text stays in its history.

        With a scope (``user_id=``, ``agent_id=``, ``run_id=``), a memory of any
        other scope is reported as missing (see ``get``).
        """
        item = self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        text = check_text(text, where="text", max_chars=self.max_text_chars)
        self._writer.update(item, memory_id, text=text, reason=check_text(reason, where="reason"))
        return self.get(memory_id)

    def delete(self, memory_id: str, *, reason: str = "deleted by the user", user_id: str | None = None,
               agent_id: str | None = None, run_id: str | None = None) -> MemoryItem:
        """Soft-delete a memory: it leaves search and the gate, and stays readable with get().

        With a scope, a memory of any other scope is reported as missing (see ``get``).
        """
        item = self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        self._writer.delete(item, memory_id, reason=check_text(reason, where="reason"))
        return self.get(memory_id) if item.is_active else item

    def forget(self, what: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, purge: bool = False, dry_run: bool = False) -> Forgotten:
        """Find the memories of one scope that a request names, and remove them.

        ``what`` may be the user's own words ("please forget my old address"): the
        rest matched as memsieve.write.forgetting describes (rare words decide; "old"
        spares the newest version; a fact named without a value takes its linked
        versions). Without ``purge`` each memory is
        soft-deleted with a history row saying why; with ``purge`` its text and
        embedding are erased from the memory, its versions, its history, the
        rejections folded into it and the indexes, leaving a tombstone, and the
        database file keeps no copy (SQLite; PostgreSQL after its VACUUM).

        Args:
            what: the request, or just what to forget.
            purge: erase instead of soft-deleting.
            dry_run: only list what would be removed.

        A text the gate folded into a memory, which search shows beside it, is taken out of
        search when the request names its words, whether or not its memory is named too; its
        record stays, with ``forgotten_at`` (``Rejection``).

        Returns:
            The memories removed (or that would be), as they are afterwards: a list, whose
            ``folds`` are the folded texts named (``Forgotten``). A request that names only
            folded texts returns an empty list with its ``folds``.
        """
        scope = Scope.of(user_id, agent_id, run_id)
        what = check_text(what, where="what", max_chars=self.max_text_chars)
        purge, dry_run = check_flag(purge, where="purge"), check_flag(dry_run, where="dry_run")
        return self._writer.forget(scope, what, purge=purge, dry_run=dry_run)

    def purge(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None, reason: str = "purged by the user") -> Erasure:
        """Erase one memory's text and embedding everywhere, active or not, and every memory merges retired
        into it (memsieve.write.purge), leaving tombstones; scope-checked as in ``get``.

        Returns:
            An ``Erasure``: the ids erased, and ``pending``/``why`` if some bytes
            may still be in the files (see ``finish_erasure`` and ``compact``).
        """
        item = self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        return self._writer.purge(item, reason=check_text(reason, where="reason"))

    def finish_erasure(self, *, wait: float = 0.0) -> Erasure:
        """Finish what purges left pending, if the store can cheaply, and say what still is.

        SQLite: the TRUNCATE checkpoint, waiting up to ``wait`` seconds for other
        connections' reads. PostgreSQL: only reports; ``compact()`` finishes.
        """
        wait = check_real(wait, name="wait", what="a number of seconds", low=0.0)
        self.store.finish_erasure(wait=wait)
        return erasure_of(self.store)

    def compact(self) -> Erasure:
        """Rewrite the store so no byte of a purged text stays (PostgreSQL: ``VACUUM FULL`` of the tables a
        purge erases from, locking each ACCESS EXCLUSIVE while it is rewritten: reads and writes of it wait;
        then ``CHECKPOINT``). SQLite: ``finish_erasure`` waiting up to the store's timeout."""
        self.store.compact()
        return erasure_of(self.store)

    def restore(self, rejection_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None) -> MemoryItem:
        """Store a rejected candidate as a memory after all, bypassing the gate.

        With a scope, a rejection of any other scope is reported as missing:
        NotFoundError with the message of an unknown id.
        """
        wanted = Scope.optional(user_id, agent_id, run_id)
        return self.get(self._writer.restore(check_record_id(rejection_id, kind="rejection"), wanted=wanted))

    # ---- consolidation (memsieve.consolidation) ------------------------------

    def consolidate(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                    dry_run: bool = False, min_sim: float | None = None, llm: Any = None,
                    progress: Any = None, max_seconds: float | None = None) -> ConsolidationReport:
        """Merge the scope's duplicates and close its older versions, undoably.

        Takes the scope's write lock; members leave search and the gate, stay
        readable with get() and history(), and come back with
        ``unconsolidate(merge_id)``.

        Args:
            dry_run: only list the clusters, proposed texts and reasons.
            min_sim: the cosine two members must have (None: 0.7).
            llm: an ``memsieve.llm.LLMConfig`` or ``LLMClient`` to write one
                merged text per cluster (guarded; see memsieve.consolidation.llm_merge).
            progress: called with (clusters done, clusters) as merges are made.
            max_seconds: begin no new cluster past this many seconds from the call (None: no
                bound). The first cluster is always weighed; the merges made are kept, and
                the report says ``complete=False`` and how many clusters are left for the next
                run. Finding the clusters is not cut short (about 7 s for 50,000 memories,
                benches/RESULTS.md), nor is an LLM call under way.
        """
        scope = Scope.of(user_id, agent_id, run_id)
        return self._consolidator.run(scope, dry_run=check_flag(dry_run, where="dry_run"), min_sim=min_sim,
                                        llm=merging_llm(llm),
                                        max_seconds=max_seconds,
                                        progress=check_progress(
                                            progress, takes="(clusters done, clusters)", args=2,
                                            after="the consolidation was rolled back: nothing was merged"))

    def unconsolidate(self, merge_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                      run_id: str | None = None) -> list[MemoryItem]:
        """Undo one merge: its members are active again as they were; returns them.

        A retired member purged since stays erased, and the others come back.

        Raises:
            NotFoundError: no merge has this id (in the scope given, if any).
            MergeConflictError: it was undone already, a member changed since, or
                every retired member (or the kept one) was purged.
        """
        revived = self._consolidator.undo(merge_id, wanted=Scope.optional(user_id, agent_id, run_id))
        return [self.store.get(i) for i in revived]

    def merges(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
               include_undone: bool = False) -> list[Any]:
        """The scope's merges (``memsieve.store.base.MergeRow``), oldest first; undone ones with ``include_undone``."""
        return self.store.merges(Scope.of(user_id, agent_id, run_id),
                                 include_undone=check_flag(include_undone, where="include_undone"))

    # ---- reading -------------------------------------------------------------

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 10, filters: dict[str, Any] | None = None,
               as_of: Any = None, mode: SearchMode = "hybrid", current_only: bool = False,
               reference_time: Any = None) -> list[SearchResult]:
        """Find the memories of one scope that best match ``query``.

        Args:
            query: the question or text to match.
            limit: how many results, at most.
            filters: metadata equality filters, e.g. ``{"role": "user"}``.
            as_of: a time (datetime or ISO string): search what the store knew
                and what held then, including memories deleted since.
            mode: ``"hybrid"`` (the default: the dense and keyword rankings
                fused as ``fusion`` says), ``"dense"`` (embeddings),
                ``"keyword"`` (the scope's own bm25 index) or ``"auto"`` (the
                calibrated router picks one per query; needs ``router``).
            current_only: leave out older versions of a fact whose newer
                version is among the results (they are otherwise listed right
                after it, with ``superseded_by`` set). Meant for stores of facts:
                in a chat's history, alike words of one speaker in two sessions
                count as versions (docs/UPDATES.md, "Versions in a chat").
            reference_time: the query's "now" (datetime or ISO string; None: the
                call's time), against which its time words are read: memories
                dated inside "last month", "two weeks ago", "in March" rank
                higher (a boost, never a filter), and "first" / "originally"
                list a fact's oldest version first ("most recent", like no
                word, its newest). Without it a window is used only when it
                names its year or the memories found reach the last 180 days
                (memsieve.read.when; docs/NOW.md).
        """
        scope = Scope.of(user_id, agent_id, run_id)
        query = check_text(query, where="query", max_chars=self.max_text_chars)
        limit = check_limit(limit)
        vector = None
        if is_choice(mode, ("auto",)):
            if self.router is None:
                raise ConfigError("mode='auto' needs a router; pass Memory(router=QueryRouter.load(path))")
            vector = self.embed([query])[0]
            mode = self.router.decide(query, vector).backend
        return self._searcher.search(scope, query, limit=limit, filters=check_metadata(filters, where="filters"),
                                     as_of=iso_time(as_of, where="as_of"), mode=mode, vector=vector,
                                     current_only=check_flag(current_only, where="current_only"),
                                     reference_time=iso_time(reference_time, where="reference_time",
                                                                     keep_offset=True))

    def context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None, limit: int = 10, filters: dict[str, Any] | None = None,
                as_of: Any = None, mode: SearchMode | None = None, order: Order = "relevance",
                dated: bool = True, current_only: bool = False,
                date_format: DateFormat = DEFAULT_DATE_FORMAT, reference_time: Any = None) -> str:
        """Search, then render the results as prompt text, one dated line per memory.

        ``[2023-05-08] Caroline: I went to the support group yesterday.``: the
        date is the memory's ``valid_from``, so a text that says "yesterday"
        can be resolved by the reader.

        Args:
            query: the question to answer.
            limit: how many memories, at most.
            filters: metadata equality filters, as in ``search``.
            as_of: a point in time, as in ``search``.
            mode: the search mode; None for ``search``'s default.
            order: ``"relevance"`` (best first) or ``"time"`` (oldest first).
            dated: prefix each line with its date.
            date_format: ``"iso"`` (``[2023-05-08]``) or ``"long"`` (``[8 May 2023]``).
            current_only: leave out older versions of a fact (see ``search``).
            reference_time: the query's "now" (see ``search``).

        Returns:
            The lines joined by newlines; an empty string when nothing matches.
        """
        kwargs: dict[str, Any] = {} if mode is None else {"mode": mode}
        results = self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit,
                              filters=filters, as_of=as_of, current_only=current_only,
                              reference_time=reference_time, **kwargs)
        return render_results(results, order=order, dated=check_flag(dated, where="dated"), date_format=date_format)

    def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None) -> MemoryItem:
        """The memory with this id, active or deleted.

        Without a scope any memory of the store is returned. With one
        (``user_id=``, ``agent_id=``, ``run_id=``) the memory must belong to
        exactly that (user, agent, run) triple; otherwise NotFoundError is
        raised with the same message as for an unknown id, so a caller holding
        one scope learns nothing about another. ``update``, ``delete``,
        ``history`` and ``restore`` take the same optional scope.

        Raises:
            NotFoundError: no such memory (in that scope), or ``memory_id`` is not a str.
            ScopeError: a scope id is malformed.
        """
        self._check_open()
        wanted = Scope.optional(user_id, agent_id, run_id)
        item = self.store.get(check_record_id(memory_id))
        check_owner(Scope(item.user_id, item.agent_id, item.run_id), wanted,
                    missing=NotFoundError.no_memory(memory_id))
        return item

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                include_inactive: bool = False, limit: int | None = None) -> list[MemoryItem]:
        return self.store.get_all(Scope.of(user_id, agent_id, run_id),
                                  include_inactive=check_flag(include_inactive, where="include_inactive"),
                                  limit=check_limit(limit, optional=True))

    def history(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None) -> list[HistoryEntry]:
        """Every change of a memory, oldest first; with a scope, as in ``get``."""
        self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        return self.store.history(memory_id)

    def links(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None) -> list[tuple[str, str, float | None]]:
        """(other memory id, kind, cosine) of every link touching this memory; with a scope, as in ``get``."""
        # An unknown id is a NotFoundError, as for get() and history(), not an empty list.
        self.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        return self.store.links(check_record_id(memory_id))

    def rejections(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                   since: Any = None, layer: str | None = None, limit: int | None = None) -> list[Rejection]:
        return self.store.rejections(Scope.of(user_id, agent_id, run_id), since=iso_time(since, where="since"),
                                     layer=check_layer(layer), limit=check_limit(limit, optional=True))

    def faults(self, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None) -> list[dict[str, Any]]:
        """LLM faults recorded in this scope (bad JSON, wrong index, guard rejections, ...)."""
        return self.store.faults(Scope.of(user_id, agent_id, run_id))

    def scopes(self) -> list[Scope]:
        """Every scope the store holds (written to at least once), sorted by key."""
        return [Scope.from_key(k) for k in self.store.scope_keys()]

    def stats(self, *, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None) -> dict[str, Any]:
        """Counts per event and layer, store size, and the gate's current tau and kappa."""
        scope = Scope.of(user_id, agent_id, run_id)
        gate = self._gates.peek(scope) or self._gates.for_read(scope)
        return scope_stats(self.store, gate, self.gate_config, scope, embedder=self._embedder,
                           llm=self._writer.loaded_llm)

    def gate_trace(self, *, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> list[tuple[int, float, float]]:
        """(memories, tau, kappa) after each add() call of this process (the last 10,000), for plotting tau
        over time."""
        self._check_open()  # the only call that reads no store
        gate = self._gates.peek(Scope.of(user_id, agent_id, run_id))
        return list(gate.trace) if gate else []

    def close(self) -> None:
        """Persist search indexes and close the database; every later call raises ClosedError."""
        self._closed = True
        self._gates.close()
        self.store.close()

    def __enter__(self) -> "Memory":
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
