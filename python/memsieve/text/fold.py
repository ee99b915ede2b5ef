"""One folding of text before words are compared, the Rust tokenizer's own.

rust/text/normalize.rs folds every text the keyword index and the
information term read: NFKC (full-width digits, ligatures), combining marks
dropped on Latin letters only ("São" is "Sao"; a Devanagari vowel sign is
kept), and the typographic apostrophes U+2019, U+2018 and U+02BC made ASCII.
The lexicon's cue and request matching read raw words that the tokenizer
would stem or drop as stopwords ("don't", "went up"), so they cannot use its
tokens; they use ``fold`` instead, which is that same folding in Python, so
that the two readings of one text never disagree about an apostrophe or an
accent.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# A lowercased word as the cue and request rules see it: letters, digits and
# apostrophes, so that "don't" stays one word and "n't" can be read off it.
_WORD = re.compile(r"[a-z0-9']+")


def _is_latin(c: str) -> bool:
    # The ranges of normalize.rs: Basic Latin letters, Latin-1, Extended-A/B, Extended Additional.
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or "\u00c0" <= c <= "\u024f" or "\u1e00" <= c <= "\u1eff"


def fold(text: str) -> str:
    """The text as the Rust tokenizer normalizes it (case kept).

    >>> fold("Jonas and I aren\\u2019t together at the caf\\u00e9")
    "Jonas and I aren't together at the cafe"
    """
    if text.isascii():
        return text
    # One text is folded by several readers in a row (cues, marks, names, dates): a short one
    # is remembered; a long one is folded again rather than held.
    return _fold_short(text) if len(text) <= _FOLD_MEMO_CHARS else _fold(text)


_FOLD_MEMO_CHARS = 4096


@functools.lru_cache(maxsize=2048)
def _fold_short(text: str) -> str:
    return _fold(text)


def forget_texts() -> None:
    """Drop the remembered foldings (a purge erases its text from memory too)."""
    _fold_short.cache_clear()


def _fold(text: str) -> str:
    kept = []
    base_latin = False
    for c in unicodedata.normalize("NFKD", text):
        if unicodedata.category(c).startswith("M"):
            if not base_latin:
                kept.append(c)
            continue
        base_latin = _is_latin(c)
        kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept).translate(_APOSTROPHES))


def words(text: str) -> list[str]:
    """The folded, lowercased words of a text, in order: no stemming, no stopwords.

    >>> words("I DON\\u2019T go there anymore.")
    ['i', "don't", 'go', 'there', 'anymore']
    """
    return _WORD.findall(fold(text).lower())


# "1. ", "2) ", "(3) " opening a line: a list's numbering, which counts nothing.
_LIST_MARK = re.compile(r"(?m)^[ \t]*(?:[-*+\u2022][ \t]*)?\(?\d{1,3}[.)](?=[ \t])")


def without_list_marks(text: str) -> str:
    """``text`` with the numbers that number a list's items taken out: they state no value."""
    return _LIST_MARK.sub(" ", text) if "\n" in text or text[:1].isdigit() else text
