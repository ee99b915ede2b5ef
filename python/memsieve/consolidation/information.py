"""Duplicates, versions or distinct facts: what two memories say that the other does not.

Two memories close in meaning are *duplicates* when neither says anything the
other does not, and *versions* of one fact when they differ in content: a
number, a date or a name that one holds and the other lacks ("the meeting is
at 3pm" / "the meeting is at 4pm"), or enough rare words that one carries information the other lacks
(at least ``GateConfig.info_tau``, the gate's bar).

They are *distinct* facts, and never merged, when each says much the other
does not: the information term over their plain words (numbers, dates and
names left out, so that a corrected value stays a version) is at least
``DISTINCT_INFO`` in *both* directions. "Melanie went camping in the mountains last week" and "Melanie
enjoys camping with her kids in the forest" are close in meaning (cosine
0.80) but neither contains the other; closing the older one would lose an
event. A version that adds a detail ("we have a dog" / "we have a
greyhound called Biscuit") is new in one direction only, and a corrected
value in neither by much.

The information of a text against another (``pair_information``) is a
pairwise cousin of the gate's information term, not the gate's own:

    info(A, B) = sum over t in A - B of w(t) max(idf(t), 1e-3)
                 / sum over t in A of w(t) max(idf(t), 1e-3)

with A and B the two texts' distinct content terms, w the weight of a term's
kind (``GateConfig.info_number_weight``, ``info_name_weight``,
``info_word_weight``; the heaviest where a term has several) and idf the
scope's bm25 IDF, read from the scope's ``ScopeGate``. The gate's term
(rust/info.rs, netted by ``ScopeGate``) differs in three ways: it shrinks
each IDF towards a prior, (N idf + 10 * 3.0) / (N + 10) in a scope of N
memories, where this one takes the IDF as it is; it compares a text with the
union of its ``info_k`` nearest memories, where this one compares two
memories; and it nets word substitutions against the nearest memory (new
plain words weighted by their rarity, less the nearest memory's words the
text dropped), where this one does not. Whether two memories are versions
is the one rule of memsieve.read.versions.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from typing import Any

from memsieve import _core
from memsieve.gate.config import GateConfig
from memsieve.read.versions import VersionBars, VersionEvidence, newer_version_reason

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


def pair_information(mine: Mapping[str, str], theirs: Container[str], *, idf: Callable[[str], float],
                     weights: Mapping[str, float]) -> float:
    """The weighted share of one memory's terms that another lacks, in [0, 1] (0 for no terms).

    The formula is the module's ``info(A, B)``; the sums run in ``mine``'s
    order, so the float is the same in every process.

    Args:
        mine: the memory's content terms, term -> kind (``TermView.terms``).
        theirs: the other memory's terms.
        idf: the scope's bm25 IDF of a term.
        weights: the weight of each kind (``"number"``, ``"name"``, ``"word"``).
    """
    def weight(term: str, kind: str) -> float:
        # The floor keeps a term that the scope holds almost everywhere counting a little, by its kind.
        return weights[kind] * max(idf(term), 1e-3)

    total = sum(weight(t, k) for t, k in mine.items())
    if total <= 0.0:
        return 0.0
    return sum(weight(t, k) for t, k in mine.items() if t not in theirs) / total


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
        self._bars = VersionBars(info_tau=config.info_tau)
        self._distinct = distinct_info
        self._terms: dict[int, dict[str, str]] = {}
        self._idf: dict[str, float] = {}

    def terms(self, seq: int, text: str) -> dict[str, str]:
        """term -> kind of one memory's text, in text order (a term of several kinds keeps the heaviest)."""
        if seq not in self._terms:
            kinds: dict[str, str] = {}
            for term, _, kind in _core.tokenize_kinds(text):
                old = kinds.get(term)
                if old is None or self._weights[kind] > self._weights[old]:
                    kinds[term] = kind
            self._terms[seq] = kinds
        return self._terms[seq]

    def idf(self, term: str) -> float:
        """The scope's bm25 IDF of one term, at least 0, read once per term."""
        if term not in self._idf:
            self._idf[term] = max(self._gate.term_idf(term), 0.0)
        return self._idf[term]

    def information(self, mine: dict[str, str], theirs: dict[str, str]) -> float:
        """``pair_information`` of two memories' terms with this scope's IDF and kind weights."""
        return pair_information(mine, theirs, idf=self.idf, weights=self._weights)

    def verdict(self, a: tuple[int, str], b: tuple[int, str]) -> PairVerdict:
        """Duplicates or versions, for two (seq, text) memories (in either order)."""
        ta, tb = self.terms(*a), self.terms(*b)
        info_ab, info_ba = self.information(ta, tb), self.information(tb, ta)
        values_ab, values_ba = _new_values(ta, tb), _new_values(tb, ta)
        # Consolidation does not ask which is newer: two memories are versions when either is a
        # newer version of the other.
        versions = any(newer_version_reason(VersionEvidence(information=info, new_values=values),
                                            bars=self._bars) is not None
                       for info, values in ((info_ab, values_ab), (info_ba, values_ba)))
        # Distinctness reads the plain words only: a corrected value is new in both directions
        # ("3pm" / "4pm") and is still a version of one fact.
        wa = {t: k for t, k in ta.items() if k == "word"}
        wb = {t: k for t, k in tb.items() if k == "word"}
        distinct = min(self.information(wa, wb), self.information(wb, wa)) >= self._distinct
        return PairVerdict(versions=versions, information=max(info_ab, info_ba),
                           differing=tuple(sorted(values_ab + values_ba)), distinct=distinct)


def _new_values(mine: dict[str, str], theirs: dict[str, str]) -> tuple[str, ...]:
    """The number, date and name terms of ``mine`` that ``theirs`` lacks."""
    return tuple(t for t, k in mine.items() if k in VALUE_KINDS and t not in theirs)
