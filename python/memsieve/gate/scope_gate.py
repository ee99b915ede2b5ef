"""A scope's gate: its vectors, its threshold and each memory's share, scored by its profile.

``ScopeGate`` is the one owner of a scope's threshold: the Rust ``ScopeState``
is a pure vector index, while the threshold (memsieve.gate.threshold) and the
share each memory contributed to it (1 - its novelty when it was admitted)
live here. What differs from one scoring method to another (how tau and kappa
are read, the per-call threshold step, the score itself) is the profile's
(memsieve.gate.profiles), chosen once from ``GateConfig.profile``. The state
is kept incrementally: adding or removing a memory costs O(d) plus the Rust
bookkeeping, never a re-scan of the scope (except under the ``sage`` profile,
whose density proxy is by definition a PCA of the whole scope and is
recomputed once per ``add`` call, as SAGE does).
"""

from __future__ import annotations

import functools
import math
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

import memsieve._core as _core
from memsieve.gate.ann import ScopeIndex
from memsieve.gate.config import GateConfig
from memsieve.gate.parts import PartRows
from memsieve.gate.score import GateScore, Readings
from memsieve.gate.threshold import Threshold, adaptive_threshold
from memsieve.text.cues import find_stated_values
from memsieve.text.marks import Marks
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.text.passages import Part, is_key

if TYPE_CHECKING:
    from memsieve.store.base import ChangesRow, PartsRow

# GateScore is scored here and handed on: the write path imports it with ScopeGate.
__all__ = ["GateScore", "Readings", "ScopeGate", "new_threshold"]

_T = TypeVar("_T")

#: How many add() calls ``ScopeGate.trace`` (``Memory.gate_trace``) keeps, the latest.
TRACE_CALLS = 10_000


def _locked(method: Callable[..., _T]) -> Callable[..., _T]:
    """Serialize access to the Rust state: it releases the GIL while it scans, and
    a search on one thread must not meet an add on another mid-borrow."""

    @functools.wraps(method)
    def wrapper(self: "ScopeGate", *args: Any, **kwargs: Any) -> _T:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


def new_threshold(config: GateConfig) -> _core.ThresholdState:
    """A fresh Rust threshold with the configuration's parameters (the core has no defaults).

    Every profile counts shares in one, and its bytes are the scope row's
    ``gate_state`` whichever profile wrote the scope.
    """
    return adaptive_threshold(config.adaptive)


