"""The PostgreSQL + pgvector store: one interface with SQLite, for many processes and machines.

One connection per store, guarded by a re-entrant lock so threads share it
safely, in autocommit mode: every statement outside ``transaction`` is its own
transaction. ``transaction(scope)`` opens one database transaction and takes a
transaction-scoped advisory lock keyed by the scope, so gate decisions of one
scope serialize across processes and machines while other scopes proceed. The
scope's revision counter (bumped by every committed write) is how the other
writers' in-process caches notice the change.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from memsieve.errors import ClosedError, StoreError
from memsieve.scope import Scope
from memsieve.store.base import VectorsRow, check_durability, none_to_nan
from memsieve.store.pg_migrations import MIGRATIONS, TABLES, migrate
from memsieve.store.postgres_codec import mask_password, register_vector
from memsieve.store.sql_merges import SqlMerges
from memsieve.store.sql_purge import SqlPurge

if TYPE_CHECKING:
    from memsieve.store.base import MergeTx, Store, WriteTx


#: The tables a purge erases texts from, vacuumed after it.
PURGED_TABLES = ("memories", "memory_versions", "history", "rejections", "faults")


def scope_lock_key(scope: Scope | None) -> int:
    """The signed 64-bit advisory-lock key of a scope (None: one store-wide key).

    SHA-256 of the scope key, not PostgreSQL's 32-bit ``hashtext``: with 64 bits,
    two scopes sharing a lock (and so waiting on each other) is negligible.
    """
    key = "memsieve-scope:" + (scope.key if scope is not None else "*")
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big", signed=True)


def _say(exc: BaseException) -> str:
    """The server's message on one line (libpq's span several)."""
    return " ".join(str(exc).split())


class PostgresStore(SqlPurge, SqlMerges):
    """Memories, history, rejections, links, counters and scope state in a PostgreSQL database.

    Args:
        url: ``postgresql://user:password@host:port/dbname`` (libpq URL options
            such as ``?sslmode=require`` pass through).
        timeout: seconds to wait for the connection, and for another writer's
            lock on a scope, before raising StoreError.
    """

    #: hnswlib indexes of a server store live in process memory only: many
    #: machines share the database, and none of them owns a directory beside it.
    index_dir: str | None = None

    def __init__(self, url: str, *, timeout: float = 30.0, durability: str = "normal") -> None:
        self._url = str(url)
        self.path = mask_password(self._url)
        self.timeout = float(timeout)
        self.durability = check_durability(durability)
        self.lock = threading.RLock()
        self._in_tx = False
        self._closed = False
        self._conn: Any = None
        with self.lock:
            conn = self._connect()
            try:
                migrate(conn)
                register_vector(conn)
            except BaseException:
                conn.close()
                raise

    # ---- connection ----------------------------------------------------------

    def _connect(self) -> Any:
        import psycopg

        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=max(1, int(self.timeout + 0.5)),
                                   application_name="memsieve")
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot connect to {self.path}: {_say(exc)}; check the URL and that the server is running"
            ) from exc
        # The advisory lock on a busy scope waits at most this long.
        conn.execute(f"SET lock_timeout = {int(self.timeout * 1000)}")
        # "full" insists on the WAL flush per commit; "normal" keeps the server's
        # setting (on by default, which is "full" already). Never off: that can
        # lose commits to a server crash, which "normal" promises to survive.
        if self.durability == "full":
            conn.execute("SET synchronous_commit = on")
        if self._conn is not None:  # a reconnect: the schema is there, only the adapters are new
            register_vector(conn)
        self._conn = conn
        return conn

    def _connection(self) -> Any:
        if self._closed:
            raise ClosedError(f"the store {self.path}")
        if self._conn.closed and not self._in_tx:
            # The server restarted or the network dropped: the statement that saw
            # it failed, and the next one gets a new connection.
            self._connect()
        return self._conn

    # ---- the dialect (the hooks of SqlRecords; its TRUE and FALSE are PostgreSQL's) ----

    _NO_VECTOR = None  # pgvector has no zero-width vector; migration 5 made the column nullable

    def _in(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(%s)", [[int(v) for v in values]]

    def _in_text(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(%s)", [[str(v) for v in values]]

    def _vector(self, raw: Any) -> np.ndarray:
        # None: a purged memory's embedding, or one read only for active rows.
        return np.empty(0, dtype=np.float32) if raw is None else np.asarray(raw, dtype=np.float32)

    def _vector_param(self, vector: np.ndarray) -> Any:
        return np.asarray(vector, dtype=np.float32)  # the pgvector dumper registered on the connection

    def _insert_seq(self, sql: str, params: Sequence[Any]) -> int:
        return int(self._q(sql + " RETURNING seq", params).fetchone()[0])

    # ---- statements ----------------------------------------------------------

    def _q(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> Any:
        import psycopg

        with self.lock:
            try:
                return self._connection().cursor(binary=binary).execute(sql, params)
            except psycopg.OperationalError as exc:
                # A read outside a transaction that found the connection dead (a
                # server restart, a dropped network) is retried once on a new one.
                # Writes are not: whether a lost autocommit write landed is unknown.
                if self._in_tx or not self._conn.closed or not sql.lstrip().upper().startswith("SELECT"):
                    raise StoreError(f"postgresql error on {self.path}: {_say(exc)}") from exc
                try:
                    return self._connection().cursor(binary=binary).execute(sql, params)
                except psycopg.Error as again:
                    raise StoreError(f"postgresql error on {self.path}: {_say(again)}") from again
            except psycopg.Error as exc:
                raise StoreError(f"postgresql error on {self.path}: {_say(exc)}") from exc

    def close(self) -> None:
        with self.lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()

    # ---- transactions --------------------------------------------------------

    @contextmanager
    def transaction(self, scope: Scope | None = None) -> Iterator["PostgresStore"]:
        """One database transaction holding the scope's advisory lock until it ends.

        Writers of the same scope (in any process, on any machine) wait for each
        other; writers of different scopes do not. ``scope=None`` takes one
        store-wide key instead.

        Raises:
            StoreError: the lock was not granted within ``timeout`` seconds, or
                the database failed; nothing inside was committed.
        """
        import psycopg

        with self.lock:
            if self._in_tx:
                raise StoreError("nested write transaction; this is a bug in memsieve")
            conn = self._connection()
            self._in_tx = True
            self._purged = False
            try:
                with conn.transaction():
                    try:
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (scope_lock_key(scope),))
                    except psycopg.errors.LockNotAvailable as exc:
                        raise StoreError(
                            f"cannot lock scope {scope.key if scope else '(store-wide)'} of {self.path} for "
                            f"writing within {self.timeout:g} s; another writer holds it: retry, or raise timeout"
                        ) from exc
                    yield self
            except psycopg.Error as exc:
                raise StoreError(f"postgresql transaction failed on {self.path}: {_say(exc)}") from exc
            finally:
                self._in_tx = False
            if self._purged:
                self._purged = False
                try:
                    self.checkpoint()
                except StoreError as exc:
                    raise StoreError(f"the purge committed, but {exc}; run VACUUM on {', '.join(PURGED_TABLES)} "
                                     "as their owner to drop the old row versions") from exc

    def checkpoint(self) -> bool:
        """``VACUUM`` the tables a purge erases from, so the old row versions holding erased texts are dropped.

        PostgreSQL keeps an updated row's old version until VACUUM, and only
        drops it once no open transaction can still see it; its WAL and any
        backups keep what they recorded until they are recycled. Always True
        (the server reports no partial vacuum).

        Raises:
            StoreError: called inside a write transaction, or VACUUM failed.
        """
        with self.lock:
            if self._in_tx:
                raise StoreError("checkpoint inside a write transaction; call it after the transaction ends")
            self._q(f"VACUUM {', '.join(PURGED_TABLES)}")
            return True

    # ---- scope state ---------------------------------------------------------

    def scope_vectors(self, scope: Scope, dim: int) -> VectorsRow:
        # One row for the whole scope: the embeddings arrive as one buffer of
        # pgvector binary records and become the matrix in a single frombuffer,
        # about ten times faster than decoding row by row. Another writer's
        # commit makes every cache reload its scope, so this is on the hot path.
        row = self._q(
            "SELECT COUNT(*), COALESCE(array_agg(seq ORDER BY seq), '{}'), COALESCE(array_agg(id ORDER BY seq), '{}'),"
            " COALESCE(string_agg(vector_send(embedding), ''::bytea ORDER BY seq), ''::bytea),"
            " COALESCE(array_agg(share ORDER BY seq), '{}'), COALESCE(array_agg(text ORDER BY seq), '{}')"
            " FROM memories WHERE scope_key = %s AND is_active",
            (scope.key,), binary=True,
        ).fetchone()
        n, seqs, ids, blob, shares, texts = int(row[0]), row[1], row[2], bytes(row[3]), row[4], row[5]
        width = 4 + 4 * dim  # uint16 dim, uint16 reserved, dim big-endian float32
        records = np.frombuffer(blob, dtype=">u2", count=len(blob) // 2) if len(blob) == n * width else None
        if records is None or (n and not np.all(records.reshape(n, width // 2)[:, 0] == dim)):
            self._raise_width_mismatch(scope, dim)
        matrix = np.frombuffer(blob, dtype=">f4").reshape(n, dim + 1)[:, 1:].astype(np.float32)
        return VectorsRow(seqs=np.asarray(seqs, dtype=np.int64).reshape(n), ids=[str(i) for i in ids],
                          matrix=np.ascontiguousarray(matrix).reshape(n, dim),
                          shares=np.array([none_to_nan(x) for x in shares], dtype=np.float64),
                          texts=[str(t) for t in texts])

    def _raise_width_mismatch(self, scope: Scope, dim: int) -> None:
        row = self._q("SELECT id, vector_dims(embedding) FROM memories WHERE scope_key = %s AND is_active"
                      " AND vector_dims(embedding) <> %s ORDER BY seq LIMIT 1", (scope.key, dim)).fetchone()
        got = f"memory {row[0]} has a {row[1]}-d embedding" if row else "an embedding has another width"
        raise StoreError(
            f"{got} but the scope is {dim}-d; "
            "the embedder changed: re-embed with the original model or use a new database"
        )

    # ---- memories ------------------------------------------------------------

    def size_bytes(self) -> int:
        """Bytes on disk of memsieve's tables, with their indexes and TOAST (not the whole database)."""
        row = self._q(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY(%s)",
            (list(TABLES),),
        ).fetchone()
        return int(row[0])

    def integrity_ok(self) -> bool:
        """The server answers, the schema is current, and the data holds memsieve's invariants.

        PostgreSQL guards its own pages (WAL, checksums if enabled); what can go
        wrong above it is memsieve's bookkeeping, so this checks that: every
        active memory's width matches its scope, every scope revision is
        non-negative, and every history row and link points at a memory.
        """
        row = self._q(
            "SELECT"
            " (SELECT version FROM schema_version),"
            " (SELECT COUNT(*) FROM memories m JOIN scopes s ON s.scope_key = m.scope_key"
            "   WHERE m.is_active AND s.dim IS NOT NULL AND vector_dims(m.embedding) <> s.dim),"
            " (SELECT COUNT(*) FROM scopes WHERE revision < 0),"
            " (SELECT COUNT(*) FROM history h WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id)),"
            " (SELECT COUNT(*) FROM links l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.memory_id)"
            "   OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.linked_id))"
        ).fetchone()
        return row is not None and row[0] == len(MIGRATIONS) and row[1:] == (0, 0, 0, 0)


if TYPE_CHECKING:
    # mypy checks here that this store is a Store, and that what its
    # transaction yields is a WriteTx.
    def _is_a_store(store: PostgresStore) -> tuple[Store, WriteTx]:
        return store, store

    # ... and that it holds the merges of scheduled consolidation too.
    def _is_a_merge_store(store: PostgresStore) -> MergeTx:
        return store
