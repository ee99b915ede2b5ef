"""memsieve's exception hierarchy.

The numeric errors are raised by the Rust core and re-exported here; the rest
belong to the Python layers above it. Every class derives from MemsieveError,
so ``except memsieve.MemsieveError`` catches anything memsieve raises on purpose.
"""

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

from memsieve._core import (
    ConfigError,
    DtypeError,
    InvalidVectorError,
    MemsieveError,
    ShapeError,
    StateError,
)


class ScopeError(MemsieveError, ValueError):
    """No scope id was given, or an id is not a non-empty string without control characters."""


class InvalidInputError(MemsieveError, ValueError):
    """An argument is malformed: metadata that is not JSON, a bad limit, time or source."""


class InvalidTextError(InvalidInputError):
    """Text is empty, not a string, holds characters no store can keep, or is over the length limit."""


class CallbackError(MemsieveError):
    """A function the caller passed (a ``progress`` callback) raised; the message says what stays done."""


class EmbedderError(MemsieveError):
    """The embedder failed or returned vectors of the wrong shape, dtype or norm."""


class StoreError(MemsieveError):
    """The store failed, or holds data this version cannot read."""


class NotFoundError(MemsieveError, LookupError):
    """No memory or rejection has the given id (in this scope).

    The message is the same whether the id does not exist or belongs to another
    scope, so a caller holding one scope learns nothing about the others.
    """

    @classmethod
    def no_memory(cls, memory_id: object) -> "NotFoundError":
        """The error for a memory id that is unknown (or not in the scope asked for)."""
        return cls(f"no memory with id {short_repr(memory_id)}; list the scope's memories to see their ids")

    @classmethod
    def no_rejection(cls, rejection_id: object) -> "NotFoundError":
        """The error for a rejection id that is unknown (or not in the scope asked for)."""
        return cls(f"no rejection with id {short_repr(rejection_id)}; list the scope's rejections to see their ids")


class ClosedError(StoreError):
    """The Memory (or its store) was closed; every later call raises this."""

    def __init__(self, what: str = "this Memory") -> None:
        super().__init__(f"{what} is closed; open a new one")


class LLMError(MemsieveError):
    """The configured LLM endpoint failed or could not be reached."""


class LLMResponseError(LLMError):
    """The LLM answered, but the answer could not be parsed into a decision.

    Attributes:
        raw: the model's raw reply, kept for the fault record.
    """

    raw: str | None = None


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for naming a bad value in a message.

    Never raises: a value whose ``__repr__`` fails (or recurses too deep) is
    named by its type.
    """
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__, or a structure nested past the recursion limit
        return f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_choice(value: object, choices: tuple[str, ...]) -> bool:
    """Whether ``value`` is one of the string ``choices``, asked without running the value's own
    ``__eq__`` (a numpy array answers ``==`` with an array, a hostile object with an exception)."""
    return isinstance(value, str) and str.__str__(value) in choices


def with_notes(exc: BaseException) -> str:
    """An error's message and the notes added to it (``add_note``: what an ``add_many`` committed
    before it failed), on one line."""
    return " ".join(" ".join([str(exc), *map(str, getattr(exc, "__notes__", ()))]).split())


def guarded(action: Callable[[], int]) -> int:
    """Run a command-line ``action``; a MemsieveError becomes one line on stderr and exit code 2.

    What the ``memsieve`` command and ``python -m memsieve.eval`` do with an
    error they raised on purpose: say it, never show a traceback.
    """
    try:
        return int(action() or 0)
    except MemsieveError as exc:
        # One line, whatever the message holds (a driver's error may carry line breaks).
        print("memsieve: error: " + with_notes(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("memsieve: interrupted", file=sys.stderr)
        return 130


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, as ``guarded``'s are: ``memsieve: error:
    ...`` and exit code 2, the usage left to ``--help``."""

    def error(self, message: str) -> NoReturn:
        print(f"memsieve: error: {' '.join(message.split())} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


__all__ = [
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
]

