"""Numbered PostgreSQL schema migrations. Never edit a released step: add a new one.

The ``schema_version`` table records how many steps a database has applied.
Each step runs in its own transaction under a database-wide advisory lock, so
processes that open a new database at the same moment apply every step once.

The tables mirror the SQLite schema (store/migrations.py) column for column,
so both stores hand back the same records. Differences, and why:

- ``embedding`` is a pgvector ``vector`` (no fixed width: scopes may differ).
- Step 1 made ``fts`` a generated ``tsvector`` with a GIN index, in place of
  the FTS5 table; step 6 drops both, as SQLite's step 6 drops FTS5 (keyword
  search is the Rust core's per-scope index, the same on every store).
- Times stay ISO-8601 ``TEXT`` and JSON stays ``TEXT``: ``as_of`` compares
  ISO strings exactly as SQLite does, and any JSON that SQLite accepts (NaN
  included) round-trips unchanged.
"""

from __future__ import annotations

from typing import Any

from memsieve.errors import StoreError
from memsieve.store.migrations import MERGES, MEMORY_VERSIONS, REJECTION_INFORMATION

#: Advisory-lock key that serializes migrations (a fixed 63-bit constant: the
#: bytes of "memsieve" read as an integer).
MIGRATION_LOCK_KEY = int.from_bytes(b"memsieve", "big") & 0x7FFF_FFFF_FFFF_FFFF

MIGRATIONS: list[str] = [
    # 1: memories, their history, rejections, links, scope state, counters, faults.
    """
    CREATE TABLE scopes (
        scope_key   TEXT PRIMARY KEY,
        user_id     TEXT,
        agent_id    TEXT,
        run_id      TEXT,
        revision    BIGINT NOT NULL DEFAULT 0,
        dim         INTEGER,
        gate_state  BYTEA,
        sage_tau    DOUBLE PRECISION,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE memories (
        seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        scope_key    TEXT NOT NULL REFERENCES scopes(scope_key),
        text         TEXT NOT NULL,
        text_hash    TEXT NOT NULL,
        embedding    vector NOT NULL,
        nn_cos       DOUBLE PRECISION,
        metadata     TEXT NOT NULL DEFAULT '{}',
        source       TEXT,
        sources      TEXT NOT NULL DEFAULT '[]',
        seen_count   INTEGER NOT NULL DEFAULT 1,
        last_seen_at TEXT,
        valid_from   TEXT,
        valid_to     TEXT,
        created_at   TEXT NOT NULL,
        updated_at   TEXT,
        expired_at   TEXT,
        is_active    BOOLEAN NOT NULL DEFAULT TRUE,
        fts          tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED
    );
    CREATE INDEX memories_scope_active ON memories(scope_key, is_active);
    CREATE INDEX memories_scope_hash ON memories(scope_key, text_hash) WHERE is_active;
    CREATE INDEX memories_fts ON memories USING GIN (fts);
    CREATE TABLE history (
        seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        memory_id  TEXT NOT NULL,
        scope_key  TEXT NOT NULL,
        event      TEXT NOT NULL,
        old_text   TEXT,
        new_text   TEXT,
        layer      TEXT NOT NULL,
        reason     TEXT NOT NULL DEFAULT '',
        extra      TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    );
    CREATE INDEX history_memory ON history(memory_id);
    CREATE TABLE rejections (
        seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id                 TEXT NOT NULL UNIQUE,
        scope_key          TEXT NOT NULL,
        text               TEXT NOT NULL,
        source             TEXT,
        metadata           TEXT NOT NULL DEFAULT '{}',
        layer              TEXT NOT NULL,
        novelty            DOUBLE PRECISION,
        tau                DOUBLE PRECISION,
        delta              DOUBLE PRECISION,
        kappa              DOUBLE PRECISION,
        nearest_id         TEXT,
        nearest_cos        DOUBLE PRECISION,
        reason             TEXT NOT NULL,
        valid_from         TEXT,
        created_at         TEXT NOT NULL,
        restored_memory_id TEXT,
        restored_at        TEXT
    );
    CREATE INDEX rejections_scope ON rejections(scope_key, created_at);
    CREATE TABLE links (
        memory_id  TEXT NOT NULL,
        linked_id  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        cosine     DOUBLE PRECISION,
        created_at TEXT NOT NULL,
        PRIMARY KEY (memory_id, linked_id, kind)
    );
    CREATE INDEX links_linked ON links(linked_id);
    CREATE TABLE counters (
        scope_key TEXT NOT NULL,
        event     TEXT NOT NULL,
        layer     TEXT NOT NULL,
        n         BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (scope_key, event, layer)
    );
    CREATE TABLE faults (
        seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        scope_key  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        detail     TEXT NOT NULL,
        raw        TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX faults_scope ON faults(scope_key)
    """,
    # 2: the scope revision at which each memory last changed (see the SQLite step 2).
    """
    ALTER TABLE memories ADD COLUMN changed_rev BIGINT NOT NULL DEFAULT 0;
    CREATE INDEX memories_scope_changed ON memories(scope_key, changed_rev)
    """,
    # 3: every superseded text of a memory and the interval the store knew it
    # (see the SQLite step 3).
    MEMORY_VERSIONS.format(seq="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", seq_ref="BIGINT",
                           vector="vector"),
    # 4: nn_cos holds 1 - novelty, a "share" (see the SQLite step 4).
    """
    ALTER TABLE memories RENAME COLUMN nn_cos TO share
    """,
    # 5: the information term of rejections and the purge's lookups (see the
    # SQLite step 5). A purged memory keeps no embedding: pgvector has no
    # zero-width vector, so the column admits NULL (SQLite stores an empty BLOB).
    REJECTION_INFORMATION.format(real="DOUBLE PRECISION") + """;
    ALTER TABLE memories ALTER COLUMN embedding DROP NOT NULL
    """,
    # 6: no full-text column (see the SQLite step 6).
    """
    DROP INDEX memories_fts;
    ALTER TABLE memories DROP COLUMN fts
    """,
    # 7: the same dedup index as the SQLite step 7, so both stores plan alike.
    """
    CREATE INDEX memories_scope_hash_active ON memories(scope_key, text_hash, is_active)
    """,
    # 8: the merges of scheduled consolidation (see the SQLite step 8); the
    # same text columns on both stores.
    MERGES,
]

