"""memsieve's exception hierarchy.

The numeric errors are raised by the Rust core and re-exported here; the rest
belong to the Python layers above it. Every class derives from MemsieveError,
so ``except memsieve.MemsieveError`` catches anything memsieve raises on purpose.
"""

from memsieve._core import (
    ConfigError,
    DtypeError,
    InvalidVectorError,
    MemsieveError,
    ShapeError,
    StateError,
)


class ScopeError(MemsieveError, ValueError):
    """No scope id was given, or an id is not a non-empty string."""


class InvalidTextError(MemsieveError, ValueError):
    """Text is empty, not a string, or over the documented length limit."""


class EmbedderError(MemsieveError):
    """The embedder failed or returned vectors of the wrong shape, dtype or norm."""


class StoreError(MemsieveError):
    """The store failed, or holds data this version cannot read."""


class NotFoundError(MemsieveError, LookupError):
    """No memory or rejection has the given id (in this scope)."""


class LLMError(MemsieveError):
    """The configured LLM endpoint failed or could not be reached."""


class LLMResponseError(LLMError):
    """The LLM answered, but the answer could not be parsed into a decision.

    Attributes:
        raw: the model's raw reply, kept for the fault record.
    """

    raw: str | None = None


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
]
