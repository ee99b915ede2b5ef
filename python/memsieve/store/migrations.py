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
    refuse_foreign(conn)
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


def refuse_foreign(conn: sqlite3.Connection) -> None:
    """Refuse another program's SQLite database before a step writes into it.

    A memsieve database at version 0 holds no table (the first step sets the
    version in the transaction that makes its tables), and one past it holds
    ``memories``; anything else is another program's file, left untouched
    (the store calls this before it sets WAL mode, which rewrites the header).
    The version and the tables are read in one statement, one snapshot: a
    process making a new file's tables meanwhile is seen before or after,
    never half."""
    version, names = conn.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT group_concat(name, char(31)) "
        "FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%')").fetchone()
    tables = set(names.split("\x1f")) if names else set()
    if (version == 0 and tables) or (version > 0 and "memories" not in tables):
        found = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(f"the file is an SQLite database of another program (user_version {version}, tables "
                         f"{found or 'none'}), not a memsieve database; pass a memsieve database or a new path")


def _check_known(version: int) -> None:
    if version > len(MIGRATIONS):
        raise StoreError(
            f"database schema version {version} is newer than this memsieve understands "
            f"({len(MIGRATIONS)}); upgrade memsieve"
        )
