"""memsieve: long-term memory for LLM agents whose write path decides by arithmetic."""

from memsieve._core import __version__
from memsieve.errors import (
    ConfigError,
    DtypeError,
    EmbedderError,
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
    "ConfigError",
    "DtypeError",
    "EmbedderError",
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
