"""The SQLite store: the embedded default and the source of truth.

One connection per store, guarded by a re-entrant lock so threads share it
safely; ``BEGIN IMMEDIATE`` makes a write transaction exclusive across
processes as well, and WAL lets readers go on meanwhile.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from memsieve.errors import ClosedError, NotFoundError, StoreError
from memsieve.scope import Scope
from memsieve.store.base import ChangesRow, ScopeRow, VectorsRow, nan_to_none, none_to_nan, sql_limit
from memsieve.store.migrations import migrate
from memsieve.store.sql_records import SqlRecords
from memsieve.store.sqlite_open import Rows, check_folder, run, set_wal, store_error


class SQLiteStore(SqlRecords):
    """Memories, history, rejections, links, counters and scope state in one file.

    Args:
        path: database file, or ``":memory:"`` for a throwaway store.
        timeout: seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.timeout = float(timeout)
        self.lock = threading.RLock()
        self._in_tx = False
        self._closed = False
        if self.path != ":memory:":
            check_folder(self.path)
        try:
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=timeout
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open database {self.path!r}: {exc}; check the path and its permissions") from exc
        try:
            with self.lock:
                self._open()
        except BaseException as exc:
            self._conn.close()
            if isinstance(exc, sqlite3.Error):
                raise store_error(exc, self.path) from exc
            raise

    def _open(self) -> None:
        c = self._conn
        if self.path != ":memory:":
            set_wal(c, self.path, timeout=self.timeout)
        c.execute("PRAGMA synchronous = NORMAL")
        c.execute("PRAGMA foreign_keys = ON")
        migrate(c)
        # Reading the schema parses every table definition: a garbled file
        # fails here, at open, rather than at some later read.
        c.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()

    @property
    def index_dir(self) -> str | None:
        """Where per-scope hnswlib indexes are saved (None: kept in memory only)."""
        return None if self.path == ":memory:" else self.path + ".hnsw"

    # ---- transactions ------------------------------------------------------

    @contextmanager
    def transaction(self, scope: Scope | None = None) -> Iterator["SQLiteStore"]:
        """An exclusive write transaction: everything inside commits or nothing does.

        SQLite locks the whole database, so ``scope`` (which a server store uses
        to take a per-scope lock) is not needed here.
        """
        with self.lock:
            if self._in_tx:
                raise StoreError("nested write transaction; this is a bug in memsieve")
            self._q("BEGIN IMMEDIATE")
            self._in_tx = True
            try:
                yield self
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            else:
                self._q("COMMIT")
            finally:
                self._in_tx = False

    _TRUE = "1"

    def _in(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(values))})", [int(v) for v in values]

    def _vector(self, raw: Any) -> np.ndarray:
        return np.frombuffer(raw, dtype=np.float32)

    def _q(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> Rows:
        # The shared SQL (sql_records.py) uses psycopg's %s; no statement holds a
        # literal '%'. ``binary`` is psycopg's wire format, meaningless here.
        with self.lock:
            if self._closed:
                raise ClosedError(f"the store {self.path!r}")
            return run(self._conn, self.path, sql.replace("%s", "?"), params)

    def close(self) -> None:
        with self.lock:
            self._closed = True
            self._conn.close()

    # ---- scope state -------------------------------------------------------

    def scope_row(self, scope: Scope, *, now: str) -> ScopeRow:
        row = self._q(
            "SELECT revision, dim, gate_state, sage_tau FROM scopes WHERE scope_key = ?", (scope.key,)
        ).fetchone()
        if row is None:
            self._q(
                "INSERT INTO scopes(scope_key, user_id, agent_id, run_id, created_at) VALUES (?,?,?,?,?)",
                (scope.key, scope.user_id, scope.agent_id, scope.run_id, now),
            )
            return ScopeRow(revision=0, dim=None, gate_state=None, sage_tau=None)
        return ScopeRow(revision=row[0], dim=row[1], gate_state=row[2], sage_tau=row[3])

    def read_scope(self, scope: Scope) -> ScopeRow | None:
        row = self._q(
            "SELECT revision, dim, gate_state, sage_tau FROM scopes WHERE scope_key = ?", (scope.key,)
        ).fetchone()
        return None if row is None else ScopeRow(revision=row[0], dim=row[1], gate_state=row[2], sage_tau=row[3])

    def peek_revision(self, scope: Scope) -> int | None:
        row = self._q("SELECT revision FROM scopes WHERE scope_key = ?", (scope.key,)).fetchone()
        return None if row is None else int(row[0])

    def save_scope(self, scope: Scope, *, revision: int, dim: int, gate_state: bytes, sage_tau: float | None) -> None:
        self._q(
            "UPDATE scopes SET revision = ?, dim = ?, gate_state = ?, sage_tau = ? WHERE scope_key = ?",
            (revision, dim, gate_state, sage_tau, scope.key),
        )

    def scope_vectors(self, scope: Scope, dim: int) -> VectorsRow:
        rows = self._q(
            "SELECT seq, id, embedding, nn_cos FROM memories WHERE scope_key = ? AND is_active = 1 ORDER BY seq",
            (scope.key,),
        ).fetchall()
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.empty((len(rows), dim), dtype=np.float32)
        for i, r in enumerate(rows):
            v = np.frombuffer(r[2], dtype=np.float32)
            if v.shape[0] != dim:
                raise StoreError(
                    f"memory {r[1]} has a {v.shape[0]}-d embedding but the scope is {dim}-d; "
                    "the embedder changed: re-embed with the original model or use a new database"
                )
            matrix[i] = v
        nn = np.array([none_to_nan(r[3]) for r in rows], dtype=np.float64)
        return VectorsRow(seqs=seqs, ids=[r[1] for r in rows], matrix=matrix, nn_cos=nn)

    def mark_changed(self, scope: Scope, seqs: Sequence[int], revision: int) -> None:
        if seqs:
            marks = ",".join("?" * len(seqs))
            self._q(f"UPDATE memories SET changed_rev = ? WHERE scope_key = ? AND seq IN ({marks})",
                    [revision, scope.key, *seqs])

    def changes_since(self, scope: Scope, revision: int, dim: int) -> ChangesRow:
        rows = self._q(
            "SELECT seq, is_active, embedding, nn_cos FROM memories WHERE scope_key = ? AND changed_rev > ?"
            " ORDER BY seq", (scope.key, revision)).fetchall()
        matrix = np.zeros((len(rows), dim), dtype=np.float32)
        for i, r in enumerate(rows):
            v = np.frombuffer(r[2], dtype=np.float32)
            if v.shape[0] == dim:
                matrix[i] = v
        return ChangesRow(seqs=np.array([r[0] for r in rows], dtype=np.int64),
                          active=np.array([bool(r[1]) for r in rows], dtype=bool), matrix=matrix,
                          nn_cos=np.array([none_to_nan(r[3]) for r in rows], dtype=np.float64))

    def scope_keys(self) -> list[str]:
        return [r[0] for r in self._q("SELECT scope_key FROM scopes ORDER BY scope_key")]

    # ---- memories ------------------------------------------------------------

    def active_by_hash(self, scope: Scope, text_hash: str) -> tuple[int, str] | None:
        row = self._q(
            "SELECT seq, id FROM memories WHERE scope_key = ? AND text_hash = ? AND is_active = 1 ORDER BY seq LIMIT 1",
            (scope.key, text_hash),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def insert_memory(
        self,
        scope: Scope,
        *,
        text: str,
        text_hash: str,
        embedding: np.ndarray,
        nn_cos: float,
        metadata: dict[str, Any],
        sources: list[str],
        valid_from: str | None,
        now: str,
    ) -> tuple[int, str]:
        memory_id = str(uuid.uuid4())
        cur = self._q(
            "INSERT INTO memories(id, scope_key, text, text_hash, embedding, nn_cos, metadata, source, sources,"
            " last_seen_at, valid_from, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                memory_id, scope.key, text, text_hash, embedding.astype(np.float32).tobytes(),
                nan_to_none(nn_cos), json.dumps(metadata), sources[0] if sources else None,
                json.dumps(sources), now, valid_from or now, now,
            ),
        )
        seq = int(cur.lastrowid or 0)
        self._q("INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (seq, text))
        return seq, memory_id

    def touch_memory(self, seq: int, *, sources: list[str], now: str) -> None:
        """A NOOP folded into this memory: count it, and keep where it came from."""
        row = self._q("SELECT sources FROM memories WHERE seq = ?", (seq,)).fetchone()
        merged = json.loads(row[0]) if row else []
        merged.extend(s for s in sources if s not in merged)
        self._q(
            "UPDATE memories SET seen_count = seen_count + 1, last_seen_at = ?, sources = ? WHERE seq = ?",
            (now, json.dumps(merged), seq),
        )

    def update_memory_text(self, seq: int, *, text: str, text_hash: str, embedding: np.ndarray, now: str) -> None:
        self._record_version(seq, now=now)
        self._q(
            "UPDATE memories SET text = ?, text_hash = ?, embedding = ?, updated_at = ? WHERE seq = ?",
            (text, text_hash, embedding.astype(np.float32).tobytes(), now, seq),
        )
        self._q("UPDATE memories_fts SET text = ? WHERE rowid = ?", (text, seq))

    def soft_delete(self, seq: int, *, now: str, valid_to: str | None) -> None:
        self._q(
            "UPDATE memories SET is_active = 0, expired_at = ?, valid_to = COALESCE(?, valid_to, ?) WHERE seq = ?",
            (now, valid_to, now, seq),
        )
        self._q("DELETE FROM memories_fts WHERE rowid = ?", (seq,))

    def memory_row(self, memory_id: str) -> tuple[int, str, str, np.ndarray, float, bool]:
        """(seq, scope_key, text, embedding, nn_cos, is_active) of a memory."""
        row = self._q(
            "SELECT seq, scope_key, text, embedding, nn_cos, is_active FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}; list ids with get_all()")
        return (int(row[0]), row[1], row[2], np.frombuffer(row[3], dtype=np.float32).copy(),
                none_to_nan(row[4]), bool(row[5]))

    def keyword_search(self, scope: Scope, match: str, limit: int) -> list[tuple[int, float]]:
        rows = self._q(
            "SELECT f.rowid, bm25(memories_fts) AS rank FROM memories_fts f JOIN memories m ON m.seq = f.rowid"
            " WHERE memories_fts MATCH ? AND m.scope_key = ? AND m.is_active = 1 ORDER BY rank LIMIT ?",
            (match, scope.key, sql_limit(limit)),
        ).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def size_bytes(self) -> int:
        page_count = self._q("PRAGMA page_count").fetchone()[0]
        page_size = self._q("PRAGMA page_size").fetchone()[0]
        return int(page_count) * int(page_size)

    def integrity_ok(self) -> bool:
        """SQLite's own check of every page; False for a damaged file (a closed store still raises)."""
        self._q("SELECT 1")
        try:
            return bool(self._q("PRAGMA integrity_check").fetchone()[0] == "ok")
        except StoreError:
            return False
