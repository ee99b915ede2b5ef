"""Words that say a fact changed: the state-change cues of a text.

The information term counts new *values* (numbers, names, rare words). A
negation or a later event often brings none: "Jonas and I aren't together
anymore" after "I'm dating Jonas" reuses the stored words and adds only
"anymore", a stopword to the keyword index. Yet it reverses the fact. The
cues below mark such a change of state, and they are what two readings need:

- the gate: a candidate close in meaning to what is stored that says a change
  its nearest memories do not say carries new information, so it reaches the
  band and is stored as a newer version instead of being dropped;
- freshness at read: a retrieved memory that says a change, and shares a
  content term with an older one it is close to, is that memory's newer
  version even when it answers the question in other words
  (memsieve.read.versions).

The list is English, written for this purpose, and small on purpose: each
entry is a word or phrase whose usual sense is "no longer as before"
(negation, ending, replacement, correction, a change of value). Matching is
on lowercased word boundaries, after folding typographic apostrophes.
"""

from __future__ import annotations

import re

from memsieve import _core

#: Cues, grouped by what they say. Multi-word cues are matched as phrases.
CUES: dict[str, tuple[str, ...]] = {
    "negation": ("not", "n't", "cannot", "no longer", "anymore", "any more", "never again"),
    "replacement": ("instead", "switched", "swapped", "replaced", "changed", "change of plan",
                    "moved", "relocated", "traded"),
    "ending": ("quit", "stopped", "cancelled", "canceled", "sold", "retired", "closed", "ended",
               "finished", "graduated", "lost", "passed away", "died", "divorced", "broke up",
               "split up", "left my", "gave up", "dropped out"),
    "now": ("now", "these days", "nowadays", "from now on", "since then", "became", "become",
            "has become", "turned into"),
    "correction": ("actually", "correction", "oops", "i meant", "rather than", "mistake", "wrong"),
    "value": ("raised", "lowered", "increased", "decreased", "reduced", "went up", "went down",
              "renamed", "rescheduled", "postponed", "pushed back", "brought forward"),
}

_ALL = frozenset(c for group in CUES.values() for c in group)
# One-word cues are looked up in the text's word set; phrases are matched on
# the text padded with spaces. Both are far cheaper than one big alternation,
# and the gate runs this on every candidate close to a memory.
_WORDS = frozenset(c for c in _ALL if " " not in c and c != "n't")
_PHRASES = tuple(c for c in _ALL if " " in c)
_WORD = re.compile(r"[a-z0-9']+")


def change_cues(text: str) -> frozenset[str]:
    """The change cues a text holds, lowercased (empty when it says no change).

    >>> sorted(change_cues("I don't go to Ironworks anymore."))
    ["anymore", "n't"]
    """
    folded = text.casefold().replace("\u2019", "'").replace("\u02bc", "'")
    words = _WORD.findall(folded)
    found = {w for w in words if w in _WORDS}
    if any(w.endswith("n't") for w in words):
        found.add("n't")
    padded = " " + " ".join(words) + " "
    found.update(c for c in _PHRASES if f" {c} " in padded)
    return frozenset(found)


#: Words that name a person by their relation to the speaker. A fact's subject is
#: often such a person ("my sister Lena ..."), and two facts about one person are
#: not versions of each other for sharing her: a version shares what changed.
#: Professions are left out: "works as a dentist" is what a fact says, not who.
RELATIONS = frozenset("""
mother mum mom father dad parent parents son daughter child children kid kids baby wife husband
partner boyfriend girlfriend fiance fiancee spouse brother sister sibling uncle aunt cousin niece
nephew grandmother grandfather grandma grandpa granny grandparents grandson granddaughter
in-law stepmother stepfather stepson stepdaughter friend colleague coworker co-worker manager boss
neighbour neighbor roommate flatmate housemate landlord landlady
""".split())


def subject_terms(text: str) -> frozenset[str]:
    """The index terms that name who the text is about: relation words
    (memsieve.text.cues.RELATIONS), the names next to them ("my sister Lena",
    "Lena, my sister") and a capitalized opening word ("Ana moved ...")."""
    tokens = _core.tokenize_kinds(text)
    out: set[str] = set()
    # A sentence that opens with a capitalized content word opens with its
    # subject ("Ana moved to Lisbon"); the tokenizer cannot call it a name.
    first = re.match(r"\W*(\w[\w'-]*)", text)
    if tokens and first and first.group(1)[0].isupper() and first.group(1).casefold() == tokens[0][1]:
        out.add(tokens[0][0])
    for i, (term, surface, _) in enumerate(tokens):
        if surface in RELATIONS or term in RELATIONS:
            out.add(term)
            for j in (i - 1, i + 1):
                if 0 <= j < len(tokens) and (tokens[j][2] == "name" or j == 0):
                    out.add(tokens[j][0])
    return frozenset(out)
