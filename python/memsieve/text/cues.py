"""Words that say a fact changed, and words that say whom a fact is about: the matching.

The information term counts new *values* (numbers, names, rare words). A
negation or a later event often brings none: "Jonas and I aren't together
anymore" after "I'm dating Jonas" reuses the stored words and adds only
"anymore", a stopword to the keyword index. Yet it reverses the fact. A
lexicon's change cues mark such a change of state, and they are what two
readings need:

- the gate: a candidate close in meaning to what is stored that says a change
  its nearest memories do not say carries new information, so it reaches the
  band and is stored as a newer version instead of being dropped;
- freshness at read: a retrieved memory that says a change, and shares a
  content term with an older one it is close to, is that memory's newer
  version even when it answers the question in other words
  (memsieve.gate.versions).

This module holds the rules, not the words: which words are cues and which
name a relation is a lexicon's (memsieve.text.lexicon; the English lists are
memsieve.text.english). Matching is on lowercased word boundaries after the
Rust tokenizer's folding (memsieve.text.fold). What a text says that its
content words do not show, and whether it restates a memory, is
memsieve.text.marks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence

import memsieve._core as _core
from memsieve.text.fold import fold, without_list_marks, words
from memsieve.text.when_told import time_phrases

#: The empty set the readings of many texts share: a cached gate holds one reading per memory,
#: and an empty frozenset is no singleton.
_NONE: frozenset = frozenset()

# The opening word of a text as typed, apostrophes and hyphens inside it kept.
_FIRST_WORD = re.compile(r"\W*(\w[\w'-]*)")


def find_cues(text: str, *, cue_words: Collection[str], phrases: Sequence[str],
              suffixes: Sequence[str]) -> frozenset[str]:
    """The cues a text holds (empty when it says no change).

    One-word cues are looked up in the text's word set; phrases are matched on
    the text padded with spaces; a suffix cue is found when a word ends with
    it. All are far cheaper than one big alternation, and the gate runs this on
    every candidate close to a memory.

    Args:
        text: any text.
        cue_words: lowercased one-word cues.
        phrases: lowercased multi-word cues, words separated by one space.
        suffixes: lowercased word endings that are cues ("n't").
    """
    found_words = words(text)
    found = {w for w in found_words if w in cue_words}
    # A word ends with a suffix where the suffix meets the space after that word (words hold no
    # spaces; a suffix with one could never end a word).
    padded = " " + " ".join(found_words) + " "
    found.update(s for s in suffixes if s and " " not in s and f"{s} " in padded)
    found.update(c for c in phrases if f" {c} " in padded)
    return frozenset(found)


def find_subject_terms(text: str, *, relations: Collection[str]) -> frozenset[str]:
    """The index terms that name who the text is about: relation words, the
    names next to them ("my sister Lena", "Lena, my sister") and a capitalized
    opening word ("Ana moved ...").

    Args:
        text: any text.
        relations: lowercased words that name a person by their relation to
            the speaker ("sister", "boss").
    """
    tokens = _core.tokenize_kinds(text)
    out: set[str] = set()
    # A sentence that opens with a capitalized content word opens with its
    # subject ("Ana moved to Lisbon"); the tokenizer cannot call it a name.
    first = _FIRST_WORD.match(fold(text))
    if tokens and first and first.group(1)[0].isupper() and first.group(1).lower() == tokens[0][1]:
        out.add(tokens[0][0])
    for i, (term, surface, _) in enumerate(tokens):
        if surface in relations or term in relations:
            out.add(term)
            for j in (i - 1, i + 1):
                if 0 <= j < len(tokens) and (tokens[j][2] == "name" or j == 0):
                    out.add(tokens[j][0])
    return frozenset(out)


# A clause of a text: what lies between two of these marks.
_CLAUSE_END = re.compile(r"[.;:!?,()\n]+")
_WORD = re.compile(r"[\w][\w'-]*")


def find_identifying_values(text: str, *, determiners: Collection[str], value_labels: Collection[str],
                            is_person: Callable[[str], bool] = lambda word: False) -> frozenset[str]:
    """The index terms of the numbers and names that say *which* thing a text is about.

    A clause that opens (after determiners such as "the" or "my") with a noun
    followed by a number, and goes on after it, names its subject by that
    number: "Room 101 has the colour printer", "my flight 22 leaves at noon".
    The number is then part of the subject, not a value the text states
    ("my gate code is 4471", "I have 2 cats", "I live in apartment 4B"),
    unless the noun is a value label ("code 4471 opens the gate").

    Each is returned as ``"noun number"`` (their index terms): two texts name
    two things only when the same noun carries another number ("room 101" /
    "room 102"; see ``memsieve.gate.versions.other_subject``). A capitalized
    word opening a clause is its subject (key ``" name"``) when ``is_person``
    says it names someone ("Camila plays ...", "Grandpa went ..."), not when it
    is a common word ("Please call me ...", "Actually, ...").

    Args:
        text: any text.
        determiners: lowercased words that may precede the opening noun.
        value_labels: lowercased nouns whose number is a value.
        is_person: whether a capitalized opening word names someone.
    """
    out: set[str] = set()
    for clause in _CLAUSE_END.split(fold(text)):
        found = _WORD.findall(clause)
        k = 0
        while k < len(found) and found[k].lower() in determiners:
            k += 1
        if k >= len(found):
            continue
        head = found[k]
        if head[:1].isupper() and not digits(head) and is_person(head.split("'")[0]):
            out.update(f" {t}" for t in _core.tokenize(head.split("'")[0]))
        # The noun may be a compound of two ("meeting room 1 has a whiteboard").
        for noun in (k, k + 1):
            at = noun + 1
            if at + 1 >= len(found) or not digits(found[at]) or digits(found[noun]):
                continue
            if noun > k and (digits(found[k]) or not _core.tokenize(found[noun]) or not _core.tokenize(head)):
                continue
            if found[noun].lower() not in value_labels:
                nouns, numbers = _core.tokenize(found[noun]), _core.tokenize(found[at])
                if nouns and numbers:
                    out.add(f"{nouns[-1]} {numbers[0]}")
                break
    return frozenset(out) or _NONE


def digits(word: str) -> bool:
    # Most words are letters only, and no letter is a digit: one C call decides them.
    return not word.isalpha() and any(c.isdigit() for c in word)


@functools.lru_cache(maxsize=1024)
def value_tokens(text: str) -> tuple[tuple[str, str, str], ...]:
    """``_core.tokenize_kinds`` of ``text`` without its list numbering, remembered: a candidate is
    read when scored and again when stored (its counted pairs and stated values), and the
    readings must agree."""
    return tuple(_core.tokenize_kinds(without_list_marks(text)))


def find_stated_values(text: str) -> frozenset[str]:
    """The number terms a text states, its list numbering left out ("2. Seaborn" states no 2),
    and the phrases that date what it says (memsieve.text.when_told.time_phrases): what a memory must
    hold for a text folded into it to lose no number and no date.

    >>> sorted(find_stated_values("1. Matplotlib\\n2. Seaborn, which I tried two weeks ago"))
    ['2', '2 week ago']
    """
    numbers = (term for term, _, kind in value_tokens(text) if kind == "number")
    return (frozenset(numbers) | time_phrases(text)) or _NONE
