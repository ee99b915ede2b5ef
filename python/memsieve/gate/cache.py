"""``ScopeGates``: the one owner of every scope's in-process gate state.

A scope's gate (its vectors in the Rust core, its threshold, its hnswlib index)
is a cache of what the store holds. This module owns that cache: it hydrates a
scope on first use, catches up with other writers' commits through the scope's
revision counter, wraps each write in a store transaction, saves indexes, and
keeps the whole cache within a byte bound by evicting idle scopes, least
recently used first. Both the write path and search get their gates here, so
neither needs to know how the cache works.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import memsieve._core as _core
from memsieve.gate.config import GateConfig
from memsieve.errors import ConfigError, EmbedderError, MemsieveError
from memsieve.gate.scope_gate import ScopeGate, new_threshold
from memsieve.inputs import check_count
from memsieve.scope import Scope
from memsieve.text.lexicon import ENGLISH, Lexicon, check_lexicon

#: The default bound of the gate cache: 512 MiB holds about 75,000-100,000
#: memories of 384-d vectors and 20-word texts (with and without their scopes'
#: hnswlib graphs; fewer of longer texts), and evicting a scope only costs a
#: re-read of its rows the next time it is touched.
DEFAULT_MAX_CACHE_BYTES = 512 * 1024 * 1024

# What a cached memory holds beyond its float32 row, fitted by least squares to the growth of a
# fresh process's resident memory as it hydrated scopes of three kinds of text (short synthetic
# ones, chat turns cut at 200 characters and whole LongMemEval turns; CPython 3.11, 2026-12-05):
# per memory the id maps on both sides of the binding, its share, its keyword index entry and its
# readings (marks, cues, counted and stated values), about 2.9 KB; per word of its text the index's
# postings and token list and the marks' word hashes, about 40 bytes; per verb whose doer its
# marks name, a small set and a tuple, about 300 bytes. The fit is within 2% of the measured
# growth on each kind; the estimate before it counted a third.
_ROW_OVERHEAD = 2900
_MARKED_WORD = 40
_MARKED_DOER = 300
# hnswlib stores the vector again plus 2*M links of 4 bytes on level 0 (M=16)
# and a label; upper levels add little.
_INDEX_ROW_OVERHEAD = 2 * 16 * 4 + 16
# A passage row's or sentence key's share of the Rust id maps and the Vec slots beyond its
# float32 row (no text, no share, no id), fitted with the rows above: about 1.2 KB.
_PART_OVERHEAD = 1240
# One entry of the gate's trace: a tuple of an int and two floats, and its slot.
_TRACE_ENTRY = 150
# A scope's fixed cost: the Python objects, the lock, the Rust struct.
_SCOPE_OVERHEAD = 4096


def gate_bytes(gate: ScopeGate) -> int:
    """An estimate of the memory one cached gate holds, in bytes."""
    n = len(gate)
    # The int8 copy of GateConfig(vectors="int8") sits beside the float32 rows.
    size = _SCOPE_OVERHEAD + n * (gate.dim * 4 + _ROW_OVERHEAD) + gate.state.quant_bytes
    size += gate.marked_words * _MARKED_WORD + gate.marked_doers * _MARKED_DOER + gate.unread_bytes + gate.read_bytes
    size += len(gate.trace) * _TRACE_ENTRY
    if gate.index is not None:
        size += n * (gate.dim * 4 + _INDEX_ROW_OVERHEAD)
    # Part rows (passages, sentence keys): a float32 row each (and its int8 copy), an id on both sides.
    for rows in (gate.parts, gate.keys):
        size += len(rows) * (gate.dim * 4 + _PART_OVERHEAD) + rows.quant_bytes
    return size


class ScopeGates:
    """Cached gate state of every scope a Memory touches, bounded in bytes.

    Args:
        store: the store that holds the truth (memories, scope rows).
        config: the gate configuration every scope is gated with.
        index_min_size: from this many memories on, a scope's nearest
            neighbours come from an hnswlib index instead of the exact scan.
        max_cache_bytes: bound of the cache; idle scopes are evicted least
            recently used first once the estimate exceeds it. A scope being
            used is never evicted, so one scope larger than the bound still
            works (it is dropped as soon as another scope is touched).
        lexicon: the language every scope's gate reads change cues and word rarity with.
    """

    def __init__(self, store: Any, config: GateConfig, *, index_min_size: int,
                 max_cache_bytes: int = DEFAULT_MAX_CACHE_BYTES, lexicon: Lexicon = ENGLISH) -> None:
        index_min_size = check_count(index_min_size, name="index_min_size", minimum=0)
        max_cache_bytes = check_count(max_cache_bytes, name="max_cache_bytes", minimum=0)
        self._store = store
        self._config = config
        self._lexicon = check_lexicon(lexicon)
        self._index_min_size = index_min_size
        self.max_cache_bytes = max_cache_bytes
        self._cache: OrderedDict[str, ScopeGate] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._bytes = 0
        self._busy: dict[str, int] = {}
        # One lock for the store's connection and the cache: taken separately, a
        # reader hydrating a scope and a writer inside its transaction would
        # wait on each other.
        self._lock: threading.RLock = store.lock

    # ---- reading the cache ---------------------------------------------------

    @property
    def cached_bytes(self) -> int:
        """The current estimate of what the cache holds, in bytes."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._cache)

    def peek(self, scope: Scope) -> ScopeGate | None:
        """The scope's cached gate, if any, without touching the store."""
        with self._lock:
            return self._cache.get(scope.key)

    def for_read(self, scope: Scope, *, dim: int | None = None) -> ScopeGate | None:
        """The scope's gate, current with the store; None for a scope never written (or with no width yet).

        One read of the scope's row answers both whether the cache is current
        and, when ``dim`` is None, the scope's width: a search costs one small
        query before the index is consulted.
        """
        with self._lock:
            row = self._store.read_scope(scope)
            if row is None or (dim is None and row.dim is None):
                return None
            gate = self._current(scope, dim=row.dim if dim is None else dim, in_tx=False, row=row)
            self._settle(scope.key, gate)
            return gate

    def scope_dim(self, scope: Scope) -> int | None:
        """The embedding width the scope was written with (None: no memory yet)."""
        row = self._store.read_scope(scope)
        return row.dim if row is not None else None

    # ---- writing -------------------------------------------------------------

    @contextmanager
    def write(self, scope: Scope, *, dim: int) -> Iterator[tuple[Any, ScopeGate]]:
        """One write transaction on a scope, with its current gate in hand.

        On commit the scope's revision moves on, the memories the write changed
        are marked with it, and the threshold is saved with the data. On any
        error the in-process gate (which already saw the rolled-back changes)
        is dropped, to be re-read from the store.
        """
        key = scope.key
        try:
            with self._store.transaction(scope) as tx:
                gate = self._current(scope, dim=dim, in_tx=True, tx=tx)
                revision = gate.revision + 1
                tx.stamp_inserts(scope, revision)
                self._busy[key] = self._busy.get(key, 0) + 1
                try:
                    yield tx, gate
                    gate.revision = revision
                    tx.mark_changed(scope, sorted(gate.dirty), gate.revision)
                    gate.dirty.clear()
                    tx.save_scope(scope, revision=gate.revision, dim=dim, gate_state=gate.threshold_bytes(),
                                  sage_tau=gate.sage_tau)
                finally:
                    self._release(key)
        except BaseException:
            self.drop(scope)
            raise
        with self._lock:
            if key in self._cache:
                self._settle(key, gate)

    def drop(self, scope: Scope) -> None:
        """Forget the scope's cached gate; the next use re-reads it from the store."""
        with self._lock:
            self._evict(scope.key, save=False)

    # ---- lifecycle -----------------------------------------------------------

    def save_indexes(self) -> None:
        """Persist every cached scope's hnswlib index beside the store (those still current)."""
        with self._lock:
            for key, gate in self._cache.items():
                self._save_index(key, gate)

    def _save_index(self, key: str, gate: ScopeGate) -> None:
        """Save a scope's index only if it reflects the store's revision of the scope.

        Another connection may have written the scope since this one read it,
        a purge among those writes: its index file was rewritten without the
        purged points, and this older index still holds them. Saved, it would
        put a purged embedding back on disk (and be refused as stale when
        loaded anyway), so it is dropped instead."""
        if gate.index is None:
            return
        try:
            current = self._store.peek_revision(Scope.from_key(key))
        except MemsieveError:  # the store is away: an index is only a cache, rebuilt when next needed
            return
        if current == gate.revision:
            gate.save_index()

    def close(self) -> None:
        self.save_indexes()
        with self._lock:
            self._cache.clear()
            self._sizes.clear()
            self._bytes = 0

    # ---- internals -----------------------------------------------------------

    def _release(self, key: str) -> None:
        n = self._busy.get(key, 0) - 1
        if n > 0:
            self._busy[key] = n
        else:
            self._busy.pop(key, None)

    def _current(self, scope: Scope, *, dim: int, in_tx: bool, tx: Any = None, row: Any = None) -> ScopeGate:
        """The cached gate brought up to the store's revision, or a freshly hydrated one."""
        key = scope.key
        with self._lock:
            cached = self._cache.get(key)
            if row is None:
                row = tx.ensure_scope_row(scope) if in_tx else self._store.read_scope(scope)
            revision = row.revision if row else 0
            if cached is not None and cached.revision == revision:
                self._cache.move_to_end(key)
                return cached
            gate_state = row.gate_state if row else None
            if cached is not None and row is not None and cached.revision < revision and gate_state:
                cached.sync(self._store.changes_since(scope, cached.revision, dim),
                            threshold=_core.ThresholdState.from_bytes(gate_state), sage_tau=row.sage_tau,
                            revision=revision)
                self._cache.move_to_end(key)
                return cached
            if row is not None and row.dim is not None and row.dim != dim:
                raise EmbedderError(
                    f"this scope holds {row.dim}-d embeddings but the embedder gives {dim}-d; "
                    "use the embedder the scope was written with, or a new database"
                )
            threshold = (_core.ThresholdState.from_bytes(gate_state) if gate_state
                         else new_threshold(self._config))
            gate = ScopeGate(self._config, dim, threshold=threshold, sage_tau=row.sage_tau if row else None,
                             revision=revision, index_min_size=self._index_min_size,
                             index_path=self._index_path(scope), lexicon=self._lexicon)
            vectors = self._store.scope_vectors(scope, dim)
            gate.load(vectors.seqs, vectors.matrix, vectors.shares, vectors.texts)
            gate.load_parts(self._store.scope_parts(scope, dim))
            if cached is not None:
                gate.trace = cached.trace
                self._evict(key, save=False)
            self._cache[key] = gate
            self._sizes[key] = 0
            return gate

    def _index_path(self, scope: Scope) -> str | None:
        index_dir = self._store.index_dir
        if index_dir is None:
            return None
        os.makedirs(index_dir, exist_ok=True)
        return os.path.join(index_dir, scope.slug + ".bin")

    def _settle(self, key: str, gate: ScopeGate) -> None:
        """Re-measure one scope after use, then evict idle scopes until the cache fits."""
        if self._cache.get(key) is not gate:
            return
        size = gate_bytes(gate)
        self._bytes += size - self._sizes.get(key, 0)
        self._sizes[key] = size
        self._cache.move_to_end(key)
        for victim in list(self._cache):
            if self._bytes <= self.max_cache_bytes:
                break
            if victim == key or victim in self._busy:
                continue
            self._evict(victim, save=True)

    def _evict(self, key: str, *, save: bool) -> None:
        gate = self._cache.pop(key, None)
        self._bytes -= self._sizes.pop(key, 0)
        if gate is not None and save:
            # Rebuilding a large scope's graph costs far more than writing it out.
            self._save_index(key, gate)
