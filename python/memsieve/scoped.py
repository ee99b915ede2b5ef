"""``ScopedMemory``: a ``Memory`` with one scope bound, so no call repeats the ids.

An agent serving one user passes the same ``user_id=`` (and perhaps
``agent_id=``, ``run_id=``) to every call. ``mem.scope(user_id="ana")``
checks those ids once and returns a handle whose methods take none::

    ana = mem.scope(user_id="ana")
    ana.add("I moved to Lisbon")
    ana.search("where does ana live")

Each method is the ``Memory`` method of the same name called with the bound
ids, so it decides, returns and raises exactly as the keyword call would.
By-id calls (``get``, ``update``, ``delete``, ``history``, ``links``,
``restore``, ``unconsolidate``) refuse the id of another scope's record with
the NotFoundError an unknown id gets, as ``Memory.get(id, user_id=...)`` does.
The handle holds no state of its own: any number of handles (and keyword
calls) may share one ``Memory``, and closing the ``Memory`` closes them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memsieve.consolidation import ConsolidationReport
from memsieve.plain import plain_arguments
from memsieve.read.render import DEFAULT_DATE_FORMAT, DateFormat, Order
from memsieve.read.search import SearchMode
from memsieve.records import Decision, Forgotten, HistoryEntry, MemoryItem, Rejection, SearchResult
from memsieve.scope import Scope


@plain_arguments
class ScopedMemory:
    """One scope of a ``Memory``; made by ``Memory.scope(user_id=..., agent_id=..., run_id=...)``.

    Args:
        memory: the ``memsieve.Memory`` (typed ``Any`` here: naming the class
            would tie this module and memsieve.memory, which makes handles, in
            a circle; only its public methods are called).
        scope: the scope, built by ``Scope.of`` (validated and normalized).
    """

    def __init__(self, memory: Any, scope: Scope) -> None:
        self._memory = memory
        self._scope = scope
        self._ids = scope.as_dict()

    @property
    def memory(self) -> Any:
        """The ``Memory`` this handle calls."""
        return self._memory

    @property
    def scope(self) -> Scope:
        """The bound scope (its ids normalized)."""
        return self._scope

    def __repr__(self) -> str:
        ids = ", ".join(f"{k}={v!r}" for k, v in self._ids.items() if v is not None)
        return f"ScopedMemory({ids})"

    # ---- writing ---------------------------------------------------------------

    def add(self, messages_or_text: Any, *, metadata: dict[str, Any] | None = None, infer: bool = False,
            source: str | Sequence[str] | None = None, valid_from: Any = None, replaces: Sequence[str] = (),
            replace_reason: str = "replaced by a later add") -> list[Decision]:
        """``Memory.add`` in this scope: gate and store text, one Decision per candidate."""
        return self._memory.add(messages_or_text, metadata=metadata, infer=infer, source=source,
                                valid_from=valid_from, replaces=replaces, replace_reason=replace_reason,
                                **self._ids)

    def add_many(self, items: Sequence[Any], *, metadata: dict[str, Any] | None = None, batch_size: int = 256,
                 progress: Callable[[int], Any] | None = None) -> list[list[Decision]]:
        """``Memory.add_many`` in this scope: one ``add()`` per item, in chunks."""
        return self._memory.add_many(items, metadata=metadata, batch_size=batch_size, progress=progress,
                                     **self._ids)

    def update(self, memory_id: str, text: str, *, reason: str = "updated by the user") -> MemoryItem:
        """``Memory.update`` of a memory of this scope (another scope's id is not found)."""
        return self._memory.update(memory_id, text, reason=reason, **self._ids)

    def delete(self, memory_id: str, *, reason: str = "deleted by the user") -> MemoryItem:
        """``Memory.delete`` of a memory of this scope (another scope's id is not found)."""
        return self._memory.delete(memory_id, reason=reason, **self._ids)

    def forget(self, what: str, *, purge: bool = False, dry_run: bool = False) -> Forgotten:
        """``Memory.forget`` in this scope: remove the memories a request names."""
        return self._memory.forget(what, purge=purge, dry_run=dry_run, **self._ids)

    def purge(self, memory_id: str, *, reason: str = "purged by the user") -> Any:
        """``Memory.purge`` of a memory of this scope (another scope's id is not found): an ``Erasure``."""
        return self._memory.purge(memory_id, reason=reason, **self._ids)

    def restore(self, rejection_id: str) -> MemoryItem:
        """``Memory.restore`` of a rejection of this scope (another scope's id is not found)."""
        return self._memory.restore(rejection_id, **self._ids)

    # ---- consolidation ---------------------------------------------------------

    def consolidate(self, *, dry_run: bool = False, min_sim: float | None = None, llm: Any = None,
                    progress: Callable[[int, int], Any] | None = None,
                    max_seconds: float | None = None) -> ConsolidationReport:
        """``Memory.consolidate`` of this scope: merge duplicates, close older versions, undoably."""
        return self._memory.consolidate(dry_run=dry_run, min_sim=min_sim, llm=llm, progress=progress,
                                        max_seconds=max_seconds, **self._ids)

    def unconsolidate(self, merge_id: str) -> list[MemoryItem]:
        """``Memory.unconsolidate`` of a merge of this scope (another scope's id is not found)."""
        return self._memory.unconsolidate(merge_id, **self._ids)

    def merges(self, *, include_undone: bool = False) -> list[Any]:
        """``Memory.merges`` of this scope, oldest first."""
        return self._memory.merges(include_undone=include_undone, **self._ids)

    # ---- reading ---------------------------------------------------------------

    def search(self, query: str, *, limit: int = 10, filters: dict[str, Any] | None = None, as_of: Any = None,
               mode: SearchMode = "hybrid", current_only: bool = False,
               reference_time: Any = None) -> list[SearchResult]:
        """``Memory.search`` in this scope: the memories that best match ``query``."""
        return self._memory.search(query, limit=limit, filters=filters, as_of=as_of, mode=mode,
                                   current_only=current_only, reference_time=reference_time, **self._ids)

    def context(self, query: str, *, limit: int = 10, filters: dict[str, Any] | None = None, as_of: Any = None,
                mode: SearchMode | None = None, order: Order = "relevance", dated: bool = True,
                current_only: bool = False, date_format: DateFormat = DEFAULT_DATE_FORMAT,
                reference_time: Any = None) -> str:
        """``Memory.context`` in this scope: search, rendered as prompt text."""
        return self._memory.context(query, limit=limit, filters=filters, as_of=as_of, mode=mode, order=order,
                                    dated=dated, current_only=current_only, date_format=date_format,
                                    reference_time=reference_time, **self._ids)

    def get(self, memory_id: str) -> MemoryItem:
        """``Memory.get`` of a memory of this scope, active or deleted (another scope's id is not found)."""
        return self._memory.get(memory_id, **self._ids)

    def get_all(self, *, include_inactive: bool = False, limit: int | None = None) -> list[MemoryItem]:
        """``Memory.get_all`` of this scope."""
        return self._memory.get_all(include_inactive=include_inactive, limit=limit, **self._ids)

    def history(self, memory_id: str) -> list[HistoryEntry]:
        """``Memory.history`` of a memory of this scope, oldest first."""
        return self._memory.history(memory_id, **self._ids)

    def links(self, memory_id: str) -> list[tuple[str, str, float | None]]:
        """``Memory.links`` of a memory of this scope (another scope's id is not found)."""
        return self._memory.links(memory_id, **self._ids)

    def rejections(self, *, since: Any = None, layer: str | None = None,
                   limit: int | None = None) -> list[Rejection]:
        """``Memory.rejections`` of this scope."""
        return self._memory.rejections(since=since, layer=layer, limit=limit, **self._ids)

    def faults(self) -> list[dict[str, Any]]:
        """``Memory.faults`` of this scope: the LLM faults recorded."""
        return self._memory.faults(**self._ids)

    def stats(self) -> dict[str, Any]:
        """``Memory.stats`` of this scope: counts, store size, the gate's tau and kappa."""
        return self._memory.stats(**self._ids)

    def gate_trace(self) -> list[tuple[int, float, float]]:
        """``Memory.gate_trace`` of this scope: (memories, tau, kappa) after each add() of this process."""
        return self._memory.gate_trace(**self._ids)
