"""``Consolidator``: one scope's consolidation run, and its undo, under the scope's write lock.

A run reads the scope's active memories and its gate (for the terms and IDF
of the information term), finds the clusters (plan.py), optionally asks an
LLM for merged texts (llm_merge.py), and writes each merge (apply.py). The
write happens inside ``ScopeGates.write``, the same transaction and lock the
write path takes, so a live writer waits for the run and then sees its
result, and the cached gate follows the new active set. A dry run reads the
same state outside any transaction and writes nothing.
"""

from __future__ import annotations

import numbers
import time

from collections.abc import Callable
from typing import Any

import numpy as np

from memsieve.gate.config import GateConfig
from memsieve.consolidation.apply import MergeWriter
from memsieve.consolidation.candidates import check_max_seconds, check_min_sim
from memsieve.consolidation.information import TermView
from memsieve.consolidation.llm_merge import LLMMerger
from memsieve.consolidation.plan import Cluster, ConsolidationReport, Merge, plan_clusters
from memsieve.errors import NotFoundError, StateError, short_repr
from memsieve.inputs import is_storable_id, now_iso
from memsieve.scope import Scope, check_owner
from memsieve.text.passages import Part, text_parts

Progress = Callable[[int, int], None]


#: How many times a dry run reads a scope that writes keep changing under it before it gives up.
DRY_RUN_ATTEMPTS = 3


