"""Caller values as the built-in types they claim to be.

A ``str`` subclass passes every ``isinstance(x, str)`` check, yet its own
``strip``, ``__len__`` or ``__hash__`` may raise, or lie; so may an ``int``
subclass's comparisons, or a ``dict`` subclass's ``items``. Reading such a value
in the validators raised the caller's exception from deep inside the library
instead of a ``MemsieveError``. ``plain`` copies a value into the exact built-in
types through their own slots (``str.__str__``, ``dict.items``), which call none
of the subclass's methods, and ``plain_arguments`` does so for every argument of
a class's public methods: ``Memory`` and ``Scoped`` take only plain values past
their first line.

Objects that are no subclass of a built-in (a ``Mapping`` of one's own, a
numpy array, a ``datetime``) are passed on as they are: the validators read
them through their documented interfaces.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from memsieve.errors import InvalidInputError

#: Containers nested deeper than this are passed on unread: the validators refuse
#: metadata nested past memsieve.inputs.MAX_METADATA_DEPTH, and a list holding
#: itself must not recurse without end here.
MAX_PLAIN_DEPTH = 100

_EXACT = (str, int, float, bool, type(None))
_CLAIMED = (str, int, float, dict, list, tuple)

T = TypeVar("T")


def plain(value: Any, _depth: int = 0) -> Any:
    """``value`` with every ``str``, ``int``, ``float``, ``dict``, ``list`` and ``tuple`` subclass in
    it (a named tuple too) copied into the built-in type; the value itself when it holds none.

    Raises:
        InvalidInputError: an object that says it is one of those types (its ``__class__``) but
            is none, or a dict two of whose keys are one string once read as ``str``.

    >>> class Shouty(str):
    ...     def strip(self):
    ...         raise RuntimeError("no")
    >>> type(plain(Shouty("a"))), plain({"k": [Shouty("b")]})
    (<class 'str'>, {'k': ['b']})
    """
    kind = type(value)
    if kind in _EXACT or _depth > MAX_PLAIN_DEPTH:
        return value
    try:
        if issubclass(kind, str):
            return str.__str__(value)
        if issubclass(kind, int):  # bool cannot be subclassed: only int's own subclasses are here
            return int.__int__(value)
        if issubclass(kind, float):
            return float.__float__(value)
        if issubclass(kind, dict):
            # dict.items reads the table itself: a subclass's items, keys or __iter__ is never called.
            pairs = [(plain(k, _depth + 1), plain(v, _depth + 1)) for k, v in dict.items(value)]
            if kind is dict and all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, dict.items(value))):
                return value
            out = dict(pairs)
            if len(out) < len(pairs):  # two keys the caller's own hashing kept apart are one string
                raise InvalidInputError(f"a dict holds two keys that are the same string once read as str "
                                        f"({len(pairs) - len(out)} repeated); pass each key once")
            return out
        if issubclass(kind, (list, tuple)):
            base = list.copy(value) if issubclass(kind, list) else tuple.__getitem__(value, slice(None))
            items = [plain(v, _depth + 1) for v in base]
            if kind in (list, tuple) and all(a is b for a, b in zip(items, base)):
                return value
            return items if issubclass(kind, list) else tuple(items)
    except RecursionError:
        return value
    # Not a subclass of a built-in, yet it may say it is one (a ``__class__`` that answers ``str``):
    # the validators' isinstance checks would take it for one and call methods it lacks.
    try:
        claims = isinstance(value, _CLAIMED)
    except Exception:  # noqa: BLE001 - a __class__ that raises is a claim nobody can check
        claims = True
    if claims:
        raise InvalidInputError(f"a value of type {kind.__name__} says it is a "
                                f"{'/'.join(t.__name__ for t in _CLAIMED)} but is none; pass the built-in value")
    return value


def plain_arguments(cls: type[T]) -> type[T]:
    """Make ``__init__`` and every public method of ``cls`` (not properties, not ``_private``) take
    ``plain`` arguments."""
    for name, attr in list(vars(cls).items()):
        if (name.startswith("_") and name != "__init__") or not inspect.isfunction(attr):
            continue
        setattr(cls, name, _taking_plain(attr))
    return cls


def _taking_plain(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return method(self, *[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})

    return call
