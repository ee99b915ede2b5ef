"""The append-mostly tables shared by every SQL store: history, rejections,
links, counters and faults.

The SQL is written once, with psycopg's ``%s`` placeholders; the SQLite store
translates them to ``?``. Nothing here depends on the dialect.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from memsieve.errors import NotFoundError
from memsieve.records import HistoryEntry, MemoryItem, Rejection
from memsieve.scope import Scope
from memsieve.store.base import (MEMORY_COLUMNS, REJECTION_COLUMNS, CandidatesRow, memory_item, nan_to_none,
                                  rejection_record, sql_limit, stack_rows)


#: Joins each memory ``m`` to the version ``v`` that held at a time (the first
#: param): the earliest superseded version the store still knew after that
#: time. No such version (NULL) means the row's current text held then.
VERSION_AT = (
    "LEFT JOIN memory_versions v ON v.seq = (SELECT w.seq FROM memory_versions w"
    " WHERE w.memory_seq = m.seq AND w.known_to > %s ORDER BY w.known_to, w.seq LIMIT 1)"
)

#: Which memories were visible at a time (four params, all that time): known
#: to the store then, not yet deleted, and valid then.
VISIBLE_AT = (
    "m.created_at <= %s AND (m.expired_at IS NULL OR m.expired_at > %s)"
    " AND (m.valid_from IS NULL OR m.valid_from <= %s) AND (m.valid_to IS NULL OR m.valid_to > %s)"
)


class SqlRecords:
    """The SQL that is the same on every store: records, history, rejections, links, counters,
    faults, and the reads of memories by seq and at a point in time.

    A store supplies ``_q`` (run one statement), ``_TRUE`` (its literal for
    an active row), ``_in`` (a ``column IN (...)`` test) and ``_vector`` (one
    stored embedding as a (d,) float32 array).
    """

    _TRUE = "TRUE"

    def _q(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _in(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:  # pragma: no cover
        """SQL testing that ``column`` is one of ``values``, and its params."""
        raise NotImplementedError

    def _vector(self, raw: Any) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # ---- memories as records --------------------------------------------------

    def get(self, memory_id: str) -> MemoryItem:
        row = self._q(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = %s", (memory_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}; list ids with get_all()")
        return memory_item(row)

    def get_all(self, scope: Scope, *, include_inactive: bool, limit: int | None) -> list[MemoryItem]:
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope_key = %s"
        if not include_inactive:
            sql += " AND m.is_active"
        sql += " ORDER BY m.seq"
        if limit is not None:
            sql += f" LIMIT {sql_limit(limit)}"
        return [memory_item(r) for r in self._q(sql, (scope.key,))]

    def ids_for_seqs(self, seqs: Sequence[int]) -> dict[int, str]:
        if not seqs:
            return {}
        where, params = self._in("seq", seqs)
        return {int(s): str(i) for s, i in self._q(f"SELECT seq, id FROM memories WHERE {where}", params)}

    def items_for_seqs(self, seqs: Sequence[int]) -> dict[int, MemoryItem]:
        if not seqs:
            return {}
        where, params = self._in("m.seq", seqs)
        rows = self._q(f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE {where}", params)
        return {int(r[0]): memory_item(r[1:]) for r in rows}

    # ---- memories as they were -------------------------------------------------

    def items_at(self, seqs: Sequence[int], as_of: str) -> dict[int, MemoryItem]:
        """The memories with these seqs, each with the text it had at ``as_of`` (ISO time)."""
        if not seqs:
            return {}
        where, params = self._in("m.seq", seqs)
        columns = MEMORY_COLUMNS.replace("m.text,", "COALESCE(v.text, m.text),", 1)
        rows = self._q(f"SELECT m.seq, {columns} FROM memories m {VERSION_AT} WHERE {where}", [as_of, *params])
        return {int(r[0]): memory_item(r[1:]) for r in rows}

    def candidates(self, scope: Scope, *, as_of: str | None) -> CandidatesRow:
        """The memories visible at ``as_of`` (None: active now) with the text and embedding they had then."""
        if as_of is None:
            rows = self._q(
                "SELECT m.seq, m.embedding, m.metadata, m.text FROM memories m"
                f" WHERE m.scope_key = %s AND m.is_active = {self._TRUE} ORDER BY m.seq",
                (scope.key,), binary=True).fetchall()
        else:
            rows = self._q(
                "SELECT m.seq, COALESCE(v.embedding, m.embedding), m.metadata, COALESCE(v.text, m.text)"
                f" FROM memories m {VERSION_AT} WHERE m.scope_key = %s AND {VISIBLE_AT} ORDER BY m.seq",
                (as_of, scope.key, as_of, as_of, as_of, as_of), binary=True).fetchall()
        return CandidatesRow(
            seqs=np.array([r[0] for r in rows], dtype=np.int64),
            matrix=stack_rows([self._vector(r[1]) for r in rows], where=f"scope {scope.key!r}"),
            texts=[str(r[3]) for r in rows], metadata=[json.loads(r[2]) for r in rows])

    def _record_version(self, seq: int, *, now: str) -> None:
        """Keep the memory's current text and embedding as a version the store knew until ``now``."""
        self._q(
            "INSERT INTO memory_versions(memory_seq, text, text_hash, embedding, known_from, known_to)"
            " SELECT seq, text, text_hash, embedding, COALESCE(updated_at, created_at), %s FROM memories"
            " WHERE seq = %s", (now, seq))

    # ---- history -------------------------------------------------------------

    def add_history(self, memory_id: str, scope: Scope, *, event: str, old_text: str | None,
                    new_text: str | None, layer: str, reason: str, now: str,
                    extra: dict[str, Any] | None = None) -> None:
        self._q(
            "INSERT INTO history(memory_id, scope_key, event, old_text, new_text, layer, reason, extra, created_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (memory_id, scope.key, event, old_text, new_text, layer, reason, json.dumps(extra or {}), now),
        )

    def history(self, memory_id: str) -> list[HistoryEntry]:
        rows = self._q(
            "SELECT memory_id, event, old_text, new_text, layer, reason, created_at, extra FROM history"
            " WHERE memory_id = %s ORDER BY seq",
            (memory_id,),
        ).fetchall()
        return [HistoryEntry(memory_id=r[0], event=r[1], old_text=r[2], new_text=r[3], layer=r[4], reason=r[5],
                             created_at=r[6], extra=json.loads(r[7])) for r in rows]

    # ---- rejections ----------------------------------------------------------

    def add_rejection(self, scope: Scope, *, text: str, sources: list[str], metadata: dict[str, Any],
                      layer: str, novelty: float, tau: float, delta: float, kappa: float,
                      nearest_id: str | None, nearest_cos: float, reason: str, valid_from: str | None,
                      now: str) -> str:
        rejection_id = str(uuid.uuid4())
        self._q(
            "INSERT INTO rejections(id, scope_key, text, source, metadata, layer, novelty, tau, delta, kappa,"
            " nearest_id, nearest_cos, reason, valid_from, created_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (
                rejection_id, scope.key, text, json.dumps(sources) if sources else None, json.dumps(metadata),
                layer, nan_to_none(novelty), nan_to_none(tau), nan_to_none(delta), nan_to_none(kappa),
                nearest_id, nan_to_none(nearest_cos), reason, valid_from, now,
            ),
        )
        return rejection_id

    def rejection(self, rejection_id: str) -> tuple[Rejection, str, str | None]:
        """The rejection, its scope key, and its valid_from."""
        row = self._q(f"SELECT {REJECTION_COLUMNS}, valid_from FROM rejections WHERE id = %s",
                      (rejection_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no rejection with id {rejection_id!r}; list them with rejections()")
        return rejection_record(row[:-1]), row[2], row[-1]

    def rejections(self, scope: Scope, *, since: str | None, layer: str | None, limit: int | None) -> list[Rejection]:
        sql = f"SELECT {REJECTION_COLUMNS} FROM rejections WHERE scope_key = %s"
        params: list[Any] = [scope.key]
        if since is not None:
            sql += " AND created_at >= %s"
            params.append(since)
        if layer is not None:
            sql += " AND layer = %s"
            params.append(layer)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {sql_limit(limit)}"
        return [rejection_record(r) for r in self._q(sql, params)]

    def mark_restored(self, rejection_id: str, memory_id: str, now: str) -> None:
        self._q("UPDATE rejections SET restored_memory_id = %s, restored_at = %s WHERE id = %s",
                (memory_id, now, rejection_id))

    # ---- links, counters, faults ---------------------------------------------

    def add_link(self, memory_id: str, linked_id: str, *, kind: str, cosine: float, now: str) -> None:
        self._q(
            "INSERT INTO links(memory_id, linked_id, kind, cosine, created_at) VALUES (%s,%s,%s,%s,%s)"
            " ON CONFLICT DO NOTHING",
            (memory_id, linked_id, kind, nan_to_none(cosine), now),
        )

    def links(self, memory_id: str) -> list[tuple[str, str, float | None]]:
        return [(r[0], r[1], r[2]) for r in self._q(
            "SELECT linked_id, kind, cosine FROM links WHERE memory_id = %s"
            " UNION ALL SELECT memory_id, kind, cosine FROM links WHERE linked_id = %s", (memory_id, memory_id))]

    def bump(self, scope: Scope, event: str, layer: str) -> None:
        self._q(
            "INSERT INTO counters(scope_key, event, layer, n) VALUES (%s,%s,%s,1)"
            " ON CONFLICT (scope_key, event, layer) DO UPDATE SET n = counters.n + 1",
            (scope.key, event, layer),
        )

    def counters(self, scope: Scope) -> list[tuple[str, str, int]]:
        return [(r[0], r[1], int(r[2])) for r in self._q(
            "SELECT event, layer, n FROM counters WHERE scope_key = %s", (scope.key,))]

    def add_fault(self, scope: Scope, *, kind: str, detail: str, raw: str | None, now: str) -> None:
        self._q("INSERT INTO faults(scope_key, kind, detail, raw, created_at) VALUES (%s,%s,%s,%s,%s)",
                (scope.key, kind, detail, raw, now))

    def faults(self, scope: Scope) -> list[dict[str, Any]]:
        return [{"kind": r[0], "detail": r[1], "raw": r[2], "created_at": r[3]} for r in self._q(
            "SELECT kind, detail, raw, created_at FROM faults WHERE scope_key = %s ORDER BY seq", (scope.key,))]

    # ---- counts and housekeeping ---------------------------------------------

    def count_active(self, scope: Scope) -> int:
        return int(self._q("SELECT COUNT(*) FROM memories WHERE scope_key = %s AND is_active",
                           (scope.key,)).fetchone()[0])

    def count_rejections(self, scope: Scope) -> int:
        return int(self._q("SELECT COUNT(*) FROM rejections WHERE scope_key = %s", (scope.key,)).fetchone()[0])
