"""Storage backends: SQLite (the embedded default) and PostgreSQL + pgvector."""

from __future__ import annotations

import os
from typing import Any

from memsieve.store.base import (CandidatesRow, ChangesRow, MemoryRow, ScopeRow, Store, StoreReader, VectorsRow,
                                  WriteTx)
from memsieve.store.sqlite import SQLiteStore

_PG_SCHEMES = ("postgresql://", "postgres://")


def open_store(path: str | os.PathLike[str], **options: Any) -> Store:
    """A SQLite store for a file path or ``":memory:"``, a PostgreSQL store for a ``postgresql://`` URL."""
    target = os.fspath(path)
    if target.startswith(_PG_SCHEMES):
        from memsieve.store.postgres import PostgresStore

        return PostgresStore(target, **options)
    return SQLiteStore(target, **options)


__all__ = ["CandidatesRow", "ChangesRow", "MemoryRow", "SQLiteStore", "ScopeRow", "Store", "StoreReader", "VectorsRow", "WriteTx",
           "open_store"]
