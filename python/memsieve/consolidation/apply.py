"""Making a merge and undoing it, inside the scope's write transaction.

A merge changes, for each retired member: activity (off), validity
(``valid_to``) and expiry (``expired_at``); for the kept member: its sources
(a duplicate's are attached) and, after an LLM merge, its text and vector;
and for a version chain, the ``supersedes`` links it adds. It records each
row's state before, in the merge record, and appends a ``CONSOLIDATE`` row to
every member's history. ``undo`` checks that nothing has touched those rows
since, puts every state back, removes the links it added, restores the kept
text from ``memory_versions``, appends ``UNCONSOLIDATE`` rows, and brings the
gate (vectors, keyword index, threshold shares) back with the same calls
``Memory.delete`` and ``Memory.restore`` make.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from memsieve.consolidation.plan import Cluster
from memsieve.errors import MemsieveError
from memsieve.gate.scope_gate import ScopeGate
from memsieve.inputs import text_hash
from memsieve.records import merged_sources
from memsieve.scope import Scope
from memsieve.store.base import MergeRow, MergeTx, RowState
from memsieve.text.passages import Part

LAYER = "consolidate"


class MergeConflictError(MemsieveError):
    """A merge cannot be undone: it was undone already, or its rows changed since."""


class MergeWriter:
    """Writes merges of one scope and undoes them.

    Args:
        tx: the open write transaction.
        gate: the scope's ``ScopeGate``, kept equal to the active set.
        scope: the scope.
        now: the transaction's timestamp.
        split: a text's parts 1.. (passages, sentence keys; memsieve.text.passages.text_parts),
            for a text the kept member takes: the LLM's merged text, or on undo its own again.
    """

    def __init__(self, tx: MergeTx, gate: ScopeGate, scope: Scope, *, now: str,
                 split: Callable[[str], Sequence[Part]]) -> None:
        self.tx = tx
        self.gate = gate
        self.scope = scope
        self.now = now
        self.split = split

    def merge(self, cluster: Cluster, *, reason: str, text: str | None = None,
              vector: np.ndarray | None = None) -> str:
        """Apply one cluster; ``text``/``vector``: an LLM's merged text for the kept member. Returns the merge id."""
        tx, kept = self.tx, cluster.kept
        kept_before = tx.row_state(kept.seq)
        links = self._chain_links(cluster) if cluster.kind == "versions" else []
        retired = []
        for k, m in enumerate(cluster.retired):
            before = tx.row_state(m.seq)
            valid_to = cluster.members[k + 1].item.valid_from if cluster.kind == "versions" else None
            after = replace(before, is_active=False, expired_at=self.now,
                            valid_to=valid_to or before.valid_to or self.now)
            retired.append((m, before, after))
        attached = (merged_sources(kept_before.sources, *(b.sources for _, b, _ in retired))
                    if cluster.kind == "duplicates" else kept_before.sources)
        kept_after = replace(kept_before, sources=attached)
        new_text = text if text is not None and text != kept.item.text else None
        state = {
            "kept": {"seq": kept.seq, "before": kept_before.to_dict(), "after": kept_after.to_dict(),
                     "text_changed": new_text is not None,
                     "hash": text_hash(new_text if new_text is not None else kept.item.text)},
            "retired": [{"seq": m.seq, "id": m.item.id, "before": b.to_dict(), "after": a.to_dict()}
                        for m, b, a in retired],
            "links": links,
        }
        member_ids = [m.item.id for m in cluster.members]
        merge_id = tx.add_merge(self.scope, kind=cluster.kind, kept_id=kept.item.id, member_ids=member_ids,
                                reason=reason, state=state, now=self.now)
        extra = {"merge_id": merge_id, "kind": cluster.kind}
        for m, _, after in retired:
            tx.set_row_state(m.seq, after)
            tx.add_history(m.item.id, self.scope, event="CONSOLIDATE", old_text=m.item.text, new_text=None,
                           layer=LAYER, reason=reason, now=self.now,
                           extra={**extra, "kept_id": kept.item.id, "sources": m.item.sources})
            self.gate.remove(m.seq)
        tx.set_row_state(kept.seq, kept_after)
        for newer, older in links:
            tx.add_link(newer, older, kind="supersedes", cosine=float("nan"), now=self.now)
        if new_text is not None and vector is not None:
            parts = self.split(new_text)
            tx.update_memory_text(kept.seq, text=new_text, text_hash=text_hash(new_text), embedding=vector,
                                  now=self.now, parts=parts)
            self.gate.replace(kept.seq, vector, new_text, parts)
        all_sources = merged_sources(*(m.item.sources for m in cluster.members))
        tx.add_history(kept.item.id, self.scope, event="CONSOLIDATE",
                       old_text=kept.item.text if new_text is not None else None,
                       new_text=new_text if new_text is not None else kept.item.text, layer=LAYER, reason=reason,
                       now=self.now, extra={**extra, "members": member_ids, "sources": all_sources})
        tx.bump(self.scope, "CONSOLIDATE", LAYER)
        return merge_id

    def _chain_links(self, cluster: Cluster) -> list[list[str]]:
        """The (newer, older) ``supersedes`` links of the chain that no version link joins yet."""
        ids = [m.item.id for m in cluster.members]
        linked = {frozenset((a, b)) for a, b, _ in self.tx.version_links(ids)}
        return [[ids[k + 1], ids[k]] for k in range(len(ids) - 1) if frozenset((ids[k + 1], ids[k])) not in linked]

    def undo(self, merge: MergeRow) -> list[str]:
        """Undo one merge; returns the ids made active again.

        A retired member purged since stays erased (a purge is final); the merge's other
        retired members come back, so that a purge of one does not leave the rest out of
        search for good.

        Raises:
            MergeConflictError: the merge was undone already, a member changed since
                (deleted, restored or edited), the kept memory was purged, or every
                retired member was; nothing is changed then.
        """
        tx, state = self.tx, merge.state
        if merge.undone_at is not None:
            raise MergeConflictError(f"merge {merge.id!r} was already undone at {merge.undone_at}; "
                                     "list the merges in force with merges()")
        kept = state["kept"]
        kept_row = tx.memory_row(merge.kept_id)
        # A purge leaves a retired member's state as the merge left it, but erases its text and vector.
        purged = {r["id"] for r in state["retired"] if not tx.memory_row(r["id"]).text}
        stale = [r["id"] for r in state["retired"] if r["id"] not in purged
                 and tx.row_state(r["seq"]) != RowState.from_dict(r["after"])]
        if purged and len(purged) == len(state["retired"]):
            stale += sorted(purged)  # nothing left to bring back
        kept_now = tx.row_state(kept["seq"])
        if not _same_but_seen(kept_now, RowState.from_dict(kept["after"])) or text_hash(kept_row.text) != kept["hash"]:
            stale.append(merge.kept_id)
        if stale:
            raise MergeConflictError(f"merge {merge.id!r} cannot be undone: "
                                     f"{'; '.join(_what_changed(tx, i) for i in stale)}. Nothing was changed; "
                                     "every member's text stays readable with get(id) and history(id)")
        # Counted, never named: the history row must not point at what a purge erased.
        reason = f"undid merge {merge.id}" + (f"; {len(purged)} purged member(s) stay erased" if purged else "")
        extra = {"merge_id": merge.id}
        for r in state["retired"]:
            if r["id"] in purged:
                continue
            tx.set_row_state(r["seq"], RowState.from_dict(r["before"]))
            row = tx.memory_row(r["id"])
            tx.add_history(r["id"], self.scope, event="UNCONSOLIDATE", old_text=None, new_text=row.text,
                           layer=LAYER, reason=reason, now=self.now, extra=extra)
            self.gate.add(r["seq"], row.embedding, row.share, row.text)
            self.gate.load_parts(tx.parts_of([r["seq"]], self.gate.dim))  # kept while it was retired
        tx.set_row_state(kept["seq"], _seen_since(RowState.from_dict(kept["before"]), RowState.from_dict(kept["after"]),
                                                  kept_now))
        if kept["text_changed"]:
            # The text the kept memory had when the merge was made, not whatever came before its latest
            # edit: an edit put back to the merged text since leaves a later version on top.
            before = next((h.old_text for h in tx.history(merge.kept_id) if h.event == "CONSOLIDATE"
                           and h.extra.get("merge_id") == merge.id and h.old_text), None)
            old = (tx.version_with_hash(kept["seq"], text_hash(before)) if before else None) \
                or tx.last_version(kept["seq"])
            if old is not None:
                # The merge dropped the old text's parts with it; they are cut and embedded again.
                parts = self.split(old[0])
                tx.update_memory_text(kept["seq"], text=old[0], text_hash=text_hash(old[0]), embedding=old[1],
                                      now=self.now, parts=parts)
                self.gate.replace(kept["seq"], old[1], old[0], parts)
        for newer, older in state["links"]:
            tx.remove_link(newer, older, kind="supersedes")
        tx.add_history(merge.kept_id, self.scope, event="UNCONSOLIDATE", old_text=None,
                       new_text=tx.memory_row(merge.kept_id).text, layer=LAYER, reason=reason, now=self.now,
                       extra=extra)
        tx.mark_unmerged(merge.id, self.now)
        tx.bump(self.scope, "UNCONSOLIDATE", LAYER)
        return [r["id"] for r in state["retired"] if r["id"] not in purged]


