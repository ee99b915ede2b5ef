"""Whom a text is about: the user, another person, or someone a pronoun stands for.

A request to forget is about its subject ("forget that I like tea" is the
user's tea, not the mother's), and so is a memory ("My mother likes tea with
lemon" is the mother's). The rule reads a text's words in order and takes the
first *person reference* as its subject:

- a first-person word ("I", "me", "my", "I'm") is the user, except a
  possessive right before a relation word ("my mother"): that names the relation;
- a relation word ("mother", "sister's", "boss") is that person, with the
  names beside it ("my sister Lena", "Tomas, my roommate"); one that follows
  another's possessive ("my wife's boss") belongs to that other person, and
  is the subject: the fact is the boss's, not the wife's nor the user's own boss's;
- a third-person pronoun ("she", "his") is someone other than the user, unnamed;
- a capitalized word the caller knows to be a person's name ("Anna", from the
  request or from "my cousin Anna" elsewhere) is that person; an unknown
  capitalized opening word ("Ana moved ...", but also "Tea is ...") is a
  person only *maybe* (``sure=False``).

A text with no reference at all ("The wifi password is ...") is the user's.
The words are a lexicon's (memsieve.text.lexicon): its self words, other
pronouns and relation words; the matching is on folded words
(memsieve.text.fold), the terms returned are index terms (the Rust tokenizer's
stems), so they compare with a memory's stored terms.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import memsieve._core as _core
from memsieve.text.fold import fold

# Words as typed (case kept, apostrophes inside), for the capitals a name has; a hyphenated
# word is read whole, so that "mother-in-law" and "ex-wife" can be kept apart from "mother" and "wife".
_WORD = re.compile(r"[^\W_][\w']*(?:-[^\W_][\w']*)*")


@dataclass(frozen=True)
class Subject:
    """Whom a text is about.

    Attributes:
        who: ``user``, ``person`` (named by relation or name), or ``other``
            (a pronoun for someone not the user, unnamed).
        terms: the index terms naming the person (relation words, names); empty for the user.
        names: the names among ``terms``.
        sure: False when the person is only an unknown capitalized opening word.
        own: the relation terms the text names as the user's own ("my boss", not
            "my wife's boss"), and the names beside them.
        people: every name the text gives a person (beside a relation word, or known).
        chain: for a named subject, the relation terms its name owns, in order: ("dog",) for
            "Tom's dog", ("brother", "dog") for "Tom's brother's dog", () for "Tom".
    """

    who: str
    terms: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    sure: bool = True
    own: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    chain: tuple[str, ...] = ()


USER = Subject(who="user")


def _term(word: str) -> str:
    if "-" in word:  # a compound relation ("mother-in-law"): its own term, never one of its parts'
        return word
    got = _core.tokenize(word)
    return got[0] if got else word.lower()


def _base(lower: str) -> str:
    """A word without its possessive ending ("sister's" -> "sister", "parents'" -> "parents")."""
    if lower.endswith("'s"):
        return lower[:-2]
    return lower.rstrip("'")


def _words(text: str, relations: Collection[str]) -> list[str]:
    """A text's words as typed; a hyphenated word stays whole only when a part of it is a relation
    ("mother-in-law", "ex-wife": another person than the mother or the wife), else its parts are words."""
    out: list[str] = []
    for w in _WORD.findall(fold(text)):
        if "-" not in w:
            out.append(w)
        elif any(_base(part.lower()) in relations for part in w.split("-")):
            out.append(w)
        else:
            out.extend(p for p in w.split("-") if p)
    return out


def name_words(text: str, names: Collection[str]) -> frozenset[str]:
    """The words of a text (lowercased, possessive cut) that give one of ``names`` (index terms)."""
    return frozenset(b for w in _WORD.findall(fold(text)) for part in w.split("-")
                     if _term(b := _base(part.lower())) in names)


def says_name(text: str, words: Collection[str]) -> bool:
    """Whether a text gives one of ``words`` (lowercased names, from :func:`name_words`) as a name.

    The word must be the name itself, not a word of the same stem ("Mark", not "marking"), and
    capitalized ("Jack", not a car's "jack"), unless the text capitalizes nothing at all.
    """
    typed = [part for w in _WORD.findall(fold(text)) for part in w.split("-") if part]
    capitals = any(w[0].isupper() for w in typed)
    return any(_base(w.lower()) in words and (w[0].isupper() or not capitals) for w in typed)


def find_subject(text: str, *, self_words: Collection[str], possessives: Collection[str],
                 other_pronouns: Collection[str], relations: Collection[str],
                 known: Collection[str] = (), aliases: Mapping[str, str] | None = None) -> Subject:
    """The subject of a text by the rule of the module docstring.

    Args:
        text: a memory, or a request with its asking words removed.
        self_words: lowercased first-person words ("i", "my", "i'm").
        possessives: the first-person possessives among them ("my", "our").
        other_pronouns: lowercased third-person pronouns ("she", "his").
        relations: lowercased words that name a person by relation ("sister", "dog").
        known: lowercased names known to be people's.
        aliases: relation words that name the same person as another ("mom" -> "mother"): the
            subject's terms are the other's, so "my mom" and "my mother" are one person.
    """
    typed = _words(text, relations)
    low = [w.lower() for w in typed]
    base = [_base(w) for w in low]
    is_rel = [b in relations or "-" in b for b in base]
    rel = [(aliases or {}).get(b, b) for b in base]  # a relation word as the person it names
    known_l = {k.lower() for k in known}

    def is_name(j: int) -> bool:
        if not (0 <= j < len(typed)) or not typed[j][0].isupper() or is_rel[j]:
            return False
        return low[j] not in self_words and low[j] not in other_pronouns and bool(_core.tokenize(base[j]))

    def names_beside(i: int) -> set[str]:
        out = set()
        if is_name(i + 1) and low[i] == base[i]:  # "my brother Tom"; "my brother's Tesla" is a thing of his
            out.add(_term(base[i + 1]))
        for j in (i - 1, i - 2):  # "Tomas, my roommate": the name two words back, "my" between
            if j >= 0 and is_name(j) and (j == i - 1 or low[i - 1] in possessives):
                out.add(_term(base[j]))
                break
        return out

    own: set[str] = set()
    people: set[str] = set()
    first: Subject | None = None
    for i, w in enumerate(low):
        if is_rel[i]:
            chained = i > 0 and low[i - 1] != base[i - 1] and low[i - 1] not in self_words
            names = names_beside(i)
            people |= names
            if not chained and any(low[j] in possessives for j in range(max(0, i - 3), i)):
                own.add(_term(rel[i]))
                own.update(names)
            if low[i] != base[i] and i + 1 < len(low) and is_rel[i + 1]:
                continue  # "my husband's sister": the sister is the subject, not the husband
            if first is None:
                first = Subject(who="person", terms=frozenset({_term(rel[i])} | names), names=frozenset(names))
        elif w in self_words:
            ahead = range(i + 1, min(len(low), i + 3))
            if w in possessives and any(is_rel[j] for j in ahead):
                continue  # "my mother": the relation word names the subject
            if first is None:
                first = USER
        elif w in other_pronouns:
            if first is None:
                first = Subject(who="other")
        elif is_name(i) and (base[i] in known_l or i == 0):
            # "Tom's birthday ...": a possessive opening names whose the fact is.
            sure = (base[i] in known_l or bool(names_beside_relation(i, is_rel, low, possessives))
                    or (i == 0 and low[i] != base[i]))
            if sure:
                people.add(_term(base[i]))
            if first is None:
                t = _term(base[i])
                beside = {_term(rel[j]) for j in (i + 1, i + 2) if j < len(low) and is_rel[j]} if sure else set()
                first = Subject(who="person", terms=frozenset({t} | beside), names=frozenset({t}), sure=sure,
                                chain=_owned_chain(i, is_rel, low, base, rel))
    subject = first or USER
    return Subject(who=subject.who, terms=subject.terms, names=subject.names, sure=subject.sure,
                   own=frozenset(own), people=frozenset(people), chain=subject.chain)


def _owned_chain(i: int, is_rel: list[bool], low: list[str], base: list[str], rel: list[str]) -> tuple[str, ...]:
    """The relation words a possessive name at ``i`` owns, in order: "Tom's brother's dog" -> (brother, dog)."""
    chain: list[str] = []
    j = i
    while low[j] != base[j] and j + 1 < len(low) and is_rel[j + 1]:  # each link is a possessive
        j += 1
        chain.append(_term(rel[j]))
    return tuple(chain)


def names_beside_relation(i: int, is_rel: list[bool], low: list[str], possessives: Collection[str]) -> bool:
    """Whether the word at ``i`` stands beside a relation word ("Tomas, my roommate", "Lena's sister" no)."""
    if i + 1 < len(is_rel) and is_rel[i + 1] and not low[i].endswith("'s"):
        return True
    return i + 2 < len(is_rel) and is_rel[i + 2] and low[i + 1] in possessives


def relation_names(text: str, *, relations: Collection[str], possessives: Collection[str]) -> frozenset[str]:
    """The names a text gives people beside a relation word ("my cousin Aisha" -> {"aisha"}), lowercased."""
    typed = _words(text, relations)
    low = [w.lower() for w in typed]
    base = [_base(w) for w in low]
    is_rel = [b in relations or "-" in b for b in base]
    out = set()
    for i, w in enumerate(typed):
        if not w[0].isupper() or is_rel[i] or not _core.tokenize(base[i]):
            continue
        if (i > 0 and is_rel[i - 1]) or names_beside_relation(i, is_rel, low, possessives):
            out.add(base[i])
    return frozenset(out)
