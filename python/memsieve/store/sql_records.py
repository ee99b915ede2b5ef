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

from memsieve.errors import NotFoundError
from memsieve.records import HistoryEntry, MemoryItem, Rejection
from memsieve.scope import Scope
from memsieve.store.base import MEMORY_COLUMNS, REJECTION_COLUMNS, memory_item, nan_to_none, rejection_record


class SqlRecords:
    """The append-mostly tables: what happened to each memory and to each candidate."""

    def _q(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> Any:  # pragma: no cover
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
            sql += f" LIMIT {int(limit)}"
        return [memory_item(r) for r in self._q(sql, (scope.key,))]

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
            sql += f" LIMIT {int(limit)}"
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