class Consolidator:
    """Consolidates the scopes of one store.

    Args:
        store: the Memory's store.
        gates: the Memory's ``ScopeGates``.
        config: the gate configuration (the information term's weights and ``info_tau``).
        embed: embeds texts to (n, d) float32 unit rows (for LLM-merged texts).
    """

    def __init__(self, store: Any, gates: Any, config: GateConfig,
                 embed: Callable[[list[str]], np.ndarray]) -> None:
        self.store = store
        self.gates = gates
        self.config = config
        self.embed = embed

    def _split(self, text: str) -> list[Part]:
        """The parts of a text the kept member of a merge takes, as the write path would cut them."""
        return text_parts(self.embed, text, enabled=self.config.passages, keys=self.config.sentence_keys)

    def run(self, scope: Scope, *, dry_run: bool = False, min_sim: float | None = None, llm: Any = None,
            progress: Progress | None = None, max_seconds: float | None = None) -> ConsolidationReport:
        """Consolidate one scope (see ``Memory.consolidate``)."""
        sim = check_min_sim(min_sim)
        budget = check_max_seconds(max_seconds)
        # The clock starts before the write lock is taken: a run that waited for writers has spent that time.
        deadline = None if budget is None else time.monotonic() + budget
        merger = LLMMerger(llm, lambda t: self.embed([t])[0]) if llm is not None else None
        dim = self.gates.scope_dim(scope)
        if dim is None:
            return ConsolidationReport(scope=scope.as_dict(), dry_run=dry_run, min_sim=sim, active_before=0,
                                       active_after=0, pairs=0)
        if dry_run:
            # Read beside writers, not under the scope's write lock: a memory a write removes between
            # reading the rows and weighing them is a changed scope, read again (the report is advice).
            for attempt in range(DRY_RUN_ATTEMPTS):
                gate = self.gates.for_read(scope, dim=dim)
                try:
                    return self._pass(self.store, gate, scope, dim, sim, merger, None, progress, deadline)
                except StateError:
                    if attempt + 1 == DRY_RUN_ATTEMPTS:
                        raise StateError(f"the scope changed under the dry run {DRY_RUN_ATTEMPTS} times "
                                         "(other writes removed memories it was weighing); run it again when "
                                         "fewer writes run, or without dry_run") from None
        with self.gates.write(scope, dim=dim) as (tx, gate):
            return self._pass(tx, gate, scope, dim, sim, merger, MergeWriter(tx, gate, scope, now=now_iso(), split=self._split),
                              progress, deadline)

    def _pass(self, reader: Any, gate: Any, scope: Scope, dim: int, min_sim: float, merger: LLMMerger | None,
              writer: MergeWriter | None, progress: Progress | None, deadline: float | None) -> ConsolidationReport:
        rows = reader.scope_vectors(scope, dim)
        items = reader.items_for_seqs([int(s) for s in rows.seqs])
        clusters, npairs, pairs_left = plan_clusters(rows.seqs, rows.matrix, items, TermView(gate, self.config),
                                                     min_sim=min_sim, deadline=deadline)
        merges: list[Merge] = []
        refused: list[Merge] = []
        retired = 0
        left = 0
        for k, cluster in enumerate(clusters):
            # Past the deadline no new cluster is begun (one at least is, so that runs make headway);
            # the merges made so far are kept and the rest wait for the next run.
            if deadline is not None and k > 0 and time.monotonic() >= deadline:
                left = len(clusters) - k
                break
            reason = cluster.reason(min_sim)
            text, vector = cluster.kept.item.text, None
            if merger is not None:
                out = merger.merge(cluster, marks=gate.lexicon.marks)
                if out.refused is not None:
                    refused.append(self._entry(cluster, None, text, f"LLM merge refused: {out.refused}", "refused"))
                    if writer is not None:
                        writer.tx.add_fault(scope, kind="consolidation_refused", detail=out.refused, raw=out.raw,
                                            now=writer.now)
                else:
                    text, vector, reason = str(out.text), out.vector, f"{reason}; text merged by the LLM"
            if merger is None or vector is not None:
                merge_id = writer.merge(cluster, reason=reason, text=text, vector=vector) if writer else None
                merges.append(self._entry(cluster, merge_id, text, reason, "merged" if writer else "proposed"))
                retired += len(cluster.retired)
            if progress is not None:
                progress(k + 1, len(clusters))
        return ConsolidationReport(scope=scope.as_dict(), dry_run=writer is None, min_sim=min_sim,
                                   active_before=len(rows.seqs), active_after=len(rows.seqs) - retired,
                                   pairs=npairs, merges=merges, refused=refused,
                                   complete=left == 0 and pairs_left == 0, clusters_left=left, pairs_left=pairs_left)

    @staticmethod
    def _entry(cluster: Cluster, merge_id: str | None, text: str, reason: str, status: str) -> Merge:
        return Merge(id=merge_id, kind=cluster.kind, member_ids=[m.item.id for m in cluster.members],
                     kept_id=cluster.kept.item.id, text=text, reason=reason, status=status)

    def undo(self, merge_id: str, *, wanted: Scope | None = None) -> list[str]:
        """Undo one merge (see ``Memory.unconsolidate``); returns the ids made active again.

        Raises:
            NotFoundError: no merge has this id (in the ``wanted`` scope).
            MergeConflictError: the merge was undone already or its rows changed.
        """
        if not isinstance(merge_id, str) or not is_storable_id(merge_id):
            raise NotFoundError(f"no merge with id {short_repr(merge_id)}; merge ids are the strings in "
                                "ConsolidationReport.merges or merges()")
        merge = self.store.merge_record(merge_id)
        scope = Scope.from_key(merge.scope_key)
        check_owner(scope, wanted, missing=NotFoundError(f"no merge with id {merge_id!r}; list them with merges()"))
        dim = self.gates.scope_dim(scope)
        assert dim is not None, "a scope with a merge has a width"
        with self.gates.write(scope, dim=dim) as (tx, gate):
            # Read again under the lock: another process may have undone it meanwhile.
            return MergeWriter(tx, gate, scope, now=now_iso(), split=self._split).undo(tx.merge_record(merge_id))


class Schedule:
    """``consolidate_every=N``: says when a scope has taken N more writes since its last run.

    Args:
        every: writes (stored memories) per scope between runs; None or 0 turns it off.
    """

    def __init__(self, every: int | None) -> None:
        from memsieve.errors import ConfigError

        if every is not None and (isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 0):
            raise ConfigError(f"consolidate_every must be an integer >= 0 or None, got {short_repr(every)}; "
                              "0 or None turns scheduled consolidation off")
        self.every = int(every or 0)
        self._counts: dict[str, int] = {}

    def note(self, scope: Scope, writes: int) -> bool:
        """Count ``writes`` for the scope; True (and the count restarts) once it reaches ``every``."""
        if not self.every or writes <= 0:
            return False
        n = self._counts.get(scope.key, 0) + writes
        if n >= self.every:
            self._counts[scope.key] = 0
            return True
        self._counts[scope.key] = n
        return False
