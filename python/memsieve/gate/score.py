"""``GateScore``: what the gate says about one candidate, under any profile."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from memsieve.gate.versions import VersionBars, VersionEvidence, newer_version_reason


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
            memsieve.text.cues) the candidate says and none of its nearest
            memories says. Any such cue counts as new information.
        info_tau: the information threshold the candidate was held to.
        new_values: the numbers, dates, names and counted things the
            candidate says and its nearest memory, the one a NOOP would fold
            it into, does not (the kde profile; see ``unsaid_values``).
        decided_by: which signal set the route: ``"novelty"``,
            ``"information"`` (close in meaning but carrying new
            information), ``"first"`` (empty scope) or ``"none"`` (no gate).
        nearest_lacks: the content words (index terms) the candidate says and its
            nearest memory does not hold (the kde profile): with ``new_values``,
            what folding it into that memory alone would leave unsaid.
        folded_information: the information term against the nearest memory alone, computed
            when the term against all ``info_k`` neighbours was below ``info_tau`` for a
            candidate below tau (nan otherwise): at least ``info_fold_tau`` sends it to the band.
        other_subject: it names its subject by another number or name than its nearest
            memory ("Room 102 ..." / "Room 101 ..."): another fact, stored but never linked as
            that memory's newer version.
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
    new_values: tuple[str, ...] = ()
    other_subject: bool = False
    nearest_lacks: tuple[str, ...] = ()
    folded_information: float = math.nan

    @property
    def says_more(self) -> bool:
        """It carries new information or says a change its nearest memories do not, and is
        about the same thing as its nearest (not ``other_subject``): stored beside them, it is
        their newer version."""
        evidence = VersionEvidence(said=frozenset(self.changes), information=self.information,
                                   new_values=self.new_values, other_subject=self.other_subject)
        return newer_version_reason(evidence, bars=VersionBars(info_tau=self.info_tau)) is not None


class Readings(NamedTuple):
    """What the gate reads of a memory's text to weigh a fold into it (each empty when it says none).

    Attributes:
        cues: its change cues, as the profile reads them (``GateProfile.cues_of``).
        counts: its (number, thing counted) pairs.
        named: the numbers and names that say which thing it is about.
        stated: the numbers (a list's numbering left out) and dating phrases it states.
    """

    cues: frozenset[str]
    counts: frozenset[tuple[str, str]]
    named: frozenset[str]
    stated: frozenset[str]


#: The readings of a memory the gate does not hold: it says nothing (as ``NO_MARKS`` for marks).
NO_READINGS = Readings(cues=frozenset(), counts=frozenset(), named=frozenset(), stated=frozenset())
