"""The SQLite runner of the schema steps (store/schema.py).

``PRAGMA user_version`` records how many of SQLite's steps a database has
applied; :data:`MIGRATIONS` lists them in order.
"""

from __future__ import annotations

import sqlite3

from memsieve.errors import StoreError
from memsieve.store.schema import SQLITE, STEPS, Step

#: SQLite's steps in order: a database at version N has applied the first N.
MIGRATIONS: list[Step] = STEPS.steps(SQLITE)


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
                for statement in MIGRATIONS[current].statements:
                    conn.execute(statement)
                current += 1
                conn.execute(f"PRAGMA user_version = {current}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return current


def applied_steps(conn: sqlite3.Connection) -> list[str]:
    """The names of the steps this database has applied, in the order they ran."""
    (current,) = conn.execute("PRAGMA user_version").fetchone()
    _check_known(current)
    return [step.name for step in MIGRATIONS[:current]]


def _check_known(version: int) -> None:
    if version > len(MIGRATIONS):
        raise StoreError(
            f"database schema version {version} is newer than this memsieve understands "
            f"({len(MIGRATIONS)}); upgrade memsieve"
        )
