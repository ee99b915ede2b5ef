"""The SQLite store: the embedded default and the source of truth.

One connection per store, guarded by a re-entrant lock so threads share it
safely; ``BEGIN IMMEDIATE`` makes a write transaction exclusive across
processes as well, and WAL lets readers go on meanwhile.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np

from memsieve.errors import ClosedError, StoreError
from memsieve.scope import Scope
from memsieve.store.base import VectorsRow, check_durability, none_to_nan
from memsieve.store.migrations import migrate, refuse_foreign
from memsieve.store.sql_folds import SqlFolds
from memsieve.store.sql_merges import SqlMerges
from memsieve.store.sql_purge import SqlPurge
from memsieve.store.sqlite_checkpoint import BACKSTOP_PAGES, Checkpointer

#: Seconds the checkpoint after a purge waits for other connections' reads to end
#: (at most the store's timeout); past it the erasure is pending, retried after
#: every later commit without waiting, and finished by ``finish_erasure``.
ERASURE_WAIT = 1.0

#: Why an erasure is pending on SQLite (see ``SQLiteStore.finish_erasure``).
READER_PENDING = (
    "another connection to {path!r} holds a read transaction begun before the purge (or is writing), so "
    "the checkpoint could not copy the erased pages over the old ones in the database file nor truncate "
    "the WAL; the old bytes stay there until it ends: end that read (or close that connection) and call "
    "finish_erasure(), or let any later write of this store finish it")
from memsieve.store.sqlite_open import Rows, check_folder, run, set_wal, store_error

if TYPE_CHECKING:
    from memsieve.store.base import MergeTx, Store, WriteTx


class SQLiteStore(SqlPurge, SqlMerges, SqlFolds):
    """Memories, history, rejections, links, counters and scope state in one file.

    Args:
        path: database file, or ``":memory:"`` for a throwaway store.
        timeout: seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0, durability: str = "normal") -> None:
        self.path = str(path)
        self.timeout = float(timeout)
        self.durability = check_durability(durability)
        self.lock = threading.RLock()
        self._in_tx = False
        self._closed = False
        self._checkpointer: Checkpointer | None = None
        #: Why the bytes of the last purge may still be in the file or the WAL (None: gone).
        self._erasure_pending: str | None = None
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
            refuse_foreign(c)  # before WAL mode rewrites another program's file header
            set_wal(c, self.path, timeout=self.timeout)
            # Checkpoints run on a thread of their own (memsieve.store.sqlite_checkpoint);
            # SQLite's own, inside a COMMIT, only past a higher mark.
            c.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
            self._checkpointer = Checkpointer(self.path, timeout=self.timeout)
        # WAL + NORMAL: a commit survives the process being killed (the WAL is
        # written before COMMIT returns); FULL also fsyncs it (memsieve.store.base.DURABILITY).
        c.execute(f"PRAGMA synchronous = {'FULL' if self.durability == 'full' else 'NORMAL'}")
        c.execute("PRAGMA foreign_keys = ON")
        # Freed space is zeroed, so a purged text leaves no bytes in the file.
        c.execute("PRAGMA secure_delete = ON")
        migrate(c)
        # Reading the schema parses every table definition: a garbled file
        # fails here, at open, rather than at some later read.
        c.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()

    @property
    def index_dir(self) -> str | None:
        """Where per-scope hnswlib indexes are saved (None: kept in memory only)."""
        return None if self.path == ":memory:" else self.path + ".hnsw"

    @property
    def background_checkpoints(self) -> int:
        """WAL checkpoints the background thread has run so far (0 for ``":memory:"``)."""
        return 0 if self._checkpointer is None else self._checkpointer.runs

    # ---- transactions ------------------------------------------------------

    @contextmanager
    def transaction(self, scope: Scope | None = None) -> Iterator["SQLiteStore"]:
        """An exclusive write transaction: everything inside commits or nothing does.

        SQLite locks the whole database, so ``scope`` (which a server store uses
        to take a per-scope lock) is not needed here. A transaction that
        purged checkpoints after it commits (waiting up to ``ERASURE_WAIT`` s
        for other connections' reads); while an erasure is pending, every later
        commit retries the checkpoint without waiting.
        """
        with self.lock:
            if self._in_tx:
                raise StoreError("nested write transaction; this is a bug in memsieve")
            self._q("BEGIN IMMEDIATE")
            self._in_tx = True
            self._clear_stamp()
            self._purged = False
            try:
                yield self
            except BaseException:
                self._rollback()
                raise
            else:
                self._q("COMMIT")
                if self._checkpointer is not None:
                    self._checkpointer.committed(self._conn.total_changes)
            finally:
                self._in_tx = False
                self._clear_stamp()
            if self._purged:
                self._purged = False
                self._erasure_pending = READER_PENDING.format(path=self.path)
                self.finish_erasure(wait=min(ERASURE_WAIT, self.timeout))
            elif self._erasure_pending is not None:
                self.finish_erasure(wait=0.0)

    @property
    def erasure_pending(self) -> str | None:
        """Why what a purge erased may still be in the file or its WAL; None when it is gone."""
        return self._erasure_pending

    def finish_erasure(self, *, wait: float = 0.0) -> str | None:
        """Finish a pending erasure: a TRUNCATE checkpoint, waiting up to ``wait`` s for readers.

        With ``secure_delete`` on, a purge's pages hold zeros where the text
        was; the checkpoint copies them over the old pages of the database file
        and truncates the WAL (which held the old versions) to zero bytes.
        Another connection's read transaction begun before the purge blocks
        both; then the erasure stays pending and the old bytes are still in the
        file. Cheap when nothing is pending.

        Returns:
            None when nothing of a purge is left in the file or the WAL; else why.

        Raises:
            StoreError: called inside a write transaction.
        """
        with self.lock:
            if self._closed:
                raise ClosedError(f"the store {self.path!r}")
            if self._erasure_pending is None or self._checkpointer is None:
                self._erasure_pending = None  # ":memory:" has no file to erase from
                return None
            self._q(f"PRAGMA busy_timeout = {max(0, int(wait * 1000))}")
            try:
                done = self.checkpoint()
            finally:
                self._q(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            if done:
                self._erasure_pending = None
            return self._erasure_pending

    def compact(self) -> str | None:
        """What ``finish_erasure`` does, waiting up to the store's timeout (SQLite rewrites no table).

        ``secure_delete`` already zeroes freed space inside the file, so no
        ``VACUUM`` is needed for an erasure. Returns None, or why it is pending.
        """
        return self.finish_erasure(wait=self.timeout)

    def checkpoint(self) -> bool:
        """Copy the WAL into the file and truncate it; False if another connection's read kept some of it.

        With ``secure_delete`` on, what a purge erased is then in neither the
        file nor the WAL.

        Raises:
            StoreError: called inside a write transaction.
        """
        with self.lock:
            if self._in_tx:
                raise StoreError("checkpoint inside a write transaction; call it after the transaction ends")
            # Not against our own background checkpoint.
            with nullcontext() if self._checkpointer is None else self._checkpointer.lock:
                busy = self._q("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            return int(busy) == 0

    def _rollback(self) -> None:
        # The error that ended the transaction is the one to report: a
        # rollback that fails too (a damaged file) must not replace it.
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _q(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> Rows:
        # The shared SQL (sql_records.py) uses psycopg's %s; no statement holds a
        # literal '%'. ``binary`` is psycopg's wire format, meaningless here.
        with self.lock:
            if self._closed:
                raise ClosedError(f"the store {self.path!r}")
            return run(self._conn, self.path, sql.replace("%s", "?"), params)

    def close(self) -> None:
        """Close the connection; a pending erasure is tried once more first.

        Closing the last connection to the file also checkpoints and removes
        the WAL (SQLite's own rule), which finishes any erasure still pending.
        """
        with self.lock:
            if self._erasure_pending is not None and not self._closed and not self._in_tx:
                try:
                    self.finish_erasure(wait=0.0)
                except StoreError:
                    pass  # closing must not fail on it; the last connection's close finishes it
            self._closed = True
            if self._checkpointer is not None:
                self._checkpointer.close()
            self._conn.close()

    # ---- the dialect (the hooks of SqlRecords) ----------------------------------

    _TRUE = "1"
    _FALSE = "0"
    _NO_VECTOR = b""

    def _in(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(values))})", [int(v) for v in values]

    def _in_text(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(values))})", [str(v) for v in values]

    def _vector(self, raw: Any) -> np.ndarray:
        # None: a column read only for active rows, on an inactive one.
        return np.empty(0, dtype=np.float32) if raw is None else np.frombuffer(raw, dtype=np.float32)

    def _vector_param(self, vector: np.ndarray) -> Any:
        return np.ascontiguousarray(vector, dtype=np.float32).tobytes()

    def _insert_seq(self, sql: str, params: Sequence[Any]) -> int:
        return int(self._q(sql, params).lastrowid or 0)

    # ---- scope state -------------------------------------------------------

    def scope_vectors(self, scope: Scope, dim: int) -> VectorsRow:
        rows = self._q(
            "SELECT seq, id, embedding, share, text FROM memories WHERE scope_key = ? AND is_active = 1 ORDER BY seq",
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
        shares = np.array([none_to_nan(r[3]) for r in rows], dtype=np.float64)
        return VectorsRow(seqs=seqs, ids=[r[1] for r in rows], matrix=matrix, shares=shares,
                          texts=[r[4] for r in rows])

    # ---- memories ------------------------------------------------------------

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


if TYPE_CHECKING:
    # mypy checks here that this store is a Store, and that what its
    # transaction yields is a WriteTx.
    def _is_a_store(store: SQLiteStore) -> tuple[Store, WriteTx]:
        return store, store

    # ... and that it holds the merges of scheduled consolidation too.
    def _is_a_merge_store(store: SQLiteStore) -> MergeTx:
        return store
