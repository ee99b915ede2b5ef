"""What a ``Lexicon`` computes from its fields once, and its memo caches.

A lexicon is a frozen value; the patterns compiled from its phrasings, the word sets
derived from its lists and the caches of what it has read (cues, names, marks, rarities)
live here, one ``Derived`` per lexicon, rebuilt when one is unpickled.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import memsieve._core as _core
from memsieve.text.cues import find_cues, find_identifying_values
from memsieve.text.events import EventWords
from memsieve.text.lexicon_checks import check_facts, check_pattern
from memsieve.text.marks import MarkReader, Marks, word_hash
from memsieve.text.rarity import load_ranks, rarity_of_rank

# The gate meets each candidate's cues twice or more (scored, then stored) and a
# common word's rarity in nearly every candidate; remembering recent answers
# saved ~10-15 us per add() when these caches were module-level.
_CUE_MEMO_SIZE = 1024
_RARITY_MEMO_SIZE = 16384


class Derived:
    """What a lexicon computes from its fields once, and its memo caches."""

    def __init__(self, lexicon: Any) -> None:
        # ``lexicon`` is the memsieve.text.lexicon.Lexicon being built (not imported: it imports this).
        self.cue_words = frozenset(c for c in lexicon.change_cues if " " not in c)
        self.phrases = tuple(sorted(c for c in lexicon.change_cues if " " in c))
        self.suffixes = tuple(sorted(lexicon.cue_suffixes))
        self.forget_request = check_pattern(lexicon.forget_request, name="forget_request")
        self.request_opening = check_pattern(lexicon.request_opening, name="request_opening", flags=re.IGNORECASE)
        self.request_framing = check_pattern(lexicon.request_framing, name="request_framing", flags=re.IGNORECASE)
        self.persons = lexicon.relations | lexicon.companions
        self.not_a_forget_request = check_pattern(lexicon.not_a_forget_request, name="not_a_forget_request")
        self.keep_request = check_pattern(lexicon.keep_request, name="keep_request")
        self.retract_request = check_pattern(lexicon.retract_request, name="retract_request")
        self.request_exception = check_pattern(lexicon.request_exception, name="request_exception")
        self.request_conjunction = check_pattern(lexicon.request_conjunction, name="request_conjunction",
                                            flags=re.IGNORECASE)
        self.clause_break = check_pattern(lexicon.clause_break, name="clause_break")
        self.assistant_said = check_pattern(lexicon.assistant_said, name="assistant_said")
        self.user_said = check_pattern(lexicon.user_said, name="user_said")
        self.earlier_chat = check_pattern(lexicon.earlier_chat, name="earlier_chat")
        self.fact_statements = check_facts(lexicon.fact_statements)
        self.vocabulary = lexicon.vocabulary
        self.cues: Callable[[str], frozenset[str]] = functools.lru_cache(maxsize=_CUE_MEMO_SIZE)(self._cues)
        self.rarity: Callable[[str], float] = functools.lru_cache(maxsize=_RARITY_MEMO_SIZE)(self._rarity)
        # An opening word names whom a text is about when it is a relation word
        # or no common word ("Camila plays ..."), not when it is one ("Please ...").
        persons, rarity = self.persons, self.rarity
        self.identifying: Callable[[str], frozenset[str]] = functools.lru_cache(maxsize=_CUE_MEMO_SIZE)(
            functools.partial(find_identifying_values, determiners=lexicon.determiners,
                              value_labels=lexicon.value_labels,
                              is_person=lambda w: w.lower() in persons or rarity(w) >= 1.0))
        self._request_words = lexicon.request_words
        self.request_terms = functools.cache(self._request_terms)
        self.ranks = functools.cache(self._ranks)
        self.modal_terms = frozenset(t for w in lexicon.modal_words for t in _core.tokenize(w))
        self.happening_terms = frozenset(t for w in lexicon.happening_words for t in _core.tokenize(w))
        self.event_words = EventWords(doers=lexicon.doers, persons=self.persons, adverbs=lexicon.event_adverbs,
                                      past_words=lexicon.past_words, past_ending=lexicon.past_ending,
                                      not_past=lexicon.not_past, state_past=lexicon.state_past,
                                      plain_pasts=lexicon.plain_pasts, plain_doers=lexicon.plain_doers,
                                      set_phrases=lexicon.set_phrases)
        self.verb_form_hashes = {word_hash(form): word_hash(group.split("/")[0])
                                 for group in lexicon.verb_forms for form in group.split("/")}
        # Each verb's forms as the index reads them ("leave" is "leav"); a form the index drops
        # ("did") is no term.
        groups = [frozenset(t for form in group.split("/") for t in _core.tokenize(form))
                  for group in lexicon.verb_pasts]
        forms: dict[str, frozenset[str]] = {t: g for g in groups if len(g) > 1 for t in g}

        def kin_forms(word: str) -> frozenset[str]:
            terms = frozenset(_core.tokenize(word))
            return terms.union(*(forms[t] for t in terms if t in forms))

        verb_terms = dict(forms)
        for group in lexicon.verb_kin:
            kin = frozenset().union(*(kin_forms(w) for w in group.split("/")))
            for t in kin:
                verb_terms[t] = verb_terms.get(t, frozenset({t})) | kin
        self.verb_terms: dict[str, frozenset[str]] = verb_terms
        self.marks: Callable[[str], Marks] = functools.lru_cache(maxsize=_CUE_MEMO_SIZE)(MarkReader(
            value_words=lexicon.value_words, polarity_words=lexicon.polarity_words,
            tenses={"past": lexicon.past_words, "present": lexicon.present_words, "future": lexicon.future_words},
            past_ending=lexicon.past_ending, not_past=lexicon.not_past, currency_signs=lexicon.currency_signs,
            pronoun_forms=lexicon.pronoun_forms, word_forms=lexicon.word_forms, auxiliaries=lexicon.auxiliaries,
            passive_auxiliaries=lexicon.passive_auxiliaries, agent_words=lexicon.agent_words,
            verb_forms=lexicon.verb_forms, determiners=lexicon.determiners, modal_words=lexicon.modal_words,
            contractions=lexicon.contractions, possessive_ending=lexicon.possessive_ending,
            contraction_hosts=lexicon.contraction_hosts, progressive_ending=lexicon.progressive_ending,
            self_words=lexicon.self_words, person_words=lexicon.relations | lexicon.companions,
            fractions=dict(lexicon.fraction_words), ones=lexicon.one_words, clock_words=lexicon.clock_words,
            one_units=lexicon.one_units, measure_leads=lexicon.measure_leads,
            clause_joints=lexicon.clause_joints))

    def stated_facts(self, text: str) -> frozenset[str]:
        low = text.lower()
        return frozenset(t for terms, pattern in self.fact_statements if pattern.search(low) for t in terms)

    def _cues(self, text: str) -> frozenset[str]:
        return find_cues(text, cue_words=self.cue_words, phrases=self.phrases, suffixes=self.suffixes)

    def _rarity(self, word: str) -> float:
        if self.vocabulary is None:
            return 1.0
        return rarity_of_rank(self.ranks().get(word.casefold()))

    def _ranks(self) -> dict[str, int]:
        return load_ranks(self.vocabulary)

    def _request_terms(self) -> frozenset[str]:
        joined = " ".join(sorted(self._request_words))
        return frozenset(_core.tokenize(joined)) | self._request_words