def _same_but_seen(now: RowState, after: RowState) -> bool:
    """Whether the kept memory is as the merge left it but for being seen again since: a NOOP folded into
    it (a repeat of the fact) adds a sighting and its source, which an undo keeps, not a change."""
    return (now.is_active, now.valid_to, now.expired_at) == (after.is_active, after.valid_to, after.expired_at) \
        and set(after.sources) <= set(now.sources) and now.seen_count >= after.seen_count


def _seen_since(before: RowState, after: RowState, now: RowState) -> RowState:
    """The kept memory's state from before the merge, with the sightings and sources added since it."""
    added = [s for s in now.sources if s not in set(after.sources)]
    return replace(before, sources=[*before.sources, *(s for s in added if s not in set(before.sources))],
                   seen_count=before.seen_count + now.seen_count - after.seen_count)


def _what_changed(tx: Any, memory_id: str) -> str:
    """How a member of a merge changed since, and what the caller can do about it, for the refusal."""
    row = tx.memory_row(memory_id)
    if not row.text:
        return f"memory {memory_id!r} was purged since (a purge is final)"
    if not row.is_active:
        return (f"memory {memory_id!r} was deleted since; add its text again with add() to have it back, "
                "and the merge's other members stay as the merge left them")
    return (f"memory {memory_id!r} was edited or restored since; put back the text the merge left "
            f"(history({memory_id!r}) lists it) with update() and undo again")