#: Every table the migrations create (for size_bytes and integrity_ok).
TABLES = ("scopes", "memories", "memory_versions", "history", "rejections", "links", "counters", "faults",
          "schema_version", "merges")


def migrate(conn: Any) -> int:
    """Create pgvector if needed and apply the steps this database lacks.

    Args:
        conn: a psycopg connection in autocommit mode.

    Returns:
        The schema version after migrating.

    Raises:
        StoreError: pgvector cannot be created here, or the database is newer
            than this version of memsieve.
    """
    import psycopg

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            with conn.transaction():  # a savepoint, so the error message can be ours
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot create the pgvector extension: {exc.diag.message_primary or exc}; install pgvector on the "
                "server and run CREATE EXTENSION vector as a superuser in this database"
            ) from exc
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    while True:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            current = 0 if row is None else int(row[0])
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"database schema version {current} is newer than this memsieve understands "
                    f"({len(MIGRATIONS)}); upgrade memsieve"
                )
            if current == len(MIGRATIONS):
                return current
            for statement in _split(MIGRATIONS[current]):
                conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO schema_version(version) VALUES (%s)", (current + 1,))
            else:
                conn.execute("UPDATE schema_version SET version = %s", (current + 1,))


def schema_version(conn: Any) -> int:
    """How many steps the database has applied (0 for a fresh database)."""
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return 0 if row is None else int(row[0])


def _split(script: str) -> list[str]:
    # One statement per execute keeps psycopg on the extended protocol. No
    # statement here contains a literal ';'.
    return [s.strip() for s in script.split(";") if s.strip()]
