"""Whether a text tells of a thing that happened: an event, which a later one does not replace.

"I went to a jazz concert downtown" and, a season later, "I went to a rock concert at the
Fillmore" are close in meaning and say one kind of thing, so freshness would take the second
for the first's newer version: mark the jazz concert superseded, and let ``current_only``
drop it. Both stay true; a user who asks "how many concerts did I go to?" needs both. What
tells them from versions of one fact ("I live in Berkeley" / "I live in Oakland now") is the
tense and the verb: each says, in the past alone, that someone did something.

A text tells of an event (``tells_of_event``) when it is a statement, not a question, and:

- someone does something in the past: a doer ("I", "we", "she", a relation word such as
  "sister", or a capitalized content word, which may be a name; not a capitalized stopword
  such as "It" or "That", nor a speaker's label such as "Caroline:") is followed, past a few adverbs ("just", "also"), by a past verb that
  is an action, not a state ("went", "adopted"; not "was", "lived", "worked": "The meeting
  was on Tuesday" may be corrected by "... was on Wednesday"). A verb whose past is spelled
  as its plain form ("read", "put") is past after "she" or a name ("she read Dune"), and
  after "I", "we", "you" or "they" only in a text that says another verb in the past or dates
  itself in the past ("I read Dune last month"; "I read every night" tells of a habit). A
  verb and the word after it that end a clause as a set phrase ("You got this!") tell of
  nothing done, whatever the verb's tense;
- no doer is followed by any other verb: "I love the dark sky", "I've tried three Korean
  restaurants" (a count up to now, which a later "four" replaces) and "we will" tell of now
  or later;
- its marks say the past alone (``Marks.tense``), no plan, wish or try (``Marks.modal``) and
  no change cue ("I moved to Denver" replaces where one lives; "I sold my car" ends owning
  it): a said change is a version's business (memsieve.gate.versions).

The rule is conservative: a text it does not call an event is read as before. It sees words,
never the store; a lexicon supplies every word list (``Lexicon.tells_of_event``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from memsieve.text.fold import fold
from memsieve.text.marks import Marks, is_term
from memsieve.text.when_told import dates_past

__all__ = ["EventWords", "tells_of_event"]

_PAST_ONLY = frozenset({"past"})
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


@dataclass(frozen=True)
class EventWords:
    """The word lists ``tells_of_event`` reads, lowercased (a lexicon's).

    Attributes:
        doers: pronouns that do what the next verb says ("i", "we", "she").
        persons: words that name someone who may do it ("sister", "dog").
        adverbs: words passed over between a doer and its verb ("just", "also").
        past_words: irregular past verbs ("went"); ``past_ending`` the regular ending ("ed")
            and ``not_past`` the words with that ending that are no verbs ("hundred").
        state_past: past verbs that tell of a state ("was", "lived").
        plain_pasts: verbs of a thing done whose past is spelled as their plain form ("read");
            ``plain_doers`` the doers after whom that form is the present too ("i", "we").
        set_phrases: a past verb and the word after it that, ending a clause, tell of nothing
            done ("got this").
    """

    doers: frozenset[str]
    persons: frozenset[str]
    adverbs: frozenset[str]
    past_words: frozenset[str]
    past_ending: str
    not_past: frozenset[str]
    state_past: frozenset[str]
    plain_pasts: frozenset[str] = frozenset()
    plain_doers: frozenset[str] = frozenset()
    set_phrases: frozenset[str] = frozenset()

    def is_past(self, word: str) -> bool:
        """Whether a lowercased word is a verb in the past."""
        e = self.past_ending
        return word in self.past_words or (bool(e) and len(word) > len(e) + 2 and word.endswith(e)
                                           and word not in self.not_past)


def tells_of_event(text: str, marks: Callable[[], Marks], cues: Callable[[], Collection[str]],
                   words: EventWords) -> bool:
    """Whether ``text`` tells of a thing done in the past (see the module's docstring).

    The words are read first: most texts name no doer with a past verb, and their marks, the
    costliest reading of a text, are then never asked for.

    Args:
        text: the text.
        marks: gives its marks (``Lexicon.marks``): its tenses and modal words.
        cues: gives the change cues it says (``Lexicon.cues``).
        words: the lexicon's word lists.

    >>> from memsieve.text.lexicon import ENGLISH
    >>> ENGLISH.tells_of_event("I went to a jazz concert downtown.")
    True
    >>> ENGLISH.tells_of_event("I've tried three Korean restaurants.")
    False
    >>> ENGLISH.tells_of_event("I moved to Denver.")
    False
    """
    if "?" in text:
        return False
    folded = fold(text)
    found = list(_WORD.finditer(folded))
    said = [m.group(0) for m in found]
    done = False
    plain_past = False  # a plain form read as the past: the text may say no tense otherwise
    for i, word in enumerate(said):
        low = word.lower()
        host, _, _ = low.partition("'")
        if host in words.doers or low in words.persons or (word[0].isupper() and is_term(low)
                                                            and not _labels(folded, found[i].end())):
            if host != low and host in words.doers:
                return False  # "I've", "we'll", "I'm": a perfect, a future, a present
            j = i + 1
            while j < len(said) and said[j].lower() in words.adverbs:
                j += 1
            if j == len(said):
                continue
            verb = said[j].lower()
            if _set_phrase(folded, found, j, words.set_phrases):
                continue  # "You got this!": no thing done, whatever else the text says
            if words.is_past(verb):
                done = done or verb not in words.state_past
            elif verb in words.plain_pasts:
                if host in words.plain_doers and not (marks().tense or dates_past(text)):
                    return False  # "I read every night": the present, as far as the text says
                done = plain_past = True
            elif host in words.doers:
                return False  # a doer and a verb not in the past: "I love", "we have", "they will"
    if not done:
        return False
    # No tense at all is left open: "I read Dune last month" says its past with a plain form.
    m = marks()
    if (m.tense and m.tense != _PAST_ONLY) or m.modal or cues():
        return False
    return m.tense == _PAST_ONLY or plain_past


def _set_phrase(text: str, found: list[re.Match[str]], j: int, phrases: frozenset[str]) -> bool:
    """Whether words ``j`` and ``j + 1`` are one of ``phrases`` that ends a clause: the text ends
    after it, or a mark that ends a clause does (". ! , ; :" or a dash)."""
    if not phrases or j + 1 >= len(found):
        return False
    if f"{found[j].group(0)} {found[j + 1].group(0)}".lower() not in phrases:
        return False
    rest = text[found[j + 1].end():].lstrip()
    return not rest or rest[0] in ".!,;:-\u2013\u2014)"


def _labels(text: str, end: int) -> bool:
    """Whether the word ending at ``end`` is a speaker's label ("Caroline: ..."), not a doer."""
    return text[end:end + 1] == ":"
