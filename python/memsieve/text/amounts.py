"""Amounts said with a fraction word: "half a pound", "a pound and a half", "two and a half hours".

The keyword index reads each of these as the words "half" and "pound": "half a
pound" and "a pound and a half" hold the same terms, and a NOOP would fold one
into the other. ``amounts`` reads the value each phrase says (0.5, 1.5, 2.5),
so that memsieve.text.marks can hold it among a text's value words and a
memory that says another amount is not the one it folds into.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence

import memsieve._core as _core


def amounts(words: Sequence[str], *, fractions: Mapping[str, float], ones: Collection[str],
            times: Collection[str] = ()) -> frozenset[str]:
    """The amounts a text's fraction words say, each written as a number (``"1.5"``).

    Read from a text's folded, lowercased words (memsieve.text.marks.sequence_words):

    - a whole number, then "and a" and a fraction ("two and a half", "one and a quarter");
    - one thing, then "and a" and a fraction ("a pound and a half", "an hour and a half"): 1.5;
    - a number before a fraction word ("three quarters"): 0.75;
    - any other fraction word ("half a cup", "a half hour", "half of my friends"): the fraction.

    A fraction word before one of ``times`` tells a time of day ("half past six", "a quarter
    to nine"), which the text's value words say already: it is no amount.

    Args:
        words: the text's words in order.
        fractions: each fraction word and its value (``{"half": 0.5, "quarter": 0.25}``).
        ones: words that say one thing ("a", "an").
        times: words after a fraction word that make it a time of day ("past", "to").

    >>> sorted(amounts("we need a pound and a half of butter".split(), fractions={"half": 0.5}, ones={"a"}))
    ['1.5']
    >>> sorted(amounts("half past six and half a cup".split(), fractions={"half": 0.5}, ones={"a"},
    ...                times={"past"}))
    ['0.5']
    """
    out: set[float] = set()
    for i, word in enumerate(words):
        part = fractions.get(word)
        if part is None or (i + 1 < len(words) and words[i + 1] in times):
            continue
        before = words[i - 1] if i else ""
        if before in ones and i >= 3 and words[i - 2] == "and":
            # "two and a half"; "a pound and a half", the thing counted between.
            whole = _number(words[i - 3], ones)
            if whole is None and i >= 4:
                whole = _number(words[i - 4], ones)
            if whole is not None:
                out.add(whole + part)
                continue
        count = _number(before, ())
        out.add(count * part if count is not None else part)
    return frozenset(f"{v:g}" for v in out) if out else frozenset()


def measures_of_one(words: Sequence[str], *, ones: Collection[str], units: Collection[str],
                    leads: Collection[str]) -> frozenset[str]:
    """The measures of one unit a text says with "a" or "an", each written ``"1 <unit>"``.

    "for about an hour", "once a week", "more than a year": the keyword index drops the "an" and
    keeps "hour", so "I walk for about an hour" and "I walk for two hours" differ only in the
    number the second says, and a NOOP could fold the first into the second. One of ``ones``
    counts as one only after one of ``leads`` ("have a nice day" says no measure); "for a day
    trip" is read as a measure of a day, which it is.

    Args:
        words: the text's words in order (memsieve.text.marks.sequence_words).
        ones: the words that count one thing ("a", "an").
        units: the units a measure is said in ("hour", "week").
        leads: the words before a measure ("for", "about", "once").

    >>> sorted(measures_of_one("i walk for about an hour most days".split(), ones={"a", "an"},
    ...                        units={"hour", "day"}, leads={"for", "about"}))
    ['1 hour']
    >>> sorted(measures_of_one("have a nice day".split(), ones={"a"}, units={"day"}, leads={"for"}))
    []
    """
    out = {f"1 {words[i + 1]}" for i in range(1, len(words) - 1)
           if words[i] in ones and words[i + 1] in units and words[i - 1] in leads}
    return frozenset(out) if out else frozenset()


def _number(word: str, ones: Collection[str]) -> float | None:
    """The number a word says ("two", "3", and 1 for one of ``ones``), or None."""
    if word in ones:
        return 1.0
    return _number_term(word)


@functools.lru_cache(maxsize=4096)
def _number_term(word: str) -> float | None:
    terms = _core.tokenize(word) if word else []
    if len(terms) != 1:
        return None
    try:
        return float(terms[0])
    except ValueError:
        return None
