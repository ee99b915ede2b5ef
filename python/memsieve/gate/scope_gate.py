"""A scope's gate: its vectors, its threshold and each memory's share, routed per profile.

``ScopeGate`` is the one owner of a scope's threshold: the Rust ``ScopeState``
is a pure vector index, while the ``ThresholdState`` and the share each memory
contributed to it (1 - its novelty when it was admitted) live here. The state
is kept incrementally: adding or removing a memory costs O(d) plus the Rust
bookkeeping, never a re-scan of the scope (except under the ``sage`` profile,
whose density proxy is by definition a PCA of the whole scope and is
recomputed once per ``add`` call, as SAGE does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from memsieve import _core
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.gate.config import GateConfig
from memsieve.gate.ann import ScopeIndex
from memsieve.read.versions import VersionBars, VersionEvidence, newer_version_reason

if TYPE_CHECKING:
    from memsieve.store.base import ChangesRow

SAGE_KAPPA_CLIP = (1e-3, 50.0)
# The information term's IDF prior for small scopes, idf_eff = (N idf + m * prior) / (N + m):
# passed to the Rust core and used by the substitution netting below, so both read one value.
_IDF_PRIOR, _IDF_PRIOR_WEIGHT = 3.0, 10.0
_T = TypeVar("_T")

@functools.lru_cache(maxsize=16384)
def _has_digit(term: str) -> bool:
    return any(ch.isdigit() for ch in term)


@dataclass(frozen=True)
class GateScore:
    """The gate's view of one candidate: both novelties and the thresholds they meet.

    Attributes:
        novelty: the semantic novelty (cosine-distance units).
        information: the informational novelty in [0, 1]: the IDF-weighted
            share of the candidate's content terms that none of its nearest
            memories holds (nan under another profile, for a vector scored
            without its text, or in an empty scope).
        new_terms: those terms, heaviest first.
        changes: the change cues ("no longer", "quit", "now", ...; see
            the scope's Lexicon) the candidate says and none of its nearest
            memories says. Any such cue counts as new information.
        info_tau: the information threshold the candidate was held to.
        decided_by: which signal set the route: ``"novelty"``,
            ``"information"`` (close in meaning but carrying new
            information), ``"first"`` (empty scope) or ``"none"`` (no gate).
    """

    novelty: float
    tau: float
    delta: float
    kappa: float
    nearest_seq: int | None
    nearest_cos: float
    route: str  # "ADD" | "BAND" | "NOOP"
    information: float = math.nan
    new_terms: tuple[str, ...] = ()
    decided_by: str = "novelty"
    changes: tuple[str, ...] = ()
    info_tau: float = math.nan

    @property
    def says_more(self) -> bool:
        """It carries new information or says a change its nearest memories do not:
        stored beside them, it is their newer version."""
        evidence = VersionEvidence(said=frozenset(self.changes), information=self.information)
        return newer_version_reason(evidence, bars=VersionBars(info_tau=self.info_tau)) is not None


def _locked(method: Callable[..., _T]) -> Callable[..., _T]:
    """Serialize access to the Rust state: it releases the GIL while it scans, and
    a search on one thread must not meet an add on another mid-borrow."""

    @functools.wraps(method)
    def wrapper(self: "ScopeGate", *args: Any, **kwargs: Any) -> _T:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


def new_threshold(config: GateConfig) -> _core.ThresholdState:
    """A fresh threshold with the configuration's parameters (the core has no defaults)."""
    return _core.ThresholdState(
        gamma=config.gamma,
        tau_min=config.tau_min,
        tau_max=config.tau_max,
        kappa_c=config.kappa_c,
        prior_share=config.prior_share,
        prior_weight=config.prior_weight,
    )


class ScopeGate:
    """One scope's gate state: vectors (Rust ``ScopeState``), threshold and shares, revision.

    Args:
        config: the gate configuration.
        dim: embedding width.
        threshold: the persisted threshold state, or a fresh one.
        sage_tau: SAGE's persisted EMA threshold.
        revision: the store revision this state reflects.
        index_min_size: from this many memories on, an hnswlib index answers
            nearest-neighbour queries instead of the exact scan.
        index_path: where the index is persisted (None: in memory only).
        lexicon: the language's change cues and word rarity (memsieve.text.Lexicon;
            it remembers its recent answers, which each candidate needs twice or more).
    """

    def __init__(self, config: GateConfig, dim: int, *, threshold: _core.ThresholdState,
                 sage_tau: float | None, revision: int, index_min_size: int = 20_000,
                 index_path: str | None = None, lexicon: Lexicon = ENGLISH) -> None:
        self.config = config
        self.lexicon = lexicon
        self.dim = dim
        self.state = _core.ScopeState(dim, vectors=config.vectors)
        # The scope's own bm25 index: keyword search and the information term
        # read it, and it changes with the vectors, so one catch-up serves both.
        self.keywords = _core.KeywordIndex()
        self.threshold = threshold
        self.sage_tau = sage_tau
        self.revision = revision
        # What each memory added to the threshold, so that removing it can undo exactly that.
        self.shares: dict[int, float] = {}
        # The change cues of the memories that say any (most say none).
        self.cues: dict[int, frozenset[str]] = {}
        self.trace: list[tuple[int, float, float]] = []
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
            self._note_cues(ids.tolist(), texts)
        self.shares.update(zip((int(s) for s in seqs), (float(c) for c in shares)))
        if len(self.state) >= self.index_min_size:
            if self.index_path is not None:
                self.index = ScopeIndex.load(self.index_path, dim=self.dim, revision=self.revision,
                                             count=len(self.state))
            if self.index is None:
                self.index = ScopeIndex.build(self.state.ids(), self.state.vectors(), dim=self.dim)

    @_locked
    def save_index(self) -> None:
        if self.index is not None and self.index_path is not None:
            self.index.save(self.index_path, self.revision)

    # ---- per call ------------------------------------------------------------

    @_locked
    def begin_call(self) -> None:
        """SAGE updates its threshold once per add() call, from the scope's density."""
        if self.config.profile != "sage":
            return
        c = self.config
        rho = _core.sage_density(self.state.vectors()) if len(self.state) >= 2 else 0.0
        tau_star = _core.sage_tau_star(rho, tau0=c.sage_tau0, tau_min=c.sage_tau_min, lam=c.sage_lambda)
        self.sage_tau = _core.sage_ema(self.sage_tau, tau_star, alpha=c.sage_alpha)

    @_locked
    def end_call(self) -> None:
        self.trace.append((len(self.state), self.current_tau(), self.current_kappa()))

    def current_tau(self) -> float:
        c = self.config
        if c.profile == "none":
            return 0.0
        if c.profile == "sage":
            return self.sage_tau if self.sage_tau is not None else c.sage_tau0 + c.sage_tau_min
        if c.tau is not None:
            return c.tau
        return self.threshold.tau

    @_locked
    def current_kappa(self) -> float:
        if self.config.profile == "sage":
            return self.state.kappa_banerjee(clip=SAGE_KAPPA_CLIP) if len(self.state) else SAGE_KAPPA_CLIP[1]
        if self.config.profile == "memsieve":
            return self.threshold.kappa
        return math.inf

    # ---- scoring -------------------------------------------------------------

    @_locked
    def score(self, vector: np.ndarray, text: str | None = None) -> GateScore:
        """Score one (d,) float32 unit vector (and its text) against the scope and route it.

        Under the memsieve profile a NOOP needs both signals low: a candidate
        close in meaning to what is stored (novelty < tau) that still carries
        new information (``information >= config.info_tau`` against its
        ``config.info_k`` nearest memories) goes to the band instead, where it
        is stored as a newer version of its nearest memory.
        """
        c = self.config
        tau = self.current_tau()
        kappa = self.current_kappa()
        delta = 0.0 if c.profile == "none" else c.delta
        if c.profile == "none" or len(self.state) == 0:
            first = self._nearest_of(vector)
            return GateScore(novelty=math.inf if not len(self.state) else 1.0 - first[1], tau=tau, delta=delta,
                             kappa=kappa, nearest_seq=first[0], nearest_cos=first[1], route="ADD",
                             decided_by="none" if c.profile == "none" else "first")
        nearest: tuple[int | None, float]
        if self.index is not None and c.profile != "sage":
            seqs, cos = self.index.knn(vector, c.k)
            novelty = (_core.novelty_from_topk(np.ascontiguousarray(cos), kappa) if c.profile == "memsieve"
                       else 1.0 - float(cos[0]))
            neighbours, nearest = [int(x) for x in seqs], (int(seqs[0]), float(cos[0]))
        else:
            if c.profile == "memsieve":
                r = self.state.score(vector, k=c.k, kappa=kappa)
            elif c.profile == "sage":
                r = self.state.score_sage(vector, kappa=kappa, k=c.k)
            else:
                r = self.state.score_maxcos(vector, k=c.k)
            novelty, neighbours, nearest = r.novelty, list(r.top_ids), (r.nearest_id, r.nearest_cos)
        route = _core.route(novelty, tau, delta)
        score = GateScore(novelty=novelty, tau=tau, delta=delta, kappa=kappa, nearest_seq=nearest[0],
                          nearest_cos=nearest[1], route=route)
        # The information term is computed for every candidate, an ADD on
        # meaning alone included, so that every Decision reports both signals.
        if text is None or c.profile != "memsieve":
            return score
        information, new = self.keywords.info_novelty(text, neighbours[:c.info_k], w_number=c.info_number_weight,
                                                      w_name=c.info_name_weight, w_word=c.info_word_weight,
                                                      idf_prior=_IDF_PRIOR, prior_weight=_IDF_PRIOR_WEIGHT)
        if information > 0 and nearest[0] is not None:
            information = self._net_information(text, int(nearest[0]), information)
        said = self.lexicon.cues(text).difference(*(self.cues.get(n, ()) for n in neighbours[:c.info_k]))
        changes = tuple(sorted(said))
        carries = information >= c.info_tau or bool(changes)
        routed = "BAND" if route == "NOOP" and carries else route  # an ADD stays an ADD
        return GateScore(novelty=novelty, tau=tau, delta=delta, kappa=kappa, nearest_seq=nearest[0],
                         nearest_cos=nearest[1], route=routed, information=information, new_terms=tuple(new),
                         decided_by="information" if routed != route else "novelty", changes=changes,
                         info_tau=c.info_tau)

    def _note_cues(self, seqs: list[int], texts: list[str]) -> None:
        for seq, text in zip(seqs, texts):
            said = self.lexicon.cues(text)
            if said:
                self.cues[seq] = said
            else:
                self.cues.pop(seq, None)

    def _net_information(self, text: str, nearest: int, information: float) -> float:
        """The information term net of word substitutions against the nearest memory.

        A paraphrase swaps words ("I'm afraid of heights" -> "Heights scare
        me"): its new plain words are paid for by the nearest memory's words it
        dropped. A new detail keeps the stored words and adds some; a new
        number or name counts in full either way, since a changed value is a
        correction, not a paraphrase. Measured on the updates dev set, this
        keeps paraphrases NOOPs at thresholds low enough to let details in.
        """
        c = self.config
        weights = {"number": c.info_number_weight, "name": c.info_name_weight, "word": c.info_word_weight}
        mine = {term: (kind, surface) for term, surface, kind in _core.tokenize_kinds(text)}
        # A dict, not a set: the sums below then run in the memory's own token
        # order, so the float is the same in every process (a set's order
        # follows PYTHONHASHSEED and moved the last bit of 161 of 3,435 LoCoMo
        # dev turns between runs).
        theirs = dict.fromkeys(self.keywords.tokens_of(nearest))
        n = len(self.keywords)
        # idf_eff(t) = (n * idf(t) + m * prior) / (n + m), with its two constant
        # parts computed once (the same float operations as term by term).
        kidf, prior, den = self.keywords.idf, _IDF_PRIOR_WEIGHT * _IDF_PRIOR, n + _IDF_PRIOR_WEIGHT
        total = new_values = new_words = 0.0
        for term, (kind, surface) in mine.items():
            weight = weights[kind] * ((n * kidf(term) + prior) / den)
            total += weight
            if term in theirs:
                continue
            if kind == "word":
                new_words += weight * self.lexicon.rarity(surface)
            else:
                new_values += weight
        if total <= 0.0:
            return information
        ww = c.info_word_weight
        dropped = sum(ww * ((n * kidf(t) + prior) / den) for t in theirs if t not in mine and not _has_digit(t))
        return min(information, (new_values + max(0.0, new_words - dropped)) / total)

    def _nearest_of(self, vector: np.ndarray) -> tuple[int | None, float]:
        if not len(self.state):
            return None, math.nan
        seqs, cos = self.nearest(vector, 1)
        return int(seqs[0]), float(cos[0])

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
        if self.index is not None:
            return self.index.knn(vector, k)
        if len(self.state) == 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        return self.state.nearest(vector, k)

    # ---- changes -------------------------------------------------------------

    @_locked
    def add(self, seq: int, vector: np.ndarray, share: float, text: str) -> None:
        """Store a new memory and count its share (``ScopeGate.share(score)``; nan: none)."""
        self._put(seq, vector, share, text)
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
    def replace(self, seq: int, vector: np.ndarray, text: str) -> None:
        """An UPDATE changed this memory's text: swap its vector and terms, keep its threshold share."""
        self._put(seq, vector, self.shares.get(seq, math.nan), text)
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
        """Catch up with another writer's commits: apply the changed rows, take its threshold."""
        for seq, active, vector, share, text in zip(changes.seqs, changes.active, changes.matrix, changes.shares,
                                                    changes.texts):
            if active:
                self._put(int(seq), np.ascontiguousarray(vector), float(share), text)
            else:
                self._drop(int(seq))
        self.threshold = threshold
        self.sage_tau = sage_tau
        self.revision = revision

    def _put(self, seq: int, vector: np.ndarray, share: float, text: str) -> None:
        """Store or overwrite a vector, its terms and its share, leaving the threshold alone."""
        existed = self.state.contains(seq)
        if existed:
            self.state.remove(seq)
            self.keywords.replace(seq, text)
        else:
            self.keywords.add(seq, text)
        self._note_cues([seq], [text])
        self.state.add(seq, vector)
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
        self.keywords.remove(seq)
        self.cues.pop(seq, None)
        self.ids.pop(seq, None)
        self.shares.pop(seq, None)
        if self.index is not None:
            self.index.remove(seq)

    @_locked
    def threshold_bytes(self) -> bytes:
        return self.threshold.to_bytes()
