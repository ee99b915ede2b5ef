"""``GateProfile``: the parts of the gate that differ from one scoring method to another.

A profile decides how a scope's threshold is made and read (``tau``,
``kappa``), what happens once per add() call (``begin_call``), and how one
candidate is scored and routed (``score``). ``ScopeGate`` owns everything
else (vectors, keyword index, shares, cues, ids, ANN index, lock) and hands
itself to the profile as a ``ScopeView``. A profile holds no per-scope state:
one instance serves every scope of a config (``GateConfig.gate_profile()``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import ClassVar, Protocol

import numpy as np

import memsieve._core as _core
from memsieve.gate.ann import ScopeIndex
from memsieve.gate.parts import PartRows
from memsieve.gate.params import InformationParams, SageParams, ScoringParams
from memsieve.gate.score import GateScore, Readings
from memsieve.gate.threshold import Threshold
from memsieve.text.marks import Marks
from memsieve.text.lexicon import Lexicon

Neighbours = tuple[float, list[int], tuple[int | None, float]]


class ScopeView(Protocol):
    """What a profile reads of a scope's gate (``ScopeGate`` is one)."""

    state: _core.ScopeState
    parts: PartRows
    keywords: _core.KeywordIndex
    threshold: Threshold
    lexicon: Lexicon
    index: ScopeIndex | None

    def __len__(self) -> int: ...

    def marks_of(self, seq: int) -> Marks | None: ...

    def readings_of(self, seq: int) -> Readings | None: ...

    def nearest(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...


class GateProfile(ABC):
    """One scoring method of the gate, chosen once from ``GateConfig.profile``.

    Args:
        scoring: tau (fixed or None), delta and k.
        sage: SAGE's parameters.
        information: the information term's parameters.

    Attributes:
        needs_fixed_tau: whether ``GateConfig`` must carry a fixed ``tau``.
        uses_index: whether a large scope's hnswlib index may answer the
            score's nearest-neighbour query instead of the exact scan.
        uses_parts: whether the passages of long memories count (each
            memory at its best cosine over its rows, memsieve.gate.parts);
            it needs ``novelty_of_topk``.
    """

    needs_fixed_tau: ClassVar[bool] = False
    uses_index: ClassVar[bool] = True
    uses_parts: ClassVar[bool] = True

    def __init__(self, *, scoring: ScoringParams, sage: SageParams, information: InformationParams) -> None:
        self.scoring = scoring
        self.sage = sage
        self.information = information

    # ---- the threshold -------------------------------------------------------

    def restore_threshold(self, counts: _core.ThresholdState, *, sage_tau: float | None) -> Threshold:
        """The threshold this profile reads, from the scope row's two columns.

        Args:
            counts: the Rust threshold from ``gate_state`` (or a fresh one).
            sage_tau: the row's ``sage_tau`` column.
        """
        return counts

    def stored_sage_tau(self, threshold: Threshold, *, as_read: float | None) -> float | None:
        """What the scope row's ``sage_tau`` column is saved as: by default the value it was read with."""
        return as_read

    def current_tau(self, gate: ScopeView) -> float:
        return self.scoring.tau if self.scoring.tau is not None else gate.threshold.tau

    def current_kappa(self, gate: ScopeView) -> float:
        return math.inf

    @property
    def delta(self) -> float:
        return self.scoring.delta

    def begin_call(self, gate: ScopeView) -> None:
        """Once per add() call, before its candidates are scored; most profiles do nothing."""

    def cues_of(self, lexicon: Lexicon, text: str) -> frozenset[str]:
        """The change cues a memory's text says, kept by the gate for the profile's scores (none by default)."""
        return frozenset()

    def named_of(self, lexicon: Lexicon, text: str) -> frozenset[str]:
        """The numbers and names that say which thing a memory is about, kept like its cues (none by default)."""
        return frozenset()

    def counts_of(self, text: str) -> frozenset[tuple[str, str]]:
        """The (number, thing counted) pairs a memory's text says, kept like its cues (none by default)."""
        return frozenset()

    # ---- scoring -------------------------------------------------------------

    def score(self, gate: ScopeView, vector: np.ndarray, text: str | None, *, whole: str | None = None) -> GateScore:
        """Score one (d,) float32 unit vector (and its text) against the scope and route it.

        ``whole``: the long text that ``text`` is a passage of (memsieve.text.passages), or None.
        """
        tau = self.current_tau(gate)
        kappa = self.current_kappa(gate)
        delta = self.delta
        if len(gate.state) == 0:
            return GateScore(novelty=math.inf, tau=tau, delta=delta, kappa=kappa, nearest_seq=None,
                             nearest_cos=math.nan, route="ADD", decided_by="first")
        novelty, neighbours, nearest = self.novelty(gate, vector, kappa)
        route = _core.route(novelty, tau, delta)
        score = GateScore(novelty=novelty, tau=tau, delta=delta, kappa=kappa, nearest_seq=nearest[0],
                          nearest_cos=nearest[1], route=route)
        return score if text is None else self.weigh_text(gate, score, neighbours, text, whole=whole)

    def novelty(self, gate: ScopeView, vector: np.ndarray, kappa: float) -> Neighbours:
        """(novelty, the top-k seqs nearest first, (nearest seq, its cosine)) of a non-empty scope."""
        if len(gate.parts) and self.uses_parts:
            # The k nearest memories, not rows: a long memory counts once, at its best passage.
            seqs, cos = gate.nearest(vector, self.scoring.k)
            return self.novelty_of_topk(cos, kappa), [int(x) for x in seqs], (int(seqs[0]), float(cos[0]))
        if gate.index is not None and self.uses_index:
            seqs, cos = gate.index.knn(vector, self.scoring.k)
            return self.novelty_of_topk(cos, kappa), [int(x) for x in seqs], (int(seqs[0]), float(cos[0]))
        r = self.scan(gate.state, vector, kappa)
        return r.novelty, list(r.top_ids), (r.nearest_id, r.nearest_cos)

    @abstractmethod
    def scan(self, state: _core.ScopeState, vector: np.ndarray, kappa: float) -> _core.ScoreResult:
        """The exact scan's result (``novelty``, ``top_ids``, ``nearest_id``, ``nearest_cos``)."""

    def novelty_of_topk(self, cos: np.ndarray, kappa: float) -> float:
        """The novelty from an ANN index's top-k cosines (a profile with ``uses_index`` defines it)."""
        raise NotImplementedError(f"{type(self).__name__} scores by exact scan only")

    def weigh_text(self, gate: ScopeView, score: GateScore, neighbours: list[int], text: str, *,
                   whole: str | None = None) -> GateScore:
        """Refine a routed score with the candidate's text; by default the text does not count."""
        return score