class ScopeGate:
    """One scope's gate state: vectors (Rust ``ScopeState``), threshold and shares, revision.

    Args:
        config: the gate configuration.
        dim: embedding width.
        threshold: the persisted Rust threshold (the scope row's ``gate_state``), or a fresh one.
        sage_tau: the scope row's ``sage_tau`` column (SAGE's EMA threshold).
        revision: the store revision this state reflects.
        index_min_size: from this many memories on, an hnswlib index answers
            nearest-neighbour queries instead of the exact scan.
        index_path: where the index is persisted (None: in memory only).
        lexicon: the language the information term and change cues read.
    """

    def __init__(self, config: GateConfig, dim: int, *, threshold: _core.ThresholdState,
                 sage_tau: float | None, revision: int, index_min_size: int = 20_000,
                 index_path: str | None = None, lexicon: Lexicon = ENGLISH) -> None:
        self.config = config
        self.lexicon = lexicon
        self.profile = config.gate_profile()
        self.dim = dim
        self.state = _core.ScopeState(dim, vectors=config.vectors)
        # The passages 1.. of its long memories (memsieve.gate.parts); empty in a scope of short texts.
        self.parts = PartRows(dim, vectors=config.vectors)
        # The sentence keys of its short memories: read by search (``found``), never by the gate.
        self.keys = PartRows(dim, vectors=config.vectors)
        # The scope's own bm25 index: keyword search and the information term
        # read it, and it changes with the vectors, so one catch-up serves both.
        self.keywords = _core.KeywordIndex()
        # What the profile reads tau and kappa from; for most profiles the Rust state itself.
        self.threshold: Threshold = self.profile.restore_threshold(threshold, sage_tau=sage_tau)
        # The row's sage_tau as read, saved back unchanged by a profile that keeps none.
        self._sage_tau_read = sage_tau
        self.revision = revision
        # What each memory added to the threshold, so that removing it can undo exactly that.
        self.shares: dict[int, float] = {}
        # What a fold into a memory reads of its text: its cues, counts, names and stated values
        # (``readings_of``), and its value words, denials and ordered values (``marks_of``). Most
        # memories are never a neighbour of a text that could fold, so both are read on first
        # need: until then the gate holds the text (``_unread``), which costs no reading on an add
        # or a load (measured: the readings were a tenth of an add()'s own time, and fewer than
        # half of LoCoMo dev's memories are ever a neighbour of a text that could fold).
        self._readings: dict[int, Readings] = {}
        self._marks: dict[int, Marks] = {}
        self._unread: dict[int, str] = {}
        # How many words the marks' sequences hold in all, how many doers they name, and the bytes
        # of the texts not read yet, for the cache's size estimate.
        self.marked_words = 0
        self.marked_doers = 0
        self.unread_bytes = 0
        # What the readings read so far hold, for the same estimate (``_readings_bytes``).
        self.read_bytes = 0
        # (memories, tau, kappa) after each add() call of this process, the last TRACE_CALLS of
        # them: a scope written for months must not grow without bound.
        self.trace: deque[tuple[int, float, float]] = deque(maxlen=TRACE_CALLS)
        # Memory ids of seqs the write path has met, so naming a candidate's
        # nearest memory needs no query: a seq's id never changes (rows are
        # never deleted), and an entry leaves with its memory. Dropped with the
        # whole gate when a write rolls back, so no id of an undone insert stays.
        self.ids: dict[int, str] = {}
        self.lock = threading.RLock()
        self.dirty: set[int] = set()
        self.index: ScopeIndex | None = None
        self.index_min_size = index_min_size
        self.index_path = index_path

    def __len__(self) -> int:
        return len(self.state)

    @_locked
    def load(self, seqs: np.ndarray, matrix: np.ndarray, shares: np.ndarray, texts: list[str]) -> None:
        """Bulk-load a scope's active memories (hydration), leaving the threshold as persisted.

        Args:
            seqs: (n,) int64 store sequence numbers.
            matrix: (n, d) float32 unit rows.
            shares: (n,) float64, what each memory added to the threshold (nan: nothing).
            texts: the n current texts, for the keyword index.
        """
        if len(seqs):
            ids = np.ascontiguousarray(seqs, dtype=np.int64)
            self.state.add_many(ids, np.ascontiguousarray(matrix))
            self.keywords.add_many(ids, texts)
            for seq, text in zip(ids.tolist(), texts):
                self._hold_text(seq, text)
        self.shares.update(zip((int(s) for s in seqs), (float(c) for c in shares)))
        if len(self.state) >= self.index_min_size:
            if self.index_path is not None:
                self.index = ScopeIndex.load(self.index_path, dim=self.dim, revision=self.revision,
                                             count=len(self.state))
            if self.index is None:
                self.index = ScopeIndex.build(self.state.ids(), self.state.vectors(), dim=self.dim)

    @_locked
    def load_parts(self, rows: "PartsRow") -> None:
        """Bulk-load the part rows of the scope's active memories (hydration, after ``load``)."""
        self._load_parts(rows)

    def _load_parts(self, rows: "PartsRow") -> None:
        # Passages and sentence keys are stored alike; their numbers tell them apart.
        key = is_key(np.asarray(rows.parts, dtype=np.int64))
        if not key.any():
            self.parts.load(rows.seqs, rows.parts, rows.matrix)
            return
        passage = ~key
        self.parts.load(rows.seqs[passage], rows.parts[passage], rows.matrix[passage])
        self.keys.load(rows.seqs[key], rows.parts[key], rows.matrix[key])

    @_locked
    def save_index(self) -> None:
        if self.index is not None and self.index_path is not None:
            self.index.save(self.index_path, self.revision)

    # ---- per call ------------------------------------------------------------

    @_locked
    def begin_call(self) -> None:
        """Once per add() call, before its candidates are scored: the profile's threshold step (SAGE's EMA)."""
        self.profile.begin_call(self)

    @_locked
    def end_call(self) -> None:
        self.trace.append((len(self.state), self.current_tau(), self.current_kappa()))

    def current_tau(self) -> float:
        return self.profile.current_tau(self)

    @_locked
    def current_kappa(self) -> float:
        return self.profile.current_kappa(self)

    @property
    def sage_tau(self) -> float | None:
        """The scope row's ``sage_tau`` column as it is to be saved: SAGE's EMA threshold."""
        return self.profile.stored_sage_tau(self.threshold, as_read=self._sage_tau_read)

    # ---- scoring -------------------------------------------------------------

    @_locked
    def score(self, vector: np.ndarray, text: str | None = None, *, whole: str | None = None) -> GateScore:
        """Score one (d,) float32 unit vector (and its text) against the scope and route it.

        The profile scores (memsieve.gate.profiles). Under the default one a
        NOOP needs both signals low: a candidate close in meaning to what is
        stored (novelty < tau) that still carries new information
        (``information >= config.info_tau`` against its ``config.info_k``
        nearest memories) goes to the band instead, where it is stored as a
        newer version of its nearest memory. ``whole``: the long text that ``text`` is a
        passage of; what a passage does not say may be said elsewhere in it.
        """
        return self.profile.score(self, vector, text, whole=whole)

    def _hold_text(self, seq: int, text: str) -> None:
        """Hold a memory's new text, its readings and marks to be read from it on first need."""
        self._forget_readings(seq)
        self._unread[seq] = text
        self.unread_bytes += _held_bytes(text)

    @_locked
    def readings_of(self, seq: int) -> Readings | None:
        """What a fold into an active memory reads of its text (``Readings``), read on first need;
        None for a seq the gate does not hold."""
        readings = self._readings.get(seq)
        if readings is None:
            text = self._unread.get(seq)
            if text is None:
                return None
            readings = self._keep_readings(seq, self._read(text))
        return readings

    def _read(self, text: str) -> Readings:
        # The profile says which cues, counts and names its score reads (the kde profile: all of
        # them); one that reads none keeps none. Every profile's gate keeps the stated values:
        # consolidation reads them whatever the profile.
        return Readings(cues=self.profile.cues_of(self.lexicon, text), counts=self.profile.counts_of(text),
                        named=self.profile.named_of(self.lexicon, text), stated=find_stated_values(text))

    @_locked
    def marks_of(self, seq: int) -> Marks | None:
        """The marks of an active memory (``Lexicon.marks`` of its text), read on first need; None
        for a seq the gate does not hold."""
        marks = self._marks.get(seq)
        if marks is None:
            text = self._unread.pop(seq, None)
            if text is None:
                return None
            self.unread_bytes -= _held_bytes(text)
            if seq not in self._readings:  # the text is let go: what else is read of it, now
                self._keep_readings(seq, self._read(text))
            marks = self._marks[seq] = self.lexicon.marks(text)
            self.marked_words += len(marks.sequence)
            self.marked_doers += len(marks.doers)
        return marks

    def _keep_readings(self, seq: int, readings: Readings) -> Readings:
        self._readings[seq] = readings
        self.read_bytes += _readings_bytes(readings)
        return readings

    def _forget_readings(self, seq: int) -> None:
        """Drop a memory's readings and marks, read or not (its text changed, or it left the gate)."""
        readings = self._readings.pop(seq, None)
        if readings is not None:
            self.read_bytes -= _readings_bytes(readings)
        marks = self._marks.pop(seq, None)
        if marks is not None:
            self.marked_words -= len(marks.sequence)
            self.marked_doers -= len(marks.doers)
        text = self._unread.pop(seq, None)
        if text is not None:
            self.unread_bytes -= _held_bytes(text)

    @_locked
    def terms_of(self, seq: int) -> set[str]:
        """The keyword index's distinct terms of one memory."""
        return set(self.keywords.tokens_of(seq))

    @_locked
    def term_df(self, term: str) -> int:
        """How many of the scope's memories hold one index term."""
        return int(self.keywords.df(term))

    @_locked
    def term_idf(self, term: str) -> float:
        """The scope's bm25 IDF of one index term."""
        return float(self.keywords.idf(term))

    @_locked
    def holds(self, seq: int) -> bool:
        """Whether the memory ``seq`` is one of the scope's active memories this gate holds."""
        return seq in self.keywords

    @_locked
    def keyword_search(self, query: str, k: int, *, allow: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The scope's bm25 ranking of ``query``: [(seq, score)], best first, at most ``k``."""
        seqs, scores = self.keywords.search(query, k, allow=allow)
        return [(int(q), float(x)) for q, x in zip(seqs, scores)]

    @staticmethod
    def share(s: GateScore) -> float:
        """What a memory added with score ``s`` contributes to the threshold: 1 - novelty.

        The adaptive tau is ``gamma`` times the mean novelty of what this scope
        has added (with a prior), so a candidate as novel as a typical addition
        is always added, however sparse or dense the scope, and a NOOP means
        "less than gamma times as novel as what this scope usually takes in".
        The first memory of a scope (novelty +inf) contributes nothing.
        """
        if not math.isfinite(s.novelty):
            return math.nan
        return min(1.0, max(-1.0, 1.0 - s.novelty))

    @_locked
    def nearest(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest memories (seqs, cosines), best first, each at its best cosine over its rows."""
        if self.index is not None:
            seqs, cos = self.index.knn(vector, k)
        elif len(self.state) == 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        else:
            seqs, cos = self.state.nearest(vector, k)
        return self.parts.nearest_memories(seqs, cos, vector, k)

    @_locked
    def found(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """What dense search finds: ``nearest``, each memory at its best row, sentence keys included."""
        seqs, cos = self.nearest(vector, k)
        return self.keys.nearest_memories(seqs, cos, vector, k)

    # ---- changes -------------------------------------------------------------

    @_locked
    def add(self, seq: int, vector: np.ndarray, share: float, text: str, parts: Sequence[Part] = ()) -> None:
        """Store a new memory (and its passages 1..) and count its share (``ScopeGate.share(score)``; nan: none)."""
        self._put(seq, vector, share, text, parts)
        self.threshold.on_add(share)
        self.dirty.add(seq)

    @_locked
    def record_refusal(self, s: GateScore) -> None:
        """Count a refused candidate's share, which no memory will hold.

        A refused candidate still tells the threshold how novel this scope's
        input is. Counting additions alone would bias tau upward (only the
        novel get in, so the mean novelty rises, so tau rises) and the gate
        would feed on itself.
        """
        self.threshold.on_add(self.share(s))

    @_locked
    def replace(self, seq: int, vector: np.ndarray, text: str, parts: Sequence[Part] = ()) -> None:
        """An UPDATE changed this memory's text: swap its vector, passages and terms, keep its threshold share."""
        self._put(seq, vector, self.shares.get(seq, math.nan), text, parts)
        self.dirty.add(seq)

    @_locked
    def remove(self, seq: int) -> None:
        if not self.state.contains(seq):
            return
        self.threshold.on_remove(self.shares.get(seq, math.nan))
        self._drop(seq)
        self.dirty.add(seq)

    @_locked
    def sync(self, changes: "ChangesRow", *, threshold: _core.ThresholdState, sage_tau: float | None,
             revision: int) -> None:
        """Catch up with another writer's commits: apply the changed rows, take its threshold.

        ``threshold`` and ``sage_tau`` are the scope row's two columns, as in the constructor.
        """
        for seq, active, vector, share, text in zip(changes.seqs, changes.active, changes.matrix, changes.shares,
                                                    changes.texts):
            if active:
                self._put(int(seq), np.ascontiguousarray(vector), float(share), text)
            else:
                self._drop(int(seq))
        self._load_parts(changes.parts)
        self.threshold = self.profile.restore_threshold(threshold, sage_tau=sage_tau)
        self._sage_tau_read = sage_tau
        self.revision = revision

    def _put(self, seq: int, vector: np.ndarray, share: float, text: str, parts: Sequence[Part] = ()) -> None:
        """Store or overwrite a vector, its passages, its terms and its share, leaving the threshold alone."""
        existed = self.state.contains(seq)
        if existed:
            self.state.remove(seq)
            self.keywords.replace(seq, text)
        else:
            self.keywords.add(seq, text)
        self._hold_text(seq, text)
        self.state.add(seq, vector)
        self.parts.put(seq, [p for p in parts if not p.is_key])
        self.keys.put(seq, [p for p in parts if p.is_key])
        self.shares[seq] = share
        if self.index is not None:
            if existed:
                self.index.replace(seq, vector)
            else:
                self.index.add(seq, vector)
        elif len(self.state) >= self.index_min_size:
            self.index = ScopeIndex.build(self.state.ids(), self.state.vectors(), dim=self.dim)

    def _drop(self, seq: int) -> None:
        if not self.state.contains(seq):
            return
        self.state.remove(seq)
        self.parts.drop(seq)
        self.keys.drop(seq)
        self.keywords.remove(seq)
        self._forget_readings(seq)
        self.ids.pop(seq, None)
        self.shares.pop(seq, None)
        if self.index is not None:
            self.index.remove(seq)

    @_locked
    def threshold_bytes(self) -> bytes:
        return self.threshold.to_bytes()


def _readings_bytes(readings: Readings) -> int:
    """What holding a memory's readings costs: the tuple and its dict entry, and each set that is
    not empty (the empty ones are one object) with its items."""
    return _READINGS_ENTRY + sum(_SET_BYTES + _SET_ITEM * len(s) for s in readings if s)


#: A Readings tuple and its dict entry; a small frozenset; one item of one (a short string or
#: pair, and its slot). Measured with sys.getsizeof on LoCoMo-like texts: 72 bytes for a text
#: that says none of them, about 1 KB for one that says a count, a name and a change.
_READINGS_ENTRY = 172
_SET_BYTES = 216
_SET_ITEM = 80


def _held_bytes(text: str) -> int:
    """What holding a text costs: the str object and its dict entry."""
    return sys.getsizeof(text) + _DICT_ENTRY


#: A dict entry's share of its table (key, value and hash slots, with the table's slack).
_DICT_ENTRY = 100
