"""``KernelDensityGate``: the default profile, a von Mises-Fisher kernel density over the k nearest
memories, an adaptive threshold, and the information term with change cues.

This module is the gate's one reader of language resources: the change cues
(memsieve.text.cues) and word rarity (memsieve.text.rarity).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

import memsieve._core as _core
from memsieve.gate.profiles.base import GateProfile, ScopeView
from memsieve.gate.score import NO_READINGS, GateScore
from memsieve.gate.versions import VersionBars, VersionEvidence, newer_version_reason, other_subject_of_ids
from memsieve.text.cues import value_tokens
from memsieve.text.aligned import changed_in_place, placed_values, swapped_in_slot
from memsieve.text.clauses import said_of_another
from memsieve.text.marks import NO_MARKS, sequence_words
from memsieve.text.unmarked import (other_doers, other_modality, part_of, past_against_present, said_amounts,
                                    unmarked)
from memsieve.text.lexicon import Lexicon
from memsieve.text.when_told import time_phrases

# The information term's IDF prior for small scopes, idf_eff = (N idf + m * prior) / (N + m):
# passed to the Rust core and used by the substitution netting below, so both read one value.
IDF_PRIOR, IDF_PRIOR_WEIGHT = 3.0, 10.0
# A text whose words line up with its nearest memory's at least this much (difflib's ratio) restates
# that memory, and a word it changes there is unsaid (memsieve.text.aligned.changed_in_place). At 0.65,
# "I play the violin" / "I play the cello" line up (0.75) and "Sounds great!" / "Sounds awesome!"
# (0.5) or "I'm afraid of heights" / "Heights scare me" (0.29) do not: measured on LoCoMo dev and
# written probes (docs/GATE.md).
RESTATED_SHARE = 0.65
_NO_COUNTS: frozenset[tuple[str, str]] = frozenset()


class KernelDensityGate(GateProfile):
    """kNN log-sum-exp novelty, an adaptive tau from the scope's typical novelty, and the information term.

    A NOOP needs both signals low: a candidate close in meaning to what is
    stored (novelty < tau) that still carries new information
    (``information >= info_tau`` against its ``info_k`` nearest memories) or
    says a change cue they do not goes to the band instead, where it is stored
    as a newer version of its nearest memory.
    """

    def current_kappa(self, gate: ScopeView) -> float:
        return gate.threshold.kappa

    def cues_of(self, lexicon: Lexicon, text: str) -> frozenset[str]:
        return lexicon.cues(text)

    def named_of(self, lexicon: Lexicon, text: str) -> frozenset[str]:
        return lexicon.identifying_values(text)

    def counts_of(self, text: str) -> frozenset[tuple[str, str]]:
        return counted_pairs(value_tokens(text))

    def scan(self, state: _core.ScopeState, vector: np.ndarray, kappa: float) -> _core.ScoreResult:
        return state.score(vector, k=self.scoring.k, kappa=kappa)

    def novelty_of_topk(self, cos: np.ndarray, kappa: float) -> float:
        return _core.novelty_from_topk(np.ascontiguousarray(cos), kappa)

    def weigh_text(self, gate: ScopeView, score: GateScore, neighbours: list[int], text: str, *,
                   whole: str | None = None) -> GateScore:
        # The information term is computed for every candidate, an ADD on
        # meaning alone included, so that every Decision reports both signals.
        c = self.information
        # One formula, in Rust: the new-term share against the neighbours, net
        # of the words a paraphrase swapped against the nearest memory
        # (rust/gate/info; the same function consolidation calls).
        # A passage is not netted: the words of the whole memory it does not say are mostly
        # said by the text's other passages, not swapped for its own new ones.
        netted = None if whole is not None else score.nearest_seq
        information, new = gate.keywords.info_novelty_netted(
            text, neighbours[:c.k], netted, rarity=gate.lexicon.rarity_of, w_number=c.number_weight,
            w_name=c.name_weight, w_word=c.word_weight, idf_prior=IDF_PRIOR, prior_weight=IDF_PRIOR_WEIGHT)
        if score.route == "ADD":
            # Stored on meaning alone: what a fold would leave unsaid, what change it says and
            # whom it names are read only where a fold is possible (the NOOP and the band routes).
            return GateScore(novelty=score.novelty, tau=score.tau, delta=score.delta, kappa=score.kappa,
                             nearest_seq=score.nearest_seq, nearest_cos=score.nearest_cos, route="ADD",
                             information=information, new_terms=tuple(new), info_tau=c.tau)
        cues = self.cues_of(gate.lexicon, text)
        said = cues.difference(*((gate.readings_of(n) or NO_READINGS).cues for n in neighbours[:c.k]))
        changes = tuple(sorted(said))
        # A NOOP folds the text into its nearest memory alone, and a reader sees
        # that memory, not the folded source: a value that memory does not say
        # would be lost, whatever the other neighbours say.
        unsaid, lacks, undated = ((), (), ()) if score.nearest_seq is None else unsaid_by(gate, text,
                                                                                          int(score.nearest_seq))
        # A text that lines up with the memory word for word but puts some words in place of its
        # own, or among them ("My bike is blue" / "My bike is green"), changes what it says: those
        # words are unsaid however the information term nets them against the words they
        # replaced. A text that lines up says nothing new only if none of its words is changed and
        # what the index cannot show agrees too: a value its stopwords state ("once", "9 pm"), a
        # denial ("I smoke" / "I don't smoke"), a tense, values said in another order, and a change
        # cue that this memory, not merely some neighbour, lacks, a pronoun turned from doer to
        # receiver, two words swapped, and, for a text that lines up, a value word it drops.
        evidence = VersionEvidence(said=frozenset(changes), information=information, new_values=unsaid)
        carries = newer_version_reason(evidence, bars=VersionBars(info_tau=c.tau)) is not None
        marked: tuple[str, ...] = ()
        if score.nearest_seq is not None and marks_may_decide(score.route, carries=carries, unsaid=unsaid,
                                                              lacks=lacks, undated=undated, changes=changes):
            nearest = int(score.nearest_seq)
            mine, theirs = gate.lexicon.marks(text), gate.marks_of(nearest) or NO_MARKS
            if whole is not None:
                # A passage says less than its text: a denial, a tense or a plan that the memory
                # says and this passage does not may be said by another passage of it.
                mine = part_of(mine, gate.lexicon.marks(whole))
            changed = changed_in_place(text, mine, theirs, share=RESTATED_SHARE, filler=gate.lexicon.filler_words,
                                       possessive=gate.lexicon.possessive_ending,
                                       role_words=gate.lexicon.role_prepositions,
                                       speaker_owners=gate.lexicon.self_possessives, part=whole is not None)
            # A text whose every content word the memory holds may still differ from it in what
            # the index cannot see ("I'm dating Alex" / "I dated Alex").
            if changed is not None or not lacks:
                # A content word put in place, or a preposition that says who gives and who
                # gets ("a gift from my aunt" / "a gift for my aunt").
                marked = tuple(w for w in changed or ()
                               if _core.tokenize(w) or w in gate.lexicon.role_prepositions) + unmarked(
                    mine, theirs, aligned=changed is not None)
                marked += tuple(sorted(_denial_as_not(cues)
                                       - _denial_as_not((gate.readings_of(nearest) or NO_READINGS).cues)))
                if whole is None:
                    said_words = sequence_words(text)
                    if changed is not None:
                        marked += placed_values(said_words, mine, theirs, gate.lexicon.placed_values)
                    # A value said with words the memory says of another ("My brother lives in
                    # Austin" / "... in Denver and my sister lives in Austin"), lined up or not.
                    marked += said_of_another(said_words, mine, theirs, gate.lexicon.filler_words)
            else:
                # Who does it needs no alignment. Nor does a plan against a deed ("I was going to
                # buy a bike" / "I bought a bike"), but only where the text says little else the
                # memory lacks (MODAL_MAX_LACKING): two chat turns that share a few words and
                # differ in a "gonna" are the information term's to weigh.
                marked = tuple(other_doers(mine, theirs))
                # An amount said in words ("for about an hour", "a pound and a half") is a number
                # the index does not see: like a digit, the memory it folds into must say it.
                marked += said_amounts(mine, theirs)
                if len(set(lacks) - gate.lexicon.modal_terms) <= MODAL_MAX_LACKING:
                    marked += tuple(other_modality(mine, theirs))
                # Nor does a deed against a state now ("I had our second baby" / "I'm pregnant with
                # our second"), where the text says little else the memory lacks.
                if len(lacks) <= TENSE_MAX_LACKING:
                    marked += tuple(past_against_present(mine, theirs))
                # A rebuilt sentence that keeps the memory's words but one, put where a word of
                # the memory was ("plays soccer" / "plays basketball"), changes that word.
                if whole is None and len(lacks) <= SLOT_MAX_LACKING:
                    marked += swapped_in_slot(sequence_words(text), mine, theirs, gate.lexicon.filler_words,
                                              most=SLOT_MAX_LACKING, forms=gate.lexicon.verb_form_hashes)
        # A candidate that names its subject by another number or name than its nearest
        # memory ("Room 102 ..." / "Room 101 ...") is another fact: when stored, it is
        # never linked as that memory's version. It does not by itself keep a text
        # from a NOOP: a differing number is a value its nearest does not say, and
        # is caught above; a differing capitalized opener alone (a speaker's name
        # before the same words) was measured on LoCoMo dev to store 4.6% more turns
        # for no recall.
        other = score.nearest_seq is not None and other_subject_of(gate, text, int(score.nearest_seq))
        route = score.route
        # The same holds for plain words: a text whose words are spread over its neighbours
        # ("banjo" in one, "band" in another) is not said by the one memory it would be folded
        # into. Measured against that memory alone (netted of its swapped words as above), a
        # text that still carries information goes to the band; it is not that memory's newer
        # version for it (says_more reads the information against all the neighbours). Here
        # a new word and a dropped one weigh alike (no rarity prior on the new ones), so a swap
        # of words nets out and only a text that says more than that memory carries.
        folded_info = math.nan
        # A date said in words ("last weekend") that the memory does not say would be lost too: the
        # reader of that memory sees its own date. It keeps the text from a NOOP, but makes it no
        # newer version of that memory ("Yuki started violin this month" is not a newer "Yuki is seven").
        if route == "NOOP" and not carries and (undated or marked):
            carries = True
        elif route == "NOOP" and not carries and score.nearest_seq is not None and c.fold_tau <= 1.0 and lacks:
            folded_info, _ = gate.keywords.info_novelty_netted(
                text, [int(score.nearest_seq)], netted, rarity=_full_weight,
                w_number=c.number_weight, w_name=c.name_weight, w_word=c.word_weight, idf_prior=IDF_PRIOR,
                prior_weight=IDF_PRIOR_WEIGHT)
            carries = folded_info >= c.fold_tau
        routed = "BAND" if route == "NOOP" and carries else route  # an ADD stays an ADD
        return GateScore(novelty=score.novelty, tau=score.tau, delta=score.delta, kappa=score.kappa,
                         nearest_seq=score.nearest_seq, nearest_cos=score.nearest_cos, route=routed,
                         information=information, new_terms=tuple(new),
                         decided_by="information" if routed != route else "novelty", changes=changes,
                         info_tau=c.tau, new_values=unsaid, other_subject=other,
                         nearest_lacks=tuple(dict.fromkeys(undated + marked + lacks)), folded_information=folded_info)


def marks_may_decide(route: str, *, carries: bool, unsaid: Sequence[str], lacks: Sequence[str],
                     undated: Sequence[str], changes: Sequence[str]) -> bool:
    """Whether a text's marks against its nearest memory may change what the write path does with
    it, and so must be read (``Lexicon.marks``: the costliest reading of a text).

    They may for a NOOP that nothing cheaper keeps from its fold (``carries`` false), and for a
    band text whose nearest memory holds every word, value and date of it and says every change
    it says: band policy "fold" folds that one. Elsewhere the decision, and the reason recorded,
    are the same without them: a text that carries is stored and said to carry what it carries,
    and a band text the memory lacks something of is never folded. An ADD never reads them.
    """
    if route == "NOOP":
        return not carries
    return route == "BAND" and not (unsaid or lacks or undated or changes)


def _denial_as_not(cues: frozenset[str]) -> frozenset[str]:
    """Cues with "n't" read as "not": "don't" and "do not" say one denial."""
    return frozenset("not" if c == "n't" else c for c in cues)


def _full_weight(surface: str) -> float:
    """Every word's rarity weight when new and dropped words must weigh alike."""
    return 1.0


