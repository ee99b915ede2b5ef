"""Values as strict JSON takes them: one rule for the CLI's ``--json`` and the REST service."""

from __future__ import annotations

import math
from typing import Any


def strict_values(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float as None, tuples as lists, numpy scalars as Python numbers.

    A score of an empty scope is +inf and a missing cosine NaN; strict JSON
    has neither, so both become null. Anything else unknown becomes its str().
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): strict_values(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_values(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    if hasattr(obj, "item") and callable(obj.item) and not isinstance(obj, bytes):
        try:
            return strict_values(obj.item())  # a numpy scalar
        except (TypeError, ValueError):
            return str(obj)
    return str(obj)
