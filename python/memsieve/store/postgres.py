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
from memsieve.store.sql_folds import SqlFolds
from memsieve.store.sql_merges import SqlMerges
from memsieve.store.sql_purge import SqlPurge

if TYPE_CHECKING:
    from memsieve.store.base import MergeTx, Store, WriteTx


#: The tables a purge erases texts from, vacuumed after it (and rewritten by ``compact``).
PURGED_TABLES = ("memories", "memory_versions", "memory_parts", "version_parts", "history", "rejections", "faults",
                 "replies")

#: Why an erasure is pending on PostgreSQL after a purge and its VACUUM.
DEAD_TUPLES_PENDING = (
    "PostgreSQL's VACUUM after the purge dropped the old row versions but does not overwrite them: their "
    "bytes stay in the free space of the tables' pages ({tables}) until the pages are rewritten; run "
    "compact() (VACUUM FULL, which locks each table ACCESS EXCLUSIVE while it is rewritten) to erase them")

#: Who may still see old row versions: other sessions' snapshots, prepared transactions, replication slots.
_OLD_SNAPSHOTS = (
    "SELECT 'session ' || pid::text FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
    " AND datname = current_database() AND backend_xmin IS NOT NULL AND backend_type <> 'autovacuum worker'"
    " AND (%s::bigint IS NULL OR age(backend_xmin) >= age(%s::text::xid))"
    " UNION ALL SELECT 'prepared transaction ' || gid FROM pg_prepared_xacts WHERE database = current_database()"
    " UNION ALL SELECT 'replication slot ' || slot_name FROM pg_replication_slots"
    " WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL"
)


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


def holds_a_store(url: str, *, timeout: float = 30.0) -> bool:
    """Whether the database (in the URL's search_path) holds memsieve's tables, without creating them.

    Raises:
        StoreError: the server cannot be reached.
    """
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout + 0.5)),
                             application_name="memsieve") as conn:
            row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
            return bool(row and row[0])
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to {mask_password(url)}: {_say(exc)}; check the URL and that the "
                         "server is running") from exc


class PostgresStore(SqlPurge, SqlMerges, SqlFolds):
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
        #: Why a purge's bytes may still be in the tables' files (None: none known, in this process).
        self._erasure_pending: str | None = None
        #: The 32-bit id of the last purging transaction of this process (for compact's snapshot check).
        self._purge_xid: int | None = None
        import psycopg

        with self.lock:
            conn = self._connect()
            try:
                migrate(conn)
                register_vector(conn)
            except psycopg.Error as exc:
                conn.close()
                raise StoreError(
                    f"cannot set up memsieve's tables in {self.path}: {_say(exc)}; the URL's search_path must "
                    "name a schema that exists and that this role may create tables in (e.g. CREATE SCHEMA "
                    "memsieve, then ?options=-csearch_path%3Dmemsieve)") from exc
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
            self._clear_stamp()
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
                    if self._purged:
                        self._purge_xid = int(conn.execute("SELECT mod(txid_current(), 4294967296)").fetchone()[0])
            except psycopg.Error as exc:
                raise StoreError(f"postgresql transaction failed on {self.path}: {_say(exc)}") from exc
            finally:
                self._in_tx = False
                self._clear_stamp()
            if self._purged:
                self._purged = False
                self._erasure_pending = DEAD_TUPLES_PENDING.format(tables=", ".join(PURGED_TABLES))
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
            # ANALYZE too: the planner's statistics sample the columns' values (pg_statistic's
            # histograms hold texts), and only a new sample drops an erased one from them.
            self._q(f"VACUUM (ANALYZE) {', '.join(PURGED_TABLES)}")
            return True

    @property
    def erasure_pending(self) -> str | None:
        """Why what a purge of this process erased may still be in the tables' files; None when compacted."""
        return self._erasure_pending

    def finish_erasure(self, *, wait: float = 0.0) -> str | None:
        """Report a pending erasure; PostgreSQL has nothing cheap to finish it with (see ``compact``).

        ``wait`` is accepted for symmetry with SQLite. Only purges made through
        this store object are known; a new process reports None until it purges.
        """
        self._connection()  # a closed store says so, as every other call does
        return self._erasure_pending

    def compact(self) -> str | None:
        """Rewrite the tables a purge erases from (``VACUUM FULL``), then ``CHECKPOINT``, so no byte of a
        purged text or embedding stays in their files.

        ``VACUUM`` frees a dead row version's space but leaves its bytes on the
        page; ``VACUUM FULL`` copies the live rows of each table into new
        files, rebuilds its indexes and its TOAST table, and the old files are
        truncated when it commits. Cost: each table is locked ACCESS EXCLUSIVE
        while it is rewritten, which blocks every read and write of it (all
        memsieve processes on this database wait, up to their timeout), and it
        needs room for a second copy of the table. A lock not granted within
        the store's timeout fails with StoreError, nothing changed. The
        ``CHECKPOINT`` (superuser or pg_checkpoint) writes the new pages out
        now; refused, the server's next checkpoint does. Not erased by this:
        PostgreSQL's WAL segments (pg_wal) and archives and backups, which may
        hold the text until they are recycled or expire.

        Returns:
            None when done; else why it is still pending: a snapshot older than
            the purge (another session's open transaction, a prepared
            transaction, a replication slot) makes VACUUM FULL keep the old
            row versions for it: end it and compact again.

        Raises:
            StoreError: called inside a write transaction, or the rewrite failed.
        """
        import psycopg

        with self.lock:
            if self._in_tx:
                raise StoreError("compact inside a write transaction; call it after the transaction ends")
            holders = [str(r[0]) for r in self._q(_OLD_SNAPSHOTS, (self._purge_xid, self._purge_xid)).fetchall()]
            try:
                self._q(f"VACUUM (FULL, ANALYZE) {', '.join(PURGED_TABLES)}")
            except StoreError as exc:
                held = f" (open now: {', '.join(sorted(holders))})" if holders else ""
                raise StoreError(f"compact could not rewrite {', '.join(PURGED_TABLES)}: {exc}; run it as the "
                                 f"tables' owner when no long transaction holds them{held}") from exc
            try:
                self._q("CHECKPOINT")
            except StoreError as exc:
                if not isinstance(exc.__cause__, psycopg.errors.InsufficientPrivilege):
                    raise
            if holders:
                self._erasure_pending = (
                    f"VACUUM FULL kept the old row versions for {', '.join(sorted(holders))}, which may still "
                    "see them (a snapshot older than the purge); end it and run compact() again")
            else:
                self._erasure_pending = None
            return self._erasure_pending

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
