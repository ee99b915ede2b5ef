"""What consolidation retired into a memory, at any depth: the members a removal of it must reach too.

A merge keeps one memory and retires its members (inactive, their texts kept
for ``unconsolidate``). A later merge may retire the kept memory itself, so
erasing or forgetting a memory must follow the merges down through every
round. Both the forget path and a purge ask this one function.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memsieve.consolidation import MergeConflictError
from memsieve.scope import Scope


def retired_into(reader: Any, scope: Scope, kept_ids: Iterable[str]) -> list[tuple[str, str, str]]:
    """(member id, root id, reason) of every inactive memory a merge in force retired into one of
    ``kept_ids``, or into a memory so retired, at any depth; each member once, nearest rounds first.
    Members purged already are passed through, not listed."""
    by_kept: dict[str, list[Any]] = {}
    for merge in reader.merges(scope):
        by_kept.setdefault(merge.kept_id, []).append(merge)
    roots = list(dict.fromkeys(kept_ids))
    seen = set(roots)
    frontier = [(kept, kept) for kept in roots]
    out = []
    while frontier:
        kept, root = frontier.pop(0)
        for merge in by_kept.get(kept, []):
            for member in merge.member_ids:
                if member == merge.kept_id or member in seen:
                    continue
                row = reader.memory_row(member)
                if row.is_active:
                    continue  # active again: a memory of its own now
                seen.add(member)
                frontier.append((member, root))  # a tombstone too: what was retired into it may hold text
                if row.text:
                    out.append((member, root, f"merged into {kept} by consolidation {merge.id}"))
    return out


def refuse_if_retired(merges: Iterable[Any], memory_id: str, done: str) -> None:
    """Raise MergeConflictError when one of ``merges`` (in force) retired ``memory_id``: its fact lives
    in the kept memory, and changing it alone would split the two.

    Raises:
        MergeConflictError: naming the merge, the kept memory and the fixes.
    """
    for merge in merges:
        if memory_id in merge.member_ids and memory_id != merge.kept_id:
            raise MergeConflictError(
                f"memory {memory_id!r} was merged into {merge.kept_id!r} by merge {merge.id!r} and cannot be "
                f"{done} on its own; change {merge.kept_id!r}, which holds its fact, or undo the merge "
                "(unconsolidate) first")
