"""Duplicates or versions: the gate's information term applied to a pair of memories.

Two memories close in meaning are *duplicates* when neither says anything the
other does not, and *versions* of one fact when they differ in content: a
number, a date or a name that one holds and the other lacks ("the meeting is
at 3pm" / "the meeting is at 4pm"), or enough rare words that the gate's
information term would have let the newer one in beside the older.

They are *distinct* facts, and never merged, when each says much the other
does not: the information term over their plain words (numbers, dates and
names left out, so that a corrected value stays a version) is at least
``DISTINCT_INFO`` in *both* directions. "Melanie went camping in the mountains last week" and "Melanie
enjoys camping with her kids in the forest" are close in meaning (cosine
0.80) but neither contains the other; closing the older one would lose an
event. A version that adds a detail ("we have a dog" / "we have a
greyhound called Biscuit") is new in one direction only, and a corrected
value in neither by much.

The information of a text against another is the gate's (rust/info.rs):
the share of the text's content terms, each weighted by its kind
(``GateConfig.info_number_weight``, ``info_name_weight``,
``info_word_weight``) and by its IDF in the scope's keyword index, that the
other lacks. Terms and IDF are read from the scope's ``ScopeGate``, the same
index the write path scores with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memsieve import _core
from memsieve.gate.config import GateConfig

#: Kinds whose difference alone makes two memories versions: a changed value is a correction.
VALUE_KINDS = ("number", "name")

#: The information both directions must reach for two memories to be distinct facts. On the
#: LoCoMo dev facts, pairs at cosine >= 0.8 have a median smaller-direction information of 0.69;
#: paraphrases and added details sit below 0.5 (docs/CONSOLIDATION.md).
DISTINCT_INFO = 0.5


@dataclass(frozen=True)
class PairVerdict:
    """How two memories relate.

    Attributes:
        versions: True when they differ in content (see the module docs).
        distinct: True when each says much the other does not: never merged.
        information: the larger of the two directions' information terms, in [0, 1].
        differing: the number, date and name terms only one of them holds, sorted.
    """

    versions: bool
    information: float
    differing: tuple[str, ...]
    distinct: bool = False


class TermView:
    """The content terms of a scope's memories, with the scope's IDF.

    Args:
        gate: the scope's ``ScopeGate`` (only its public ``term_idf`` is read).
        config: the gate configuration (kind weights and ``info_tau``).
        distinct_info: see ``DISTINCT_INFO``; above 1, no pair is distinct.
    """

    def __init__(self, gate: Any, config: GateConfig, *, distinct_info: float = DISTINCT_INFO) -> None:
        self._gate = gate
        self._weights = {"number": config.info_number_weight, "name": config.info_name_weight,
                         "word": config.info_word_weight}
        self._tau = config.info_tau
        self._distinct = distinct_info
        self._terms: dict[int, dict[str, str]] = {}
        self._idf: dict[str, float] = {}

    def terms(self, seq: int, text: str) -> dict[str, str]:
        """term -> kind of one memory's text (a term of several kinds keeps the heaviest)."""
        if seq not in self._terms:
            kinds: dict[str, str] = {}
            for term, _, kind in _core.tokenize_kinds(text):
                old = kinds.get(term)
                if old is None or self._weights[kind] > self._weights[old]:
                    kinds[term] = kind
            self._terms[seq] = kinds
        return self._terms[seq]

    def _weight(self, term: str, kind: str) -> float:
        if term not in self._idf:
            self._idf[term] = max(self._gate.term_idf(term), 0.0)
        # A term the index has never seen (idf 0) still counts by its kind.
        return self._weights[kind] * max(self._idf[term], 1e-3)

    def information(self, mine: dict[str, str], theirs: dict[str, str]) -> float:
        """The weighted share of ``mine``'s terms that ``theirs`` lacks, in [0, 1] (0 for no terms)."""
        total = sum(self._weight(t, k) for t, k in mine.items())
        if total <= 0.0:
            return 0.0
        return sum(self._weight(t, k) for t, k in mine.items() if t not in theirs) / total

    def verdict(self, a: tuple[int, str], b: tuple[int, str]) -> PairVerdict:
        """Duplicates or versions, for two (seq, text) memories."""
        ta, tb = self.terms(*a), self.terms(*b)
        differing = tuple(sorted(t for t in set(ta) ^ set(tb)
                                 if (ta.get(t) or tb.get(t)) in VALUE_KINDS))
        info = max(self.information(ta, tb), self.information(tb, ta))
        # Distinctness reads the plain words only: a corrected value is new in both directions
        # ("3pm" / "4pm") and is still a version of one fact.
        wa = {t: k for t, k in ta.items() if k == "word"}
        wb = {t: k for t, k in tb.items() if k == "word"}
        distinct = min(self.information(wa, wb), self.information(wb, wa)) >= self._distinct
        return PairVerdict(versions=bool(differing) or info >= self._tau, information=info, differing=differing,
                           distinct=distinct)
