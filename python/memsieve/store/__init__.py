"""Storage backends."""

from memsieve.store.base import ScopeRow, VectorsRow
from memsieve.store.sqlite import SQLiteStore

__all__ = ["SQLiteStore", "ScopeRow", "VectorsRow"]
