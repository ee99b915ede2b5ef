"""Storage backends: SQLite (the embedded default) and PostgreSQL + pgvector."""

from __future__ import annotations

import os
from typing import Any

from memsieve.errors import StoreError
from memsieve.store.base import (CandidatesRow, ChangesRow, MemoryRow, ScopeRow, Store, StoreReader, VectorsRow,
                                  WriteTx)
from memsieve.store.sqlite import SQLiteStore

_PG_SCHEMES = ("postgresql://", "postgres://")


def default_path() -> str:
    """``$MEMSIEVE_DB``, else ``$XDG_DATA_HOME/memsieve/memsieve.db`` (``~/.local/share`` by default)."""
    if os.environ.get("MEMSIEVE_DB"):
        return os.environ["MEMSIEVE_DB"]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "memsieve", "memsieve.db")


def default_store() -> str:
    """``default_path()``, with its folder made: only an explicit path must already have one.

    Raises:
        StoreError: the folder cannot be made (a file in its place, no permission, a read-only disk).
    """
    path = default_path()
    if not path.startswith(_PG_SCHEMES):
        folder = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot make the default store's folder {folder!r} ({exc.strerror or exc}); "
                             "set MEMSIEVE_DB or XDG_DATA_HOME to a writable place, or pass a path") from None
    return path


def open_store(path: str | os.PathLike[str], **options: Any) -> Store:
    """A SQLite store for a file path or ``":memory:"``, a PostgreSQL store for a ``postgresql://`` URL."""
    target = os.fspath(path)
    if target.startswith(_PG_SCHEMES):
        from memsieve.store.postgres import PostgresStore

        return PostgresStore(target, **options)
    return SQLiteStore(target, **options)


__all__ = ["CandidatesRow", "ChangesRow", "MemoryRow", "SQLiteStore", "ScopeRow", "Store", "StoreReader", "VectorsRow", "WriteTx",
           "default_path", "default_store", "open_store"]
