"""Numbered SQLite schema migrations. Never edit a released step: add a new one.

``PRAGMA user_version`` records how many steps a database has applied.
"""

from __future__ import annotations

import sqlite3

from memsieve.errors import StoreError

#: Step 3 of both stores, which differ only in their types: every superseded
#: text of a memory, with its vector and the interval [known_from, known_to)
#: the store knew it.
MEMORY_VERSIONS = """
    CREATE TABLE memory_versions (
        seq        {seq},
        memory_seq {seq_ref} NOT NULL REFERENCES memories(seq),
        text       TEXT NOT NULL,
        text_hash  TEXT NOT NULL,
        embedding  {vector} NOT NULL,
        known_from TEXT NOT NULL,
        known_to   TEXT NOT NULL
    );
    CREATE INDEX memory_versions_memory ON memory_versions(memory_seq, known_to)
    """

#: Step 5 of both stores (with each store's float type): the gate's
#: information term on every rejection, and the indexes a purge and the
#: freshness reads look rows up by (a rejection by the memory it was folded
#: into or restored as, a link by either end).
REJECTION_INFORMATION = """
    ALTER TABLE rejections ADD COLUMN information {real};
    CREATE INDEX rejections_nearest ON rejections(nearest_id);
    CREATE INDEX rejections_restored ON rejections(restored_memory_id) WHERE restored_memory_id IS NOT NULL
    """

#: Step 8 of both stores: the merges scheduled consolidation made, each with
#: the state its members had before (JSON), so ``unconsolidate`` can put that
#: state back. No text is kept here: texts live in the memories, their
#: versions and their history, where a purge finds them.
MERGES = """
    CREATE TABLE merges (
        id         TEXT PRIMARY KEY,
        scope_key  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        kept_id    TEXT NOT NULL,
        member_ids TEXT NOT NULL,
        reason     TEXT NOT NULL,
        state      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        undone_at  TEXT
    );
    CREATE INDEX merges_scope ON merges(scope_key, created_at)
    """

MIGRATIONS: list[str] = [
    # 1: memories, their history, rejections, links, scope state, counters, faults.
    """
    CREATE TABLE scopes (
        scope_key   TEXT PRIMARY KEY,
        user_id     TEXT,
        agent_id    TEXT,
        run_id      TEXT,
        revision    INTEGER NOT NULL DEFAULT 0,
        dim         INTEGER,
        gate_state  BLOB,
        sage_tau    REAL,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE memories (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT NOT NULL UNIQUE,
        scope_key    TEXT NOT NULL REFERENCES scopes(scope_key),
        text         TEXT NOT NULL,
        text_hash    TEXT NOT NULL,
        embedding    BLOB NOT NULL,
        nn_cos       REAL,
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
        is_active    INTEGER NOT NULL DEFAULT 1
    );
    CREATE INDEX memories_scope_active ON memories(scope_key, is_active);
    CREATE INDEX memories_scope_hash ON memories(scope_key, text_hash) WHERE is_active = 1;
    CREATE TABLE history (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
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
        seq                INTEGER PRIMARY KEY AUTOINCREMENT,
        id                 TEXT NOT NULL UNIQUE,
        scope_key          TEXT NOT NULL,
        text               TEXT NOT NULL,
        source             TEXT,
        metadata           TEXT NOT NULL DEFAULT '{}',
        layer              TEXT NOT NULL,
        novelty            REAL,
        tau                REAL,
        delta              REAL,
        kappa              REAL,
        nearest_id         TEXT,
        nearest_cos        REAL,
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
        cosine     REAL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (memory_id, linked_id, kind)
    );
    CREATE TABLE counters (
        scope_key TEXT NOT NULL,
        event     TEXT NOT NULL,
        layer     TEXT NOT NULL,
        n         INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (scope_key, event, layer)
    );
    CREATE TABLE faults (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        scope_key  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        detail     TEXT NOT NULL,
        raw        TEXT,
        created_at TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE memories_fts USING fts5(text, tokenize = 'porter unicode61');
    """,
    # 2: the scope revision at which each memory last changed, so a process whose
    # cached gate is behind re-reads only what changed, not the whole scope.
    """
    ALTER TABLE memories ADD COLUMN changed_rev INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX memories_scope_changed ON memories(scope_key, changed_rev)
    """,
    # 3: every superseded text of a memory, with its vector and the interval the
    # store knew it [known_from, known_to), so a point-in-time read sees the
    # text and the vector that held then, not today's.
    MEMORY_VERSIONS.format(seq="INTEGER PRIMARY KEY AUTOINCREMENT", seq_ref="INTEGER", vector="BLOB"),
    # 4: the column holds 1 - novelty at the time of the ADD (a "share" of the
    # threshold), not a cosine; it is named for what it holds.
    """
    ALTER TABLE memories RENAME COLUMN nn_cos TO share
    """,
    # 5: the information term of rejections and the purge's lookups (see
    # REJECTION_INFORMATION); PostgreSQL has had links_linked since step 1.
    REJECTION_INFORMATION.format(real="REAL") + """;
    CREATE INDEX links_linked ON links(linked_id)
    """,
    # 6: keyword search is the Rust core's per-scope bm25 index, rebuilt from
    # the memories' texts; the FTS5 table (global statistics, a second copy of
    # every text for a purge to chase) goes, its shadow tables with it.
    """
    DROP TABLE memories_fts
    """,
    # 7: exact dedup looks a text up by (scope, hash, active). Without statistics
    # SQLite preferred memories_scope_active (two equalities) over the partial
    # hash index and scanned every active memory of the scope on each add (1.9
    # ms at 2,000 memories); three equalities win the plan.
    """
    CREATE INDEX memories_scope_hash_active ON memories(scope_key, text_hash, is_active)
    """,
    # 8: the merges of scheduled consolidation, undoable (see MERGES).
    MERGES,
    # 9: step 7's index answers every lookup the partial hash index of step 1
    # did, and no plan chose the older one since; each ADD kept both up to
    # date, 1.3 of the ~15 pages its commit wrote to the WAL.
    """
    DROP INDEX IF EXISTS memories_scope_hash
    """,
]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the steps this database lacks, each in its own write transaction.

    The version is read only after ``BEGIN IMMEDIATE`` has taken the write
    lock: processes opening one new file at the same moment then apply each
    step exactly once, the later ones finding it done. A database already at
    the current version is recognised without taking the lock, so opening a
    busy store does not wait for its writers.

    Returns:
        The schema version after migrating.

    Raises:
        StoreError: the database is newer than this version of memsieve.
        sqlite3.Error: the file is not a database, is damaged, or stayed locked
            (the store turns these into StoreError).
    """
    (current,) = conn.execute("PRAGMA user_version").fetchone()
    _check_known(current)
    while current < len(MIGRATIONS):
        conn.execute("BEGIN IMMEDIATE")
        try:
            (current,) = conn.execute("PRAGMA user_version").fetchone()
            _check_known(current)
            if current < len(MIGRATIONS):
                for statement in _split(MIGRATIONS[current]):
                    conn.execute(statement)
                current += 1
                conn.execute(f"PRAGMA user_version = {current}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return current


def _check_known(version: int) -> None:
    if version > len(MIGRATIONS):
        raise StoreError(
            f"database schema version {version} is newer than this memsieve understands "
            f"({len(MIGRATIONS)}); upgrade memsieve"
        )


def _split(script: str) -> list[str]:
    # executescript would commit implicitly; running statement by statement keeps
    # each migration step atomic. No statement here contains a literal ';'.
    return [s.strip() for s in script.split(";") if s.strip()]
