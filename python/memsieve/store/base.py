"""What every store holds, the shape of its rows, and the protocols the layers above use.

``Store`` is what a Memory holds: reads, ``transaction`` and ``close``. The
writes live on ``WriteTx``, the object a transaction yields, so a write
outside a transaction does not type-check. SQLite (the embedded default) and
PostgreSQL + pgvector (with a per-scope advisory lock in ``transaction``)
both satisfy the protocols, which mypy checks (see the end of sqlite.py and
postgres.py), so nothing above this layer depends on the backend.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from memsieve.errors import StoreError
from memsieve.records import Folded, HistoryEntry, MemoryItem, Rejection
from memsieve.scope import Scope

if TYPE_CHECKING:
    from memsieve.text.passages import Part


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
    """A scope's active memories as arrays: seqs (n,) int64, matrix (n, d) float32, shares (n,) float64,
    and their n ids and current texts (what the keyword index is built from).

    A share is what a memory contributed to the threshold when it was added:
    1 - its novelty then (nan for a scope's first memory).
    """

    seqs: np.ndarray
    ids: list[str]
    matrix: np.ndarray
    shares: np.ndarray
    texts: list[str]


@dataclass(frozen=True)
class PartsRow:
    """Part rows of memories (migration 10): memory seqs (n,) int64, part numbers (n,) int64
    (1 or more: part 0 is the memory's own embedding; a long text's passages below
    ``memsieve.text.passages.KEY_BASE``, a short one's sentence keys above it), matrix (n, d) float32."""

    seqs: np.ndarray
    parts: np.ndarray
    matrix: np.ndarray

    @classmethod
    def empty(cls, dim: int) -> "PartsRow":
        return cls(seqs=np.empty(0, np.int64), parts=np.empty(0, np.int64),
                   matrix=np.empty((0, dim), np.float32))


@dataclass(frozen=True)
class ChangesRow:
    """Memories of a scope changed after some revision: seqs (n,) int64, active (n,) bool,
    matrix (n, d) float32, shares (n,) float64, their n current texts, and the passages of the active ones.

    An inactive row is only to be removed, so its vector stays zero and its
    text is the empty string.
    """

    seqs: np.ndarray
    active: np.ndarray
    matrix: np.ndarray
    shares: np.ndarray
    texts: list[str]
    parts: PartsRow


@dataclass(frozen=True)
class MemoryRow:
    """What the write path needs of one memory.

    Attributes:
        seq: the memory's row number (the gate's and the index's label).
        scope_key: its scope.
        text: its current text.
        embedding: (d,) float32, its current vector (a copy).
        share: 1 - novelty when it was added (nan for a scope's first memory).
        is_active: False once soft-deleted.
    """

    seq: int
    scope_key: str
    text: str
    embedding: np.ndarray
    share: float
    is_active: bool


@dataclass(frozen=True)
class CandidatesRow:
    """The memories of a scope visible at some time, as they were then.

    Attributes:
        seqs: (n,) int64, ascending.
        matrix: (n, d) float32, each row the embedding that held at the time
            ((0, 0) when n is 0).
        texts: the n texts that held at the time.
        metadata: the n metadata dicts.
        versions: (n,) int64, the ``memory_versions`` seq of each text that held then, or -1
            where it is still the memory's text today; the parts it had then are that version's
            (``version_parts_of``), or the memory's own (``parts_of``).
    """

    seqs: np.ndarray
    matrix: np.ndarray
    texts: list[str]
    metadata: list[dict[str, Any]]
    versions: np.ndarray


@dataclass(frozen=True)
class MergeRow:
    """One persisted merge.

    Attributes:
        id: the merge id.
        scope_key: the scope it was made in.
        kind: ``"duplicates"`` or ``"versions"``.
        kept_id: the memory the merge kept active.
        member_ids: every member, the kept one included, oldest first.
        reason: why the members were merged.
        state: what the merge changed and what it was before (see
            memsieve.consolidation.apply).
        created_at: when it was made.
        undone_at: when ``unconsolidate`` undid it (None: in force).
    """

    id: str
    scope_key: str
    kind: str
    kept_id: str
    member_ids: list[str]
    reason: str
    state: dict[str, Any]
    created_at: str
    undone_at: str | None


@dataclass(frozen=True)
class RowState:
    """What a merge may change on one memory row, as it was."""

    is_active: bool
    valid_to: str | None
    expired_at: str | None
    sources: list[str]
    seen_count: int

    def to_dict(self) -> dict[str, Any]:
        return {"is_active": self.is_active, "valid_to": self.valid_to, "expired_at": self.expired_at,
                "sources": list(self.sources), "seen_count": self.seen_count}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RowState":
        return cls(is_active=bool(d["is_active"]), valid_to=d["valid_to"], expired_at=d["expired_at"],
                   sources=list(d["sources"]), seen_count=int(d["seen_count"]))


# ---- row decoding shared by every SQL store ----------------------------------

MEMORY_COLUMNS = (
    "m.id, m.text, m.scope_key, m.metadata, m.source, m.sources, m.seen_count, m.is_active, "
    "m.created_at, m.updated_at, m.last_seen_at, m.valid_from, m.valid_to, m.expired_at, m.valid_from_offset"
)


#: The text_hash of a purged memory (a real one is 64 hex digits): its tombstone mark.
PURGED_HASH = "purged"

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
    " reason, created_at, restored_memory_id, restored_at, information, forgotten_at"
)


def memory_item(r: Sequence[Any]) -> MemoryItem:
    scope = Scope.from_key(r[2])
    return MemoryItem(
        id=r[0], text=r[1], user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id,
        metadata=json.loads(r[3]), source=r[4], sources=json.loads(r[5]), seen_count=int(r[6]),
        is_active=bool(r[7]), created_at=r[8], updated_at=r[9], last_seen_at=r[10], valid_from=r[11],
        valid_to=r[12], expired_at=r[13], valid_from_offset=None if r[14] is None else int(r[14]),
    )


def rejection_record(r: Sequence[Any]) -> Rejection:
    scope = Scope.from_key(r[2])
    sources = json.loads(r[3]) if r[3] else []
    return Rejection(
        id=r[0], text=r[1], user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id,
        sources=sources, metadata=json.loads(r[4]), layer=r[5],
        novelty=none_to_nan(r[6]), tau=none_to_nan(r[7]), delta=none_to_nan(r[8]), kappa=none_to_nan(r[9]),
        nearest_id=r[10], nearest_cos=none_to_nan(r[11]), reason=r[12], created_at=r[13],
        restored_memory_id=r[14], restored_at=r[15], information=none_to_nan(r[16]), forgotten_at=r[17],
    )


# ---- the protocols -----------------------------------------------------------


class StoreReader(Protocol):
    """Reads, the same inside and outside a write transaction."""

    # scope state
    def read_scope(self, scope: Scope) -> ScopeRow | None: ...
    def peek_revision(self, scope: Scope) -> int | None: ...
    def scope_vectors(self, scope: Scope, dim: int) -> VectorsRow: ...
    def changes_since(self, scope: Scope, revision: int, dim: int) -> ChangesRow: ...
    def scope_parts(self, scope: Scope, dim: int) -> PartsRow: ...
    def parts_of(self, seqs: Sequence[int], dim: int) -> PartsRow: ...
    def version_parts_of(self, versions: Sequence[int], dim: int) -> PartsRow: ...
    def scope_keys(self) -> list[str]: ...

    # memories
    def active_by_hash(self, scope: Scope, text_hash: str) -> tuple[int, str] | None: ...
    def actives_by_hash(self, scope: Scope, text_hash: str) -> list[tuple[int, str]]: ...
    def memory_row(self, memory_id: str) -> MemoryRow: ...
    def ids_for_seqs(self, seqs: Sequence[int]) -> dict[int, str]: ...
    def embeddings_for_seqs(self, seqs: Sequence[int]) -> dict[int, np.ndarray]: ...
    def items_for_seqs(self, seqs: Sequence[int]) -> dict[int, MemoryItem]: ...
    def items_at(self, seqs: Sequence[int], as_of: str) -> dict[int, MemoryItem]: ...
    def candidates(self, scope: Scope, *, as_of: str | None) -> CandidatesRow: ...
    def get(self, memory_id: str) -> MemoryItem: ...
    def get_all(self, scope: Scope, *, include_inactive: bool, limit: int | None) -> list[MemoryItem]: ...
    def count_active(self, scope: Scope) -> int: ...

    # records
    def history(self, memory_id: str) -> list[HistoryEntry]: ...
    def rejection(self, rejection_id: str) -> tuple[Rejection, str, str | None]: ...
    def rejections(self, scope: Scope, *, since: str | None, layer: str | None,
                   limit: int | None) -> list[Rejection]: ...
    def count_rejections(self, scope: Scope) -> int: ...
    def folds_into(self, scope: Scope, memory_ids: Sequence[str], *, newest: int,
                   as_of: str | None = None) -> dict[str, list[Folded]]: ...
    def shown_folds(self, scope: Scope) -> list[tuple[str, str, str]]: ...
    def folds_after(self, scope: Scope, after: int) -> list[tuple[int, str, int, str, dict[str, Any]]]: ...
    def folds_signature(self, scope: Scope) -> tuple[int, int]: ...
    def retired_members(self, scope: Scope, kept_ids: Sequence[str], *,
                        as_of: str | None = None) -> dict[str, str]: ...
    def merges_signature(self, scope: Scope) -> tuple[int, int]: ...
    def retired_into(self, scope: Scope, *, as_of: str | None = None) -> dict[int, int]: ...
    def links(self, memory_id: str) -> list[tuple[str, str, float | None]]: ...
    def version_links(self, memory_ids: Sequence[str],
                      kinds: Sequence[str] = ("updates", "supersedes")) -> list[tuple[str, str, str]]: ...
    def counters(self, scope: Scope) -> list[tuple[str, str, int]]: ...
    def faults(self, scope: Scope) -> list[dict[str, Any]]: ...

    # the database
    def size_bytes(self) -> int: ...
    def integrity_ok(self) -> bool: ...


class WriteTx(StoreReader, Protocol):
    """An open write transaction: the reads, and every write. Commits when the ``with`` block ends."""

    # scope state
    def ensure_scope_row(self, scope: Scope, *, now: str | None = None) -> ScopeRow: ...
    def save_scope(self, scope: Scope, *, revision: int, dim: int, gate_state: bytes,
                   sage_tau: float | None) -> None: ...
    def stamp_inserts(self, scope: Scope, revision: int) -> None: ...
    def mark_changed(self, scope: Scope, seqs: Sequence[int], revision: int) -> None: ...

    # memories
    def insert_memory(self, scope: Scope, *, text: str, text_hash: str, embedding: np.ndarray, share: float,
                      metadata: dict[str, Any], sources: list[str], valid_from: str | None,
                      now: str, parts: Sequence["Part"] = ()) -> tuple[int, str]: ...
    def touch_memory(self, seq: int, *, sources: list[str], now: str) -> None: ...
    def update_memory_text(self, seq: int, *, text: str, text_hash: str, embedding: np.ndarray,
                           now: str, parts: Sequence["Part"] = ()) -> None: ...
    def soft_delete(self, seq: int, *, now: str, valid_to: str | None) -> None: ...

    # records
    def add_history(self, memory_id: str, scope: Scope, *, event: str, old_text: str | None,
                    new_text: str | None, layer: str, reason: str, now: str,
                    extra: dict[str, Any] | None = None) -> None: ...
    def add_rejection(self, scope: Scope, *, text: str, sources: list[str], metadata: dict[str, Any],
                      layer: str, novelty: float, tau: float, delta: float, kappa: float,
                      nearest_id: str | None, nearest_cos: float, reason: str, valid_from: str | None,
                      now: str, information: float = math.nan) -> str: ...
    def mark_restored(self, rejection_id: str, memory_id: str, now: str) -> None: ...
    def forget_folds(self, named: Sequence[tuple[str, str]], *, now: str) -> None: ...
    def add_link(self, memory_id: str, linked_id: str, *, kind: str, cosine: float, now: str) -> None: ...
    def bump(self, scope: Scope, event: str, layer: str) -> None: ...
    def add_fault(self, scope: Scope, *, kind: str, detail: str, raw: str | None, now: str) -> None: ...

    # erasing (see store/sql_purge.py)
    def inactive_texts(self, scope: Scope) -> list[tuple[int, str, str]]: ...
    def earlier_texts(self, scope: Scope) -> list[tuple[int, str, str]]: ...
    def purge_memory(self, seq: int, *, reason: str, now: str) -> None: ...
    def purge_rejection(self, rejection_id: str, *, reason: str, now: str) -> None: ...


class MergeReader(StoreReader, Protocol):
    """The reads of scheduled consolidation (store/sql_merges.py), beside the store's own."""

    def merge_record(self, merge_id: str) -> MergeRow: ...
    def merges(self, scope: Scope, *, include_undone: bool = False) -> list[MergeRow]: ...
    def row_state(self, seq: int) -> RowState: ...
    def last_version(self, seq: int) -> tuple[str, np.ndarray] | None: ...
    def version_with_hash(self, seq: int, text_hash: str) -> tuple[str, np.ndarray] | None: ...


class MergeTx(WriteTx, MergeReader, Protocol):
    """A write transaction with the writes of scheduled consolidation (merge records and row states)."""

    def add_merge(self, scope: Scope, *, kind: str, kept_id: str, member_ids: Sequence[str], reason: str,
                  state: dict[str, Any], now: str) -> str: ...
    def mark_unmerged(self, merge_id: str, now: str) -> None: ...
    def set_row_state(self, seq: int, state: RowState) -> None: ...
    def remove_link(self, memory_id: str, linked_id: str, *, kind: str) -> None: ...


@dataclass(frozen=True)
class KeptReply:
    """What an idempotency key's claim found (memsieve.store.sql_replies): the first request's
    fingerprint and, once it was answered, its status and JSON body."""

    fingerprint: str
    status: int | None
    body: str | None
    created_at: str


class Store(StoreReader, Protocol):
    """An open store: reads, a write transaction, and close.

    Attributes:
        path: the file, or the URL with any password masked.
        lock: the re-entrant lock guarding the store's one connection; the
            gate cache shares it, so hydrating and writing never deadlock.
    """

    path: str
    lock: threading.RLock

    @property
    def index_dir(self) -> str | None:
        """Where per-scope hnswlib indexes are saved (None: kept in memory only)."""

    def transaction(self, scope: Scope | None = None) -> AbstractContextManager[WriteTx]:
        """An exclusive write transaction on ``scope`` (None: store-wide); everything in it commits or nothing does."""

    def checkpoint(self) -> bool:
        """Make the store's files drop what purges erased; True when nothing is left pending.

        SQLite: ``PRAGMA wal_checkpoint(TRUNCATE)`` (False if another
        connection's read kept the WAL). PostgreSQL: ``VACUUM`` of the tables a
        purge erases from. A transaction that purged runs this after it commits.

        Raises:
            StoreError: called inside a write transaction.
        """

    @property
    def erasure_pending(self) -> str | None:
        """Why what a purge erased may still be in the store's files (None: gone; see memsieve.write.purge)."""

    def finish_erasure(self, *, wait: float = 0.0) -> str | None:
        """Try to finish a pending erasure (SQLite: a TRUNCATE checkpoint); None when done, else why not."""

    def compact(self) -> str | None:
        """Rewrite what must be rewritten for a purge's bytes to leave the files (PostgreSQL: VACUUM FULL)."""

    def claim_reply(self, key_name: str, idem_key: str, *, scope_key: str | None, fingerprint: str, now: str,
                    stale_before: str) -> KeptReply | None:
        """Claim an idempotency key for a request (None: claimed), else what holds it."""

    def keep_reply(self, key_name: str, idem_key: str, *, status: int, body: str) -> None:
        """Keep the answer of the request that holds the key."""

    def drop_reply(self, key_name: str, idem_key: str) -> None:
        """Release a claim whose request failed, so that a retry runs it."""

    def touch_reply(self, key_name: str, idem_key: str, *, now: str) -> None:
        """Mark a claim whose request is still running as heard from at ``now`` (it is not stale)."""

    def expire_replies(self, before: str) -> None:
        """Forget the answers kept since before ``before``."""

    def close(self) -> None:
        """Close the connection; every later call raises ClosedError."""


#: What a committed write survives (``Memory(durability=...)``):
#: ``"normal"`` (the default): a crash or kill of the process loses nothing
#: committed; an operating-system crash or power loss can undo the last commits
#: (never corrupting the file). SQLite: WAL with ``synchronous=NORMAL``;
#: PostgreSQL: the server's ``synchronous_commit`` (on by default: already "full").
#: ``"full"``: also an OS crash or power loss. SQLite: ``synchronous=FULL`` (an
#: fsync per commit); PostgreSQL: ``synchronous_commit = on`` for the session.
DURABILITY = ("normal", "full")


def check_durability(value: object) -> str:
    """``durability`` of a store: one of DURABILITY."""
    from memsieve.errors import ConfigError, is_choice, short_repr

    if not is_choice(value, DURABILITY):
        raise ConfigError(f"durability must be one of {', '.join(map(repr, DURABILITY))}, got {short_repr(value)}; "
                          "'normal' survives a process crash, 'full' also a power loss (an fsync per commit)")
    return str.__str__(value)
