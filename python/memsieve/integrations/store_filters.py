"""The filters and namespace patterns of LangGraph's ``BaseStore``, evaluated on plain values.

Kept apart from the store so the rules can be read (and tested) on their own:

- A filter maps a field (a dotted path into the item's value) to either a
  value, which must equal the field, or a mapping of operators: ``$eq``,
  ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``. Order comparisons hold only
  between two numbers or two strings (an ISO date compares as text); any other
  pair does not match, so a missing field never passes ``$gt``.
- A namespace pattern is a tuple of labels in which ``"*"`` matches any one
  label, anchored at the start (prefix) or the end (suffix) of a namespace.
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
        if _is_operators(cond):
            unknown = [op for op in cond if op not in OPERATORS]
            if unknown:
                raise InvalidInputError(f"filter on {field!r} uses unknown operator {unknown[0]!r}; "
                                        f"use one of {', '.join(OPERATORS)}")
    return dict(flt)


def _is_operators(cond: Any) -> bool:
    return isinstance(cond, Mapping) and bool(cond) and all(isinstance(k, str) and k.startswith("$") for k in cond)


def lookup(value: Mapping[str, Any], path: str) -> Any:
    """The field at a dotted path of ``value`` (``"a.b"`` is ``value["a"]["b"]``); a missing one is _MISSING."""
    if path in value:  # a key that itself holds a dot wins over the nested reading
        return value[path]
    node: Any = value
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _comparable(a: Any, b: Any) -> bool:
    def number(x: Any) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    return (number(a) and number(b)) or (isinstance(a, str) and isinstance(b, str))


def _holds(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return actual is not _MISSING and actual == operand
    if op == "$ne":
        return actual is _MISSING or actual != operand
    return actual is not _MISSING and _comparable(actual, operand) and _ORDER[op](actual, operand)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    """Whether ``value`` passes every condition of a filter checked by :func:`check_filter`."""
    for field, cond in flt.items():
        actual = lookup(value, field)
        if _is_operators(cond):
            if not all(_holds(actual, op, operand) for op, operand in cond.items()):
                return False
        elif actual is _MISSING or actual != cond:
            return False
    return True


def pattern_matches(namespace: Sequence[str], pattern: Sequence[str], *, at: str) -> bool:
    """Whether ``namespace`` starts (``at="prefix"``) or ends (``at="suffix"``) with ``pattern``."""
    if len(pattern) > len(namespace):
        return False
    part = namespace[: len(pattern)] if at == "prefix" else namespace[len(namespace) - len(pattern):]
    return all(p == "*" or p == label for label, p in zip(part, pattern))