def counted_pairs(tokens: Sequence[tuple[str, str, str]]) -> frozenset[tuple[str, str]]:
    """(number, thing counted) of every number followed by a plain word, from ``_core.tokenize_kinds``."""
    # Most texts count nothing; a cached gate holds one set per memory, so the empty ones share one.
    return frozenset((term, tokens[i + 1][0]) for i, (term, _, kind) in enumerate(tokens[:-1])
                     if kind == "number" and _numeral(term) and tokens[i + 1][2] == "word") or _NO_COUNTS


def _numeral(term: str) -> bool:
    """A number that counts (``"2"``, ``"1"`` for "first"); not a weekday or a month, which name a day."""
    return any(ch.isdigit() for ch in term)


def other_subject_of(gate: ScopeView, text: str, nearest: int) -> bool:
    """Whether ``text`` and memory ``nearest`` name their subjects by one noun with two numbers
    ("Room 102 ..." / "Room 101 ..."; ``Lexicon.identifying_values``)."""
    mine = gate.lexicon.identifying_values(text)
    theirs = (gate.readings_of(nearest) or NO_READINGS).named
    return bool(mine and theirs) and other_subject_of_ids(mine, theirs)


def unsaid_values(gate: ScopeView, text: str, nearest: int) -> tuple[str, ...]:
    """The numbers, dates, names and counted things of ``text`` that memory ``nearest`` does not say.

    A value counts when its term is missing from the memory ("four different
    ones" against "three different ones": 4), and a number when the thing it
    counts is held but counted with another number ("2 cats" against "2 dogs
    and 3 cats").

    Returns:
        The values as the text spells them, each once, in text order.
    """
    return unsaid_by(gate, text, nearest)[0]


