"""Opening a SQLite file safely: the folder, the journal mode, and errors said plainly.

Everything that can go wrong while opening or reading a SQLite file becomes a
``StoreError`` naming the file and the fix: a folder that does not exist, a
file that is not a database, a damaged one, or a lock held past the timeout.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any

from memsieve.errors import StoreError

_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")
_DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def check_folder(path: str) -> None:
    """Refuse a database path whose folder does not exist (memsieve never creates folders on its own).

    Raises:
        StoreError: the folder is missing, or ``path`` is itself a folder.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise StoreError(f"folder {folder!r} of the database {path!r} does not exist; create it first "
                         "(mkdir -p), or pass a path in an existing folder")
    if os.path.isdir(path):
        raise StoreError(f"{path!r} is a folder, not a database file; pass a file path such as "
                         f"{os.path.join(path, 'memsieve.db')!r}")


def set_wal(conn: sqlite3.Connection, path: str, *, timeout: float) -> None:
    """Switch the file to write-ahead logging, retrying while another opener holds it.

    On a brand-new file the switch needs an exclusive lock, and SQLite reports
    SQLITE_BUSY at once (without waiting for the busy timeout) when another
    process is switching or migrating at the same moment. The mode is
    persistent, so a later attempt finds it already set.
    """
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            if str(mode).lower() == "wal":
                return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
        if time.monotonic() >= deadline:
            raise StoreError(f"cannot switch {path!r} to write-ahead logging within {timeout:g} s: another "
                             "process holds the file; retry, or raise timeout")
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


def is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", None)
    if name is not None:
        return str(name).startswith(_BUSY)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def store_error(exc: sqlite3.Error, path: str) -> StoreError:
    """The StoreError that says what a sqlite3 error means for the user of ``path``."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc)
    if name.startswith(_DAMAGED) or "not a database" in text or "malformed" in text:
        return StoreError(f"the file {path!r} is not a memsieve database or is damaged ({text}); pass the path of a "
                          "memsieve database or of a new file, or restore this one from a backup")
    if is_busy(exc):
        return StoreError(f"cannot lock {path!r} ({text}): another process holds it; retry, or raise timeout")
    return StoreError(f"sqlite error on {path!r}: {text}; check the file, its folder and their permissions")


class Rows:
    """A statement's rows, read to the end at once.

    Reading eagerly means an error met while stepping through a damaged file
    is raised (and translated) by the store, not later by the caller's loop.
    """

    __slots__ = ("_rows", "lastrowid")

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._rows: list[Any] = cursor.fetchall()
        self.lastrowid = cursor.lastrowid

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return self._rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


def run(conn: sqlite3.Connection, path: str, sql: str, params: Sequence[Any] = ()) -> Rows:
    """Execute one statement and read its rows, any sqlite3 error becoming a StoreError."""
    try:
        return Rows(conn.execute(sql, params))
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc
