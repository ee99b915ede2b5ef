"""memsieve: long-term memory for LLM agents whose write path decides by arithmetic."""

from memsieve._core import __version__
from memsieve.gate.config import GateConfig
from memsieve.consolidation import ConsolidationReport, MergeConflictError
from memsieve.read.fusion import Fusion
from memsieve.memory import Memory
from memsieve.aio import AsyncMemory, AsyncScopedMemory
from memsieve.records import Decision, Forgotten, HistoryEntry, MemoryItem, Rejection, SearchResult
from memsieve.scope import Scope
from memsieve.scoped import ScopedMemory
from memsieve.write.purge import Erasure
from memsieve.errors import (
    CallbackError,
    ClosedError,
    ConfigError,
    DtypeError,
    EmbedderError,
    InvalidInputError,
    InvalidTextError,
    InvalidVectorError,
    LLMError,
    LLMResponseError,
    MemsieveError,
    NotFoundError,
    ScopeError,
    ShapeError,
    StateError,
    StoreError,
)

__all__ = [
    "AsyncMemory",
    "AsyncScopedMemory",
    "ConsolidationReport",
    "MergeConflictError",
    "Decision",
    "Erasure",
    "Forgotten",
    "Fusion",
    "GateConfig",
    "HistoryEntry",
    "Memory",
    "MemoryItem",
    "Rejection",
    "Scope",
    "ScopedMemory",
    "SearchResult",
    "CallbackError",
    "ClosedError",
    "ConfigError",
    "DtypeError",
    "EmbedderError",
    "InvalidInputError",
    "InvalidTextError",
    "InvalidVectorError",
    "LLMError",
    "LLMResponseError",
    "MemsieveError",
    "NotFoundError",
    "ScopeError",
    "ShapeError",
    "StateError",
    "StoreError",
    "__version__",
]
