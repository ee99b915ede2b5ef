"""The SQL of scheduled consolidation: merge records, and the row changes a merge makes and undoes.

A merge (memsieve.consolidation) retires some memories of a cluster in favour
of one it keeps. Everything it changes is written here, together with what
each row held before, so that ``unconsolidate`` can put back exactly that
state: activity, validity, expiry, sources and counts, the kept memory's text
(from ``memory_versions``), and the links the merge added. The merges table
holds ids, reasons and that state as JSON, never a text: texts stay where a
purge looks for them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from memsieve.errors import NotFoundError
from memsieve.scope import Scope
from memsieve.store.base import MergeRow, RowState
from memsieve.store.ids import new_id
from memsieve.store.sql_records import SqlRecords

_MERGE_COLUMNS = "id, scope_key, kind, kept_id, member_ids, reason, state, created_at, undone_at"


def _merge_row(r: Sequence[Any]) -> MergeRow:
    return MergeRow(id=str(r[0]), scope_key=str(r[1]), kind=str(r[2]), kept_id=str(r[3]),
                    member_ids=json.loads(r[4]), reason=str(r[5]), state=json.loads(r[6]), created_at=str(r[7]),
                    undone_at=r[8])


class SqlMerges(SqlRecords):
    """Merge records and the row edits of consolidation, on top of the shared SQL."""

    # ---- merge records ---------------------------------------------------------

    def add_merge(self, scope: Scope, *, kind: str, kept_id: str, member_ids: Sequence[str], reason: str,
                  state: dict[str, Any], now: str) -> str:
        """Record a merge; returns its new id."""
        merge_id = new_id()
        self._q(f"INSERT INTO merges({_MERGE_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                (merge_id, scope.key, kind, kept_id, json.dumps(list(member_ids)), reason, json.dumps(state),
                 now, None))
        return merge_id

    def merge_record(self, merge_id: str) -> MergeRow:
        """The merge with this id.

        Raises:
            NotFoundError: no merge has this id.
        """
        row = self._q(f"SELECT {_MERGE_COLUMNS} FROM merges WHERE id = %s", (merge_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no merge with id {merge_id!r}; list them with merges()")
        return _merge_row(row)

    def merges(self, scope: Scope, *, include_undone: bool = False) -> list[MergeRow]:
        """The scope's merges, oldest first."""
        sql = f"SELECT {_MERGE_COLUMNS} FROM merges WHERE scope_key = %s"
        if not include_undone:
            sql += " AND undone_at IS NULL"
        return [_merge_row(r) for r in self._q(sql + " ORDER BY created_at, id", (scope.key,))]

    def mark_unmerged(self, merge_id: str, now: str) -> None:
        self._q("UPDATE merges SET undone_at = %s WHERE id = %s", (now, merge_id))

    # ---- rows ----------------------------------------------------------------

    def row_state(self, seq: int) -> RowState:
        """What a merge may change on the memory with this seq, as it is now."""
        row = self._q("SELECT is_active, valid_to, expired_at, sources, seen_count FROM memories WHERE seq = %s",
                      (int(seq),)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with seq {seq}; the merge refers to a row that is gone")
        return RowState(is_active=bool(row[0]), valid_to=row[1], expired_at=row[2], sources=json.loads(row[3]),
                        seen_count=int(row[4]))

    def set_row_state(self, seq: int, state: RowState) -> None:
        """Put a row's activity, validity, expiry, sources and count to ``state`` exactly."""
        active = self._TRUE if state.is_active else self._FALSE
        self._q(f"UPDATE memories SET is_active = {active}, valid_to = %s, expired_at = %s, sources = %s,"
                " seen_count = %s WHERE seq = %s",
                (state.valid_to, state.expired_at, json.dumps(state.sources), int(state.seen_count), int(seq)))

    def last_version(self, seq: int) -> tuple[str, np.ndarray] | None:
        """The text and (d,) float32 embedding the memory had before its latest text change, if any."""
        row = self._q("SELECT text, embedding FROM memory_versions WHERE memory_seq = %s"
                      " ORDER BY known_to DESC, seq DESC LIMIT 1", (int(seq),), binary=True).fetchone()
        if row is None:
            return None
        return str(row[0]), np.array(self._vector(row[1]), dtype=np.float32)

    def version_with_hash(self, seq: int, text_hash: str) -> tuple[str, np.ndarray] | None:
        """The text and (d,) float32 embedding of the memory's latest superseded version with this text hash."""
        row = self._q("SELECT text, embedding FROM memory_versions WHERE memory_seq = %s AND text_hash = %s"
                      " ORDER BY known_to DESC, seq DESC LIMIT 1", (int(seq), text_hash), binary=True).fetchone()
        if row is None:
            return None
        return str(row[0]), np.array(self._vector(row[1]), dtype=np.float32)

    def remove_link(self, memory_id: str, linked_id: str, *, kind: str) -> None:
        self._q("DELETE FROM links WHERE memory_id = %s AND linked_id = %s AND kind = %s",
                (memory_id, linked_id, kind))
