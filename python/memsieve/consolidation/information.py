"""Duplicates, versions or distinct facts: what two memories say that the other does not.

Consolidation asks of two close memories, the older and the newer, what the
gate asks of a candidate and its nearest memory, with the gate's own
measures:

- the newer's *information* against the older is the gate's term, one Rust
  formula (``KeywordIndex.info_novelty_netted`` with the older as the only
  neighbour and the nearest: the new-term share with the IDF shrunk towards
  a prior, net of the words a paraphrase swapped); its *new values* are the
  gate's ``unsaid_values`` (numbers, dates, names and counted things the
  older does not say); its *change* is the change cues it says and the older
  does not;
- the newer is a *version* of the older when ``newer_version_reason`` (the
  one rule of memsieve.gate.versions) says so, and the two are
  *duplicates* when neither carries anything;
- the older may leave search only when ``older_may_leave`` says nothing true
  is lost: the newer says a change, or the older's plain words carry less
  than ``info_tau`` against the newer (the same Rust formula,
  ``_core.net_information``, over its words, nothing netted: a detail only
  the older holds is kept) and its values are ones the newer replaced.
  Otherwise the two are *distinct* facts and never merged. Memories that
  name their subject by a different number or name ("Room 101 ..." /
  "Room 102 ...", ``Lexicon.identifying_values``) are distinct too.

"Melanie went camping in the mountains last week" and "Melanie enjoys
camping with her kids in the forest" are close in meaning (cosine 0.80) but
the older's event is not in the newer: both stay. "My gate code is 4471" /
"My gate code is 4472" are one attribute with a newer value: the older
leaves search, its validity closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import memsieve._core as _core
from memsieve.gate.config import GateConfig
from memsieve.gate.profiles.kde import IDF_PRIOR, IDF_PRIOR_WEIGHT, unsaid_values
from memsieve.text.marks import Marks
from memsieve.text.unmarked import other_doers, other_modality, unmarked
from memsieve.gate.versions import (VersionBars, VersionEvidence, newer_version_reason, older_may_leave,
                                    other_subject_of_ids, slot_terms)


@dataclass(frozen=True)
class PairVerdict:
    """How two memories relate, the older first.

    Attributes:
        versions: True when the newer is a newer version of the older (``newer_version_reason``).
        information: the larger of the two directions' information terms, in [0, 1].
        differing: the values only one of them says (``unsaid_values``, both ways), sorted.
        distinct: True when merging would lose what the older says (``older_may_leave``
            is False): never merged.
    """

    versions: bool
    information: float
    differing: tuple[str, ...]
    distinct: bool = False


def _one(_: str) -> float:
    return 1.0


class TermView:
    """Two memories of a scope as the gate sees them: its keyword index, counts and lexicon.

    Args:
        gate: the scope's ``ScopeGate`` (its ``keywords``, ``readings_of``
            and ``lexicon``); every memory asked about is in its index.
        config: the gate configuration (kind weights and ``info_tau``).
    """

    def __init__(self, gate: Any, config: GateConfig) -> None:
        self._gate = gate
        self._config = config
        self._bars = VersionBars(info_tau=config.info_tau)
        self._params = {"w_number": config.info_number_weight, "w_name": config.info_name_weight,
                        "w_word": config.info_word_weight, "idf_prior": IDF_PRIOR,
                        "prior_weight": IDF_PRIOR_WEIGHT}

    # Every reading holds the gate's lock: the Rust index releases the GIL while it reads, and a
    # dry run reads it beside a write on another thread (the writer holds the same lock).

    def information(self, mine: tuple[int, str], theirs: tuple[int, str]) -> float:
        """The gate's information term of one memory against another (``info_novelty_netted``)."""
        keywords, lexicon = self._gate.keywords, self._gate.lexicon
        with self._gate.lock:
            info, _ = keywords.info_novelty_netted(mine[1], [theirs[0]], theirs[0], rarity=lexicon.rarity_of,
                                                   **self._params)
        return float(info)

    def word_information(self, mine: tuple[int, str], theirs: tuple[int, str]) -> float:
        """The share of one memory's plain words the other lacks: ``_core.net_information`` over its
        words, IDF shrunk as the gate shrinks it, and nothing netted (the other's terms given are
        only those both hold), so a paraphrase's swapped words do not pay for a lost detail."""
        keywords = self._gate.keywords
        words = [t for t in _core.tokenize_kinds(mine[1]) if t[2] == "word"]
        if not words:
            return 0.0
        with self._gate.lock:
            held = set(keywords.tokens_of(theirs[0]))
            shared = list(dict.fromkeys(t[0] for t in words if t[0] in held))
            return float(_core.net_information(1.0, words, shared, n_docs=len(keywords), idf=keywords.idf,
                                               rarity=_one, **self._params))

    def evidence(self, mine: tuple[int, str], theirs: tuple[int, str], *, words: bool = False) -> VersionEvidence:
        """What ``mine`` says against ``theirs``, as the gate measures a candidate against its nearest."""
        gate, lexicon = self._gate, self._gate.lexicon
        said = lexicon.cues(mine[1]) - lexicon.cues(theirs[1])
        other = other_subject_of_ids(lexicon.identifying_values(mine[1]), lexicon.identifying_values(theirs[1]))
        info = self.word_information(mine, theirs) if words else self.information(mine, theirs)
        with gate.lock:
            unsaid = unsaid_values(gate, mine[1], theirs[0])
        return VersionEvidence(said=said, information=info, new_values=unsaid,
                               shares_slot=bool(slot_terms(mine[1], lexicon) & slot_terms(theirs[1], lexicon)),
                               other_subject=other)

    def verdict(self, older: tuple[int, str], newer: tuple[int, str]) -> PairVerdict:
        """How two (seq, text) memories relate, the older first."""
        forward = self.evidence(newer, older)
        backward = self.evidence(older, newer, words=True)
        versions = newer_version_reason(forward, bars=self._bars) is not None
        leave = older_may_leave(forward, backward, bars=self._bars)
        differing = tuple(sorted(set(forward.new_values) | set(backward.new_values)))
        return PairVerdict(versions=versions, information=max(forward.information, self.information(older, newer)),
                           differing=differing,
                           distinct=not leave or self.told_apart(older[1], newer[1], versions=versions))

    def done_apart(self, a: Any, b: Any) -> bool:
        """Whether two memories (``MemoryItem``) were told on different days and one tells of a thing
        done on its day (``Lexicon.tells_of_its_day``): the gate keeps such a pair apart
        (memsieve.write.path), and a merge would leave that event under the other's day, or make two
        events one. Two that name their date or year ("... in 2019") tell of that day wherever told."""
        lexicon = self._gate.lexicon
        return a.told_on != b.told_on and (lexicon.tells_of_its_day(a.text) or lexicon.tells_of_its_day(b.text))

    def told_apart(self, older: str, newer: str, *, versions: bool) -> bool:
        """What the gate's fold check reads in two texts and term sets cannot see: a merge of these
        would lose a true fact.

        Either way: another doer ("Ben hired me" / "I hired Ben"), a plan against a deed, the same
        values in another order ("Lena is 41 and Marco is 38" / the ages swapped), or another person
        the fact is about ("my daughter" / "my cousin's daughter"). Duplicates: anything one says
        that folding it into the other would leave unsaid ("7 am" / "7 pm"), as the gate refuses such
        a NOOP. Versions: two past facts ("I visited Paris in 2019" / "... in 2021") are both true;
        a newer value supersedes a state, not what happened.
        """
        lexicon = self._gate.lexicon
        a, b = lexicon.marks(older), lexicon.marks(newer)
        if other_doers(a, b) or other_doers(b, a) or other_modality(a, b) or _swapped(a, b):
            return True
        sa, sb = lexicon.subject(older), lexicon.subject(newer)
        if sa.sure and sb.sure and (sa.who, sa.terms, sa.own) != (sb.who, sb.terms, sb.own):
            return True
        if versions:
            # (the values each says, from the marks: ``differing`` reads a long text by its opening)
            return set(a.values) != set(b.values) and "past" in a.tense and "past" in b.tense
        return bool(unmarked(a, b) or unmarked(b, a))


def _swapped(a: Marks, b: Marks) -> bool:
    """Whether two texts say the same values of one class (numbers, days, names) in another order."""
    for cls in {c for c, _ in a.values} & {c for c, _ in b.values}:
        mine = [t for c, t in a.values if c == cls]
        theirs = [t for c, t in b.values if c == cls]
        if len(set(mine)) > 1 and set(mine) == set(theirs) and mine != theirs:
            return True
    return False
