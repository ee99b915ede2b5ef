"""The filters and namespace patterns of LangGraph's ``BaseStore``, evaluated as its ``InMemoryStore`` does.

Kept apart from the store so the rules can be read (and tested) on their own.
The reference is LangGraph's own in-memory store (a differential test,
tests/test_langgraph.py, runs both on the same puts and searches):

- A filter maps a top-level key of the item's value to a condition; a key
  the value lacks reads as None (so ``{"x": None}`` matches a missing ``x``,
  and a dotted key is a key, not a path).
- A condition that is a mapping with any ``$`` key is a set of operators,
  all of which must hold: ``$eq`` and ``$ne`` are Python's ``==`` and ``!=``
  (``1 == 1.0 == True``); ``$gt``, ``$gte``, ``$lt`` and ``$lte`` compare
  both sides as floats (``"10"`` is 10.0, ``True`` is 1.0), and a side that
  is no number (None, ``"abc"``, a list) makes the search fail with
  InvalidInputError, as LangGraph's store raises.
- Another mapping matches a mapping value key by key, recursively; a list or
  tuple matches a list or tuple of the same length element by element; any
  other condition is compared with ``==``.
- A search's namespace prefix is literal: ``"*"`` is a label like any
  other. A pattern of ``list_namespaces`` (prefix or suffix) is where
  ``"*"`` matches any one label.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memsieve.errors import InvalidInputError, short_repr

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}
OPERATORS: tuple[str, ...] = ("$eq", "$ne", *_ORDER)
_MISSING = object()


def check_filter(flt: Any) -> dict[str, Any]:
    """``flt`` as a dict, if it is a filter this module can evaluate.

    Raises:
        InvalidInputError: not a mapping with string keys, or an unknown ``$`` operator.
    """
    if flt is None:
        return {}
    if not isinstance(flt, Mapping) or not all(isinstance(k, str) and k for k in flt):
        raise InvalidInputError(f"filter must be a mapping of field names to conditions, got {short_repr(flt)}")
    for field, cond in flt.items():
        _check_condition(field, cond)
    return dict(flt)


def _check_condition(field: str, cond: Any) -> None:
    if isinstance(cond, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in cond):
            unknown = [op for op in cond if op not in OPERATORS]
            if unknown:
                raise InvalidInputError(f"filter on {field!r} uses unknown operator {unknown[0]!r}; "
                                        f"use one of {', '.join(OPERATORS)}")
            return
        for k, v in cond.items():
            _check_condition(f"{field}.{k}", v)
    elif isinstance(cond, (list, tuple)):
        for v in cond:
            _check_condition(field, v)


def lookup(value: Mapping[str, Any], path: str) -> Any:
    """The field at a dotted path of ``value`` (``"a.b"`` is ``value["a"]["b"]``); a missing one is _MISSING.

    For the fields a store indexes, not for filters (a filter's key is a top-level key).
    """
    if path in value:  # a key that itself holds a dot wins over the nested reading
        return value[path]
    node: Any = value
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _number(x: Any, op: str) -> float:
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(f"filter operator {op!r} compares numbers, and {short_repr(x)} is none; "
                                f"filter on a field that holds numbers (or numeric strings)") from None


def _holds(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    return _ORDER[op](_number(actual, op), _number(operand, op))


def _agrees(actual: Any, cond: Any) -> bool:
    """Whether a field's value (None when missing) meets one condition of a filter."""
    if isinstance(cond, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in cond):
            return all(_holds(actual, op, operand) for op, operand in cond.items())
        return isinstance(actual, Mapping) and all(_agrees(actual.get(k), v) for k, v in cond.items())
    if isinstance(cond, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(cond)
                and all(_agrees(a, c) for a, c in zip(actual, cond)))
    return bool(actual == cond)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    """Whether ``value`` passes every condition of a filter checked by :func:`check_filter`, in order.

    Raises:
        InvalidInputError: an order operator met a side that is not a number.
    """
    return all(_agrees(value.get(field), cond) for field, cond in flt.items())


def pattern_matches(namespace: Sequence[str], pattern: Sequence[str], *, at: str) -> bool:
    """Whether ``namespace`` starts (``at="prefix"``) or ends (``at="suffix"``) with ``pattern``."""
    if len(pattern) > len(namespace):
        return False
    part = namespace[: len(pattern)] if at == "prefix" else namespace[len(namespace) - len(pattern):]
    return all(p == "*" or p == label for label, p in zip(part, pattern))
