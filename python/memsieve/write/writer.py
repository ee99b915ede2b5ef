"""``Writer``: every write of a ``Memory``, each inside its scope's write lock.

``Memory`` checks the caller's input and hands it here. The writer embeds,
opens the scope's write transaction (``ScopeGates.write``: the store's
transaction and the scope's gate state, under the scope's lock) and lets the
stage that owns the rows change them: ``WritePath`` decides each candidate of
an ``add``, ``edits`` updates, deletes and restores, ``ForgetPath`` removes
what a request to forget names. Every candidate ends as one Decision and
every branch leaves its record (history row, rejection or fault).

The writer also owns the LLM client (built lazily from an ``LLMConfig``): only
writes call it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from memsieve.consolidation import Consolidator, Schedule
from memsieve.errors import ConfigError, MemsieveError, NotFoundError
from memsieve.gate.cache import ScopeGates
from memsieve.gate.config import GateConfig
from memsieve.inputs import now_iso
from memsieve.parts import LLM, is_llm_client
from memsieve.records import Decision, Forgotten, MemoryItem, Rejection
from memsieve.scope import Scope, check_owner
from memsieve.write import candidates as bulk, edits
from memsieve.write.forget import ForgetPath, Removal, forget_asked, forget_folds
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.write import purge as purging
from memsieve.write.forgetting import parse_request, parse_requests
from memsieve.write.infer import Pair, infer_candidates
from memsieve.text.passages import Part, embed_passages
from memsieve.write.path import Candidate, WritePath
from memsieve.write.retired import refuse_if_retired


def one_at_a_time(embed: Callable[[list[str]], np.ndarray], *,
                  shared: Callable[[], bool] = lambda: False) -> Callable[[list[str]], np.ndarray]:
    """``embed`` behind a lock: what the writes of one Memory embed with.

    ``Writer.add_many`` embeds its next batch on a second thread while the
    current one is decided, and deciding may embed too (a fold's swapped word
    read back, an LLM's UPDATE text, the text of an LLM merge in a scheduled
    consolidation); the lock keeps a caller's embedder from being called by two
    of them at once. An embedder that ``shared()`` says is safe across threads
    is called without it: a decision's few texts are embedded beside the batch
    ahead, not after all of it (benches/RESULTS.md, "The read-back beside the
    batch ahead").

    Args:
        embed: texts -> (n, d) float32 rows.
        shared: asked on every call (the embedder may load lazily) whether the
            embedder may be called from two threads at once.
    """
    lock = threading.Lock()

    def embed_one_call_at_a_time(texts: list[str]) -> np.ndarray:
        if shared():
            return embed(texts)
        with lock:
            return embed(texts)

    return embed_one_call_at_a_time


def _say_what_stays(exc: MemsieveError, committed: list[list[Decision]], *, total: int) -> None:
    """Tell ``exc``, raised by ``add_many`` after ``committed`` items' chunks were written, so.

    The caller learns what stays stored and where to go on: ``exc.committed`` (a count),
    ``exc.decisions`` (those items' decisions) and a note on the error.
    """
    n = len(committed)
    exc.committed = n  # type: ignore[attr-defined]
    exc.decisions = committed  # type: ignore[attr-defined]
    if n:
        exc.add_note(f"add_many committed items 0-{n - 1} of {total} before this error; they stay stored. "
                     f"Go on with items[{n}:] (the whole list again would find those {n} as exact duplicates "
                     "and record each as a rejection)")
    else:
        exc.add_note(f"add_many wrote none of its {total} items")


#: One item of ``add_many`` as memsieve.write.candidates.bulk_items reads it.
BulkItem = tuple[str, str | None, str | None, list[str], dict[str, Any]]


class Writer:
    """Carries out the writes of one ``Memory``.

    Args:
        store: the Memory's store (read outside transactions: dry runs, rejections).
        gates: the Memory's ``ScopeGates``, whose ``write`` opens a scope's transaction.
        config: the gate configuration.
        embed: embeds texts to (n, d) float32 unit rows (``Memory.embed`` through
            ``one_at_a_time``, shared with the consolidator).
        consolidator: runs the scheduled consolidations.
        schedule: says when a scope is due one (``consolidate_every``).
        llm: an ``LLMConfig``, a ready client (``memsieve.parts.LLM``), or None.
        lexicon: the language requests to forget are read in.
    """

    def __init__(self, store: Any, gates: ScopeGates, config: GateConfig, *,
                 embed: Callable[[list[str]], np.ndarray], consolidator: Consolidator, schedule: Schedule,
                 llm: Any = None, lexicon: Lexicon = ENGLISH) -> None:
        self.store = store
        self.lexicon = lexicon
        self.gates = gates
        self.config = config
        self.embed = embed
        self.consolidator = consolidator
        self.schedule = schedule
        self._llm_given = llm
        self._llm: LLM | None = llm if is_llm_client(llm) else None

    # ---- the LLM client --------------------------------------------------------

    @property
    def llm(self) -> LLM | None:
        """The LLM client, built on first use from the ``LLMConfig`` (None without one)."""
        if self._llm_given is None:
            return None
        if self._llm is None:
            from memsieve.llm import LLMClient

            self._llm = LLMClient(self._llm_given)  # refuses anything but an LLMConfig
        return self._llm

    @property
    def loaded_llm(self) -> LLM | None:
        """The LLM client if one is built already; reading it never builds one."""
        return self._llm

    # ---- add -------------------------------------------------------------------

    def add(self, scope: Scope, pairs: list[Pair], *, metadata: dict[str, Any], sources: list[str],
            valid_from: str | None, infer: bool, max_chars: int, replaces: Sequence[MemoryItem] = (),
            replace_reason: str = "") -> list[Decision]:
        """The decisions of one ``add`` call whose input is checked (see ``Memory.add``).

        ``replaces`` (memories of ``scope``) are soft-deleted in the transaction that decides the
        text, before it is gated: the text is embedded first, so a failing embedder, or any error
        after, leaves them as they were, and the gate never folds the text into what it replaces.
        """
        for item in replaces:
            if not item.is_active:
                self._refuse_if_retired(item, item.id, "replaced")
        forgotten: list[Decision] = []
        if infer:
            client = self.llm
            if client is None:
                raise ConfigError("infer=True needs an LLM; pass Memory(llm=LLMConfig(base_url=..., model=...))")
            forgotten, pairs = infer_candidates(pairs, client=client, max_chars=max_chars, lexicon=self.lexicon,
                                                forget_asked=lambda request: self.forget_asked(scope, request))
            if not pairs:
                return forgotten
        vectors, parts = self._embed([t for t, _ in pairs])
        cands = [bulk.candidate(text, role, valid_from, sources, metadata, vec, p)
                 for (text, role), vec, p in zip(pairs, vectors, parts)]

        def retire(tx: Any, gate: Any) -> None:
            now = now_iso()
            for item in replaces:
                edits.soft_delete_if_active(tx, gate, scope, item.id, reason=replace_reason, now=now)

        return forgotten + self._decide(scope, [cands], before=retire if replaces else None)[0]

    def add_many(self, scope: Scope, items: list[BulkItem], *, batch_size: int,
                 progress: Callable[[int], Any] | None) -> list[list[Decision]]:
        """One ``add`` per item, ``batch_size`` items per embedding call and transaction.

        The next batch is embedded on a second thread while this one decides
        the current batch (its gate, its transaction): a batch's vectors do
        not depend on what was decided before, and the cores the embedder
        uses would otherwise idle while the gate and the store work. Batches
        are still decided and committed in order, and an error raised by the
        embedding of batch i + 1 reaches the caller after batch i is committed,
        as it did when batches were embedded one after another.
        """
        chunks = [items[start:start + batch_size] for start in range(0, len(items), batch_size)]
        out: list[list[Decision]] = []
        embedded = self._embedded_ahead([[text for text, *_ in chunk] for chunk in chunks])
        try:
            for chunk, (vectors, parts) in zip(chunks, embedded):
                out += self._decide(scope, [[bulk.candidate(*item, vec, p)]
                                            for item, vec, p in zip(chunk, vectors, parts)])
                if progress is not None:
                    progress(len(out))
        except MemsieveError as exc:
            _say_what_stays(exc, out, total=len(items))
            raise
        return out

    def _embedded_ahead(self, batches: list[list[str]]) -> Iterator[tuple[np.ndarray, list[list[Part]]]]:
        """Each batch's vectors and parts, in order; batch i + 1 is embedded while the caller decides batch i.

        A single batch has nothing to overlap with and is embedded on the
        caller's thread, with no second thread started.
        """
        if len(batches) < 2:
            yield from (self._embed(batch) for batch in batches)
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memsieve-embed-ahead") as ahead:
            pending = ahead.submit(self._embed, batches[0])
            for nxt in [*batches[1:], None]:
                done = pending.result()
                if nxt is not None:
                    pending = ahead.submit(self._embed, nxt)
                yield done

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, list[list[Part]]]:
        """The texts' own vectors and their parts: passages of a long text, sentence keys of a short one."""
        return embed_passages(self.embed, texts, enabled=self.config.passages, keys=self.config.sentence_keys)

    def _embed_one(self, text: str) -> tuple[np.ndarray, list[Part]]:
        """One text's (d,) vector and its parts (an LLM's UPDATE text)."""
        vectors, parts = self._embed([text])
        return vectors[0], parts[0]

    def _decide(self, scope: Scope, calls: list[list[Candidate]], *,
                before: Callable[[Any, Any], None] | None = None) -> list[list[Decision]]:
        """Decide ``calls`` (each the candidates of one ``add()``) in one transaction, after
        ``before(tx, gate)`` (what an ``add`` replaces) when given."""
        dim = calls[0][0].vector.shape[0]
        crud, guard = self._crud_step()
        out = []
        with self.gates.write(scope, dim=dim) as (tx, gate):
            if before is not None:
                before(tx, gate)
            for cands in calls:
                gate.begin_call()
                path = WritePath(tx, scope, gate, self.config, crud=crud, guard=guard,
                                 embed_one=self._embed_one, embed=self.embed, now=now_iso())
                out.append([path.apply(c) for c in cands])
                gate.end_call()
        added = sum(d.event == "ADD" or d.added_id is not None for decisions in out for d in decisions)
        if self.schedule.note(scope, added):
            self.consolidator.run(scope)
        return out

    def _crud_step(self) -> tuple[Any, Any]:
        """The band's LLM step and its guard, or (None, None) for the deterministic band policy."""
        client = self.llm
        if client is None:
            return None, None
        from memsieve.llm import guard_destructive
        from memsieve.llm.crud import decide_crud

        return (lambda text, neighbours: decide_crud(client, text, neighbours)), guard_destructive  # type: ignore[arg-type]

    # ---- forgetting ------------------------------------------------------------

    def forget_asked(self, scope: Scope, request: str) -> list[Decision]:
        """A request to forget met with ``infer=True`` (see memsieve.write.forget.forget_asked)."""
        dim = self.gates.scope_dim(scope)
        if dim is None:
            return []
        query = parse_request(request, lexicon=self.lexicon)
        vector = self.embed([query.subject])[0]
        with self.gates.write(scope, dim=dim) as (tx, gate):
            return forget_asked(tx, gate, scope, request, query, vector, client=self.llm,
                                min_sim=self.config.crud_update_min_sim, now=now_iso())

    def forget(self, scope: Scope, what: str, *, purge: bool, dry_run: bool) -> Forgotten:
        """Remove (or, dry, only list) what ``what`` names in the scope (see ``Memory.forget``)."""
        dim = self.gates.scope_dim(scope)
        if dim is None:
            return Forgotten()
        queries = parse_requests(what, lexicon=self.lexicon)  # "my address and my job": two
        asked = list(zip(queries, self.embed([q.subject for q in queries])))
        if purge:  # every copy, inactive memories and retired members included (memsieve.write.purge)
            return Forgotten(purging.forget_purge(self.gates, self.store, scope, asked, dim=dim, dry_run=dry_run,
                                                  now=now_iso()))
        if dry_run:
            gate = self.gates.for_read(scope, dim=dim)
            if gate is None:
                return Forgotten()
            path = ForgetPath(self.store, gate, scope)
            folds = forget_folds(self.store, gate, scope, queries, now=None)
            return Forgotten([path.rows[f.seq] for f in path.named_all(asked)], folds=self._rejections(folds))
        with self.gates.write(scope, dim=dim) as (tx, gate):
            path = ForgetPath(tx, gate, scope)
            removals = [Removal(seq=f.seq, layer="forget", reason=f.reason) for f in path.named_all(asked)]
            now = now_iso()
            folds = forget_folds(tx, gate, scope, queries, now=now)
            done = path.remove(tx, removals, purge=purge, now=now)
        return Forgotten([self.store.get(d.memory_id) for d in done if d.memory_id is not None],
                         folds=self._rejections(folds))

    def _rejections(self, ids: list[str]) -> list[Rejection]:
        return [self.store.rejection(rejection_id)[0] for rejection_id in ids]

    def purge(self, item: MemoryItem, *, reason: str) -> purging.Erasure:
        """Erase one memory (checked to be the caller's) and what merges retired into it."""
        return purging.purge_by_id(self.gates, self.store, item, reason=reason, now=now_iso())

    # ---- the user's edits ----------------------------------------------------------

    def update(self, item: MemoryItem, memory_id: str, *, text: str, reason: str) -> None:
        """Replace the text of ``item`` (found by ``memory_id``); the old text goes to its history."""
        if not item.is_active:
            self._refuse_if_retired(item, memory_id, "updated")
        vectors, parts = self._embed([text])
        vec = vectors[0]
        scope = Scope(item.user_id, item.agent_id, item.run_id)
        with self.gates.write(scope, dim=vec.shape[0]) as (tx, gate):
            edits.update_text(tx, gate, scope, memory_id, text=text, vector=vec, reason=reason, now=now_iso(),
                              parts=parts[0])

    def delete(self, item: MemoryItem, memory_id: str, *, reason: str) -> None:
        """Soft-delete ``item`` unless it is inactive already (or became so meanwhile).

        Raises:
            MergeConflictError: a merge in force retired it: deleting it would
                do nothing, and undoing the merge would bring it back.
        """
        if not item.is_active:
            self._refuse_if_retired(item, memory_id, "deleted")
            return
        scope = Scope(item.user_id, item.agent_id, item.run_id)
        dim = self.gates.scope_dim(scope)
        assert dim is not None, "a scope with a memory has a width"
        with self.gates.write(scope, dim=dim) as (tx, gate):
            edits.soft_delete_if_active(tx, gate, scope, memory_id, reason=reason, now=now_iso())

    def _refuse_if_retired(self, item: MemoryItem, memory_id: str, done: str) -> None:
        """Raise MergeConflictError when a consolidation merge in force retired the memory."""
        refuse_if_retired(self.store.merges(Scope(item.user_id, item.agent_id, item.run_id)), memory_id, done)

    def restore(self, rejection_id: str, *, wanted: Scope | None) -> str:
        """Store a rejected candidate as a memory, bypassing the gate; return the memory's id.

        Raises:
            NotFoundError: no such rejection (in ``wanted``), or it was purged.
        """
        rejection, scope_key, valid_from = self.store.rejection(rejection_id)
        scope = Scope.from_key(scope_key)
        check_owner(scope, wanted, missing=NotFoundError.no_rejection(rejection_id))
        if rejection.restored_memory_id:
            if not self.store.get(rejection.restored_memory_id).text:  # only a purge empties a text
                raise NotFoundError(f"rejection {rejection_id!r} was restored as memory "
                                    f"{rejection.restored_memory_id!r}, which was purged since; add the text anew "
                                    "if it should be kept")
            return rejection.restored_memory_id
        if not rejection.text:
            raise NotFoundError(f"rejection {rejection_id!r} was purged and holds no text to restore; "
                                "add the text anew if it should be kept")
        vectors, parts = self._embed([rejection.text])
        vec = vectors[0]
        with self.gates.write(scope, dim=vec.shape[0]) as (tx, gate):
            return edits.restore_rejection(tx, gate, scope, rejection, vector=vec, valid_from=valid_from,
                                           now=now_iso(), parts=parts[0])