#: A text not aligned with its nearest memory is read for a plan against a deed only when it says
#: at most this many content words the memory lacks, besides modal words ("bought" against
#: "going to buy"). Unbounded, LoCoMo dev stored 2.8% more of its turns (chat turns that share a
#: few words and differ in a "gonna"); at 1 the probes' plan/deed changes folded again (2 of 26 and
#: 1 of 10); at 2 they did not, and 16 LoCoMo dev turns were marked for it.
MODAL_MAX_LACKING = 2

#: A text not aligned with its nearest memory is read for the past against the present
#: (``past_against_present``) only when it says at most this many content words the memory lacks,
#: as for a plan and a deed. At 2: gate-changes lost one change fewer (14 -> 13 of 415, repeats
#: folded 37 of 58 as before), LoCoMo dev's turns and facts stored as many, LongMemEval dev 4 turns
#: more (96.24% -> 96.25%, every recall figure the same).
TENSE_MAX_LACKING = 2

#: A text not aligned with its nearest memory is read for a word put in the slot of one the memory
#: says (``swapped_in_slot``) only when it says at most this many content words the memory lacks:
#: a rebuilt sentence with one value changed, not two chat turns that share a few words.
SLOT_MAX_LACKING = 2


def unsaid_by(gate: ScopeView, text: str,
              nearest: int) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(``unsaid_values``, the content words of ``text`` that memory ``nearest`` does not hold, the
    phrases dating what ``text`` says that the memory does not say), in one pass over the memory's
    terms: together, what a NOOP folding ``text`` into that memory alone would leave unsaid. The
    words are index terms, each once, in text order; the phrases are sorted."""
    held = set(gate.keywords.tokens_of(nearest))
    read = gate.readings_of(nearest) or NO_READINGS
    counted = read.counts
    # A number the memory only uses to number its list's items ("2. Seaborn") is not one it
    # states (memsieve.text.cues.find_stated_values): "a webinar two months ago" folded into
    # that list would lose its "two".
    stated = read.stated
    mine = value_tokens(text)
    values: list[str] = []
    words: list[str] = []
    for i, (term, surface, kind) in enumerate(mine):
        if kind == "word":
            if term not in held:
                words.append(term)
            continue
        if term not in (stated if kind == "number" else held):
            values.append(surface)
        elif kind == "number" and _numeral(term) and i + 1 < len(mine):
            noun, noun_surface, noun_kind = mine[i + 1]
            if noun_kind == "word" and noun in held and (term, noun) not in counted:
                values.append(f"{surface} {noun_surface}")
    undated = tuple(sorted(time_phrases(text) - stated))
    return tuple(dict.fromkeys(values)), tuple(dict.fromkeys(words)), undated
