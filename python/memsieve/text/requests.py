"""How a request to forget is cut into what it asks (memsieve.text.lexicon reads requests with these).

A request's clauses are split at the lexicon's clause breaks and sorted into those that ask to
forget and those that ask not to ("don't forget my birthday, forget Tom's"); its subject is what
is left when its opening and framing are cut ("please forget what I told you about ..."). The
patterns and word lists are the lexicon's (``Derived``); nothing here is of one language.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from memsieve.text.fold import fold


def split_clauses(text: str, derived: Any, *, is_exception: Callable[[str], bool]) -> tuple[list[str], list[str]]:
    """A request's clauses that ask to forget, and those that ask not to (``Lexicon.request_clauses``).

    Args:
        text: the request.
        derived: the lexicon's compiled patterns (clause break, retraction, keep, opening).
        is_exception: whether a clause keeps something out ("except my birthday").
    """
    d = derived
    parts = [p.strip() for p in (d.clause_break.split(text) if d.clause_break is not None else [text])]
    asking: list[str] = []
    keeping: list[str] = []
    declined = False
    for part in (p for p in parts if p):
        low = fold(part).lower()
        if d.retract_request is not None and d.retract_request.search(low):
            keeping[:0], asking = asking, []  # what was asked so far is taken back
            declined = True
            continue
        if is_exception(part):
            keeping.append(part)  # kept out; the clauses after it go on as before
            continue
        if d.keep_request is not None and d.keep_request.search(low):
            declined = True
        elif d.request_opening is not None and d.request_opening.search(low):
            declined = False
        (keeping if declined else asking).append(part)
    return asking, keeping


def cut_framing(text: str, derived: Any, *, own_words: Collection[str]) -> str:
    """A request's subject text: its opening and framing cut, a possessive that opens it read as a name.

    Args:
        text: the request.
        derived: the lexicon's compiled opening and framing patterns.
        own_words: the lexicon's words that are no name ("my", "sister", "please").
    """
    folded = fold(text)
    rest = derived.request_opening.sub(" ", folded, count=1) if derived.request_opening is not None else folded
    rest = derived.request_framing.sub(" ", rest) if derived.request_framing is not None else rest
    return _named_by_possessive(" ".join(rest.split()), own_words)


def _named_by_possessive(rest: str, own_words: Collection[str]) -> str:
    """A subject that opens with a possessive ("tom's birthday", typed in lower case) names a person, as
    "Tom's birthday" does: the word is capitalized unless the lexicon knows it (a relation, a
    first-person word, a determiner, a request word)."""
    first, _, after = rest.partition(" ")
    if not first.endswith("'s") or not first[:-2].isalpha() or not first[0].islower():
        return rest
    word = first[:-2]
    if word in own_words:
        return rest
    return " ".join([word.capitalize() + "'s", after]).strip()
