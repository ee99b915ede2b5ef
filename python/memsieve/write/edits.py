"""The user's own edits inside one scope's write transaction: update, delete, restore.

Each function runs with the transaction and the scope's gate that
``ScopeGates.write`` yields, writes its history row and its counter, and keeps
the gate in step, so that the store, the gate and the history never disagree.
``Memory`` validates the input, ``Writer`` (memsieve.write.writer) opens the
transaction; the rows change here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from memsieve.errors import NotFoundError
from memsieve.inputs import text_hash
from memsieve.records import Rejection
from memsieve.scope import Scope
from memsieve.text.passages import Part


def update_text(tx: Any, gate: Any, scope: Scope, memory_id: str, *, text: str, vector: np.ndarray,
                reason: str, now: str, parts: Sequence[Part] = ()) -> None:
    """Replace an active memory's text, vector and passages; the old text goes to its history.

    Raises:
        NotFoundError: the memory was deleted meanwhile.
    """
    stored = tx.memory_row(memory_id)
    if not stored.is_active:
        if not stored.text:  # a purge left only the tombstone
            raise NotFoundError(f"memory {memory_id!r} is purged: nothing of it is left to update; add the text anew")
        raise NotFoundError(f"memory {memory_id!r} is deleted; add its text anew (get() and history() still show "
                            "it), or, if a merge retired it, undo the merge")
    tx.update_memory_text(stored.seq, text=text, text_hash=text_hash(text), embedding=vector, now=now, parts=parts)
    tx.add_history(memory_id, scope, event="UPDATE", old_text=stored.text, new_text=text,
                   layer="user", reason=reason, now=now)
    tx.bump(scope, "UPDATE", "user")
    gate.replace(stored.seq, vector, text, parts)


def soft_delete(tx: Any, gate: Any, scope: Scope, *, seq: int, memory_id: str, text: str, layer: str,
                reason: str, now: str) -> None:
    """Retire one memory: inactive, out of the gate, with a DELETE history row saying why."""
    tx.soft_delete(seq, now=now, valid_to=None)
    tx.add_history(memory_id, scope, event="DELETE", old_text=text, new_text=None, layer=layer,
                   reason=reason, now=now)
    tx.bump(scope, "DELETE", layer)
    gate.remove(seq)


def soft_delete_if_active(tx: Any, gate: Any, scope: Scope, memory_id: str, *, reason: str, now: str) -> None:
    """The user's soft delete of one memory (``soft_delete``, layer "user"), if it is still active:
    one deleted or retired meanwhile has nothing left to retire."""
    stored = tx.memory_row(memory_id)
    if stored.is_active:
        soft_delete(tx, gate, scope, seq=stored.seq, memory_id=memory_id, text=stored.text, layer="user",
                    reason=reason, now=now)


def restore_rejection(tx: Any, gate: Any, scope: Scope, rejection: Rejection, *, vector: np.ndarray,
                      valid_from: str | None, now: str, parts: Sequence[Part] = ()) -> str:
    """Store a rejected candidate as a memory after all, bypassing the gate; return its id."""
    share = gate.share(gate.score(vector)) if len(gate) else math.nan
    seq, memory_id = tx.insert_memory(
        scope, text=rejection.text, text_hash=text_hash(rejection.text), embedding=vector, share=share,
        metadata=rejection.metadata, sources=rejection.sources, valid_from=valid_from, now=now, parts=parts)
    gate.add(seq, vector, share, rejection.text, parts)
    tx.add_history(memory_id, scope, event="RESTORE", old_text=None, new_text=rejection.text,
                   layer="restore", reason=f"restored from rejection {rejection.id}", now=now,
                   extra={"rejection_id": rejection.id})
    tx.mark_restored(rejection.id, memory_id, now)
    tx.bump(scope, "RESTORE", "restore")
    return memory_id
