"""What every store holds, and the shape of its scope state.

The write path talks to a store only through the methods of ``SQLiteStore``;
a PostgreSQL + pgvector store implements the same methods (with a per-scope
advisory lock in ``transaction``), so nothing above this layer changes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memsieve.errors import StoreError
from memsieve.records import MemoryItem, Rejection
from memsieve.scope import Scope


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


@dataclass(frozen=True)
class ChangesRow:
    """Memories of a scope changed after some revision: seqs (n,) int64, active (n,) bool,
    matrix (n, d) float32, nn_cos (n,) float64."""

    seqs: np.ndarray
    active: np.ndarray
    matrix: np.ndarray
    nn_cos: np.ndarray


@dataclass(frozen=True)
class CandidatesRow:
    """The memories of a scope visible at some time, as they were then.

    Attributes:
        seqs: (n,) int64, ascending.
        matrix: (n, d) float32, each row the embedding that held at the time
            ((0, 0) when n is 0).
        texts: the n texts that held at the time.
        metadata: the n metadata dicts.
    """

    seqs: np.ndarray
    matrix: np.ndarray
    texts: list[str]
    metadata: list[dict[str, Any]]


# ---- row decoding shared by every SQL store ----------------------------------

MEMORY_COLUMNS = (
    "m.id, m.text, m.scope_key, m.metadata, m.source, m.sources, m.seen_count, m.is_active, "
    "m.created_at, m.updated_at, m.last_seen_at, m.valid_from, m.valid_to, m.expired_at"
)


#: The largest LIMIT SQLite and PostgreSQL accept: a signed 64-bit integer.
MAX_LIMIT = 2**63 - 1


def sql_limit(limit: int) -> int:
    """A row limit clamped into [0, MAX_LIMIT], so no Python int overflows the database's."""
    return min(max(int(limit), 0), MAX_LIMIT)


def stack_rows(vectors: Sequence[np.ndarray], *, where: str) -> np.ndarray:
    """(n,) float32 vectors as one C-contiguous (n, d) matrix ((0, 0) for none).

    Raises:
        StoreError: the vectors have different widths (the embedder changed).
    """
    if not vectors:
        return np.empty((0, 0), dtype=np.float32)
    widths = {int(v.shape[0]) for v in vectors}
    if len(widths) > 1:
        raise StoreError(f"{where} holds embeddings of widths {sorted(widths)}; the embedder changed: "
                         "re-embed with the original model or use a new database")
    return np.ascontiguousarray(np.stack(vectors), dtype=np.float32)


def nan_to_none(x: float | None) -> float | None:
    return None if x is None or x != x else float(x)


def none_to_nan(x: float | None) -> float:
    return float("nan") if x is None else float(x)


REJECTION_COLUMNS = (
    "id, text, scope_key, source, metadata, layer, novelty, tau, delta, kappa, nearest_id, nearest_cos,"
    " reason, created_at, restored_memory_id, restored_at"
)


def memory_item(r: Sequence[Any]) -> MemoryItem:
    scope = Scope.from_key(r[2])
    return MemoryItem(
        id=r[0], text=r[1], user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id,
        metadata=json.loads(r[3]), source=r[4], sources=json.loads(r[5]), seen_count=int(r[6]),
        is_active=bool(r[7]), created_at=r[8], updated_at=r[9], last_seen_at=r[10], valid_from=r[11],
        valid_to=r[12], expired_at=r[13],
    )


def rejection_record(r: Sequence[Any]) -> Rejection:
    scope = Scope.from_key(r[2])
    sources = json.loads(r[3]) if r[3] else []
    return Rejection(
        id=r[0], text=r[1], user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id,
        sources=sources, metadata=json.loads(r[4]), layer=r[5],
        novelty=none_to_nan(r[6]), tau=none_to_nan(r[7]), delta=none_to_nan(r[8]), kappa=none_to_nan(r[9]),
        nearest_id=r[10], nearest_cos=none_to_nan(r[11]), reason=r[12], created_at=r[13],
        restored_memory_id=r[14], restored_at=r[15],
    )
