"""What every store holds, and the shape of its scope state.

The write path talks to a store only through the methods of ``SQLiteStore``;
a PostgreSQL + pgvector store implements the same methods (with a per-scope
advisory lock in ``transaction``), so nothing above this layer changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ScopeRow:
    """Persisted gate state of one scope.

    Attributes:
        revision: bumped by every committed write; a cache or index built at an
            older revision is stale.
        dim: embedding width of the scope, once it has a memory.
        gate_state: serialized ThresholdState.
        sage_tau: SAGE's EMA threshold (for the sage profile).
    """

    revision: int
    dim: int | None
    gate_state: bytes | None
    sage_tau: float | None


@dataclass(frozen=True)
class VectorsRow:
    """A scope's active memories as arrays: seqs (n,) int64, matrix (n, d) float32, nn_cos (n,) float64."""

    seqs: np.ndarray
    ids: list[str]
    matrix: np.ndarray
    nn_cos: np.ndarray
