"""The PostgreSQL runner of the schema steps (store/schema.py).

The ``schema_version`` table records how many of PostgreSQL's steps a
database has applied; :data:`MIGRATIONS` lists them in order. Each step runs
in its own transaction under a database-wide advisory lock, so processes that
open a new database at the same moment apply every step once. How the
PostgreSQL schema differs from SQLite's, and why, is told in store/schema.py.
"""

from __future__ import annotations

from typing import Any

from memsieve.errors import StoreError
from memsieve.store.schema import POSTGRES, STEPS, Step

#: Advisory-lock key that serializes migrations (a fixed 63-bit constant: the
#: bytes of "memsieve" read as an integer).
MIGRATION_LOCK_KEY = int.from_bytes(b"memsieve", "big") & 0x7FFF_FFFF_FFFF_FFFF

#: PostgreSQL's steps in order: a database at version N has applied the first N.
MIGRATIONS: list[Step] = STEPS.steps(POSTGRES)

#: Every table the migrations create (for size_bytes and integrity_ok).
TABLES = ("scopes", "memories", "memory_versions", "history", "rejections", "links", "counters", "faults",
          "schema_version", "merges", "memory_parts", "version_parts")


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
            for statement in MIGRATIONS[current].statements:
                conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO schema_version(version) VALUES (%s)", (current + 1,))
            else:
                conn.execute("UPDATE schema_version SET version = %s", (current + 1,))


def schema_version(conn: Any) -> int:
    """How many steps the database has applied (0 for a fresh database)."""
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return 0 if row is None else int(row[0])


def applied_steps(conn: Any) -> list[str]:
    """The names of the steps this database has applied, in the order they ran."""
    return [step.name for step in MIGRATIONS[:schema_version(conn)]]
