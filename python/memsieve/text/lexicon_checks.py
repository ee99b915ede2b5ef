"""The checks a ``Lexicon``'s fields pass when it is made (memsieve.text.lexicon): each field is a
collection of folded, lowercased entries, a regular expression, (word, value) pairs or a
vocabulary file, and anything else is a ``ConfigError`` that names the field and a fix."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

import memsieve._core as _core
from memsieve.errors import ConfigError
from memsieve.text.fold import fold


def check_entries(value: Any, *, name: str) -> frozenset[str]:
    """A set of lowercased, folded entries, each a non-empty string (words one space apart)."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigError(f"lexicon {name} must be a collection of strings, got {type(value).__name__} "
                          f"{value!r:.60}; pass e.g. frozenset({{'word', 'a phrase'}})")
    out = set()
    for entry in value:
        if not isinstance(entry, str) or not entry.strip():
            raise ConfigError(f"lexicon {name} holds {entry!r}, not a non-empty string; remove it")
        out.add(" ".join(fold(entry).lower().split()))
    return frozenset(out)


def check_fractions(value: Any) -> tuple[tuple[str, float], ...]:
    """``fraction_words`` checked: (word, value) pairs, one lowercased word and a number in (0, 1)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ConfigError(f"lexicon fraction_words must be (word, value) pairs, got {type(value).__name__}; "
                          f"pass e.g. (('half', 0.5),)")
    out = {}
    for entry in value:
        word, number = entry if isinstance(entry, tuple) and len(entry) == 2 else (None, None)
        if not isinstance(word, str) or " " in word.strip() or not word.strip() or isinstance(number, bool) \
                or not isinstance(number, (int, float)) or not 0 < number < 1:
            raise ConfigError(f"lexicon fraction_words holds {entry!r}, not a (word, value) pair with one word "
                              f"and a value between 0 and 1; write it like ('half', 0.5)")
        out[fold(word.strip()).lower()] = float(number)
    return tuple(sorted(out.items()))


def check_pattern(value: Any, *, name: str, flags: int = 0) -> re.Pattern[str] | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"lexicon {name} must be a non-empty regular expression string or None, got {value!r}; "
                          f"pass e.g. r'\\bforget\\b', or None when no text is one")
    try:
        return re.compile(value, flags)
    except re.error as exc:
        raise ConfigError(f"lexicon {name} {value!r:.80} is not a valid regular expression ({exc}); fix it") from None


def check_vocabulary(vocabulary: Any) -> None:
    """A vocabulary file that exists, checked when the lexicon is made (it is read on first use)."""
    if vocabulary is None:
        return
    if isinstance(vocabulary, (str, os.PathLike)):
        found = os.path.isfile(vocabulary)
    elif hasattr(vocabulary, "is_file") and hasattr(vocabulary, "open"):
        found = vocabulary.is_file()
    else:
        raise ConfigError(f"lexicon vocabulary must be a path to a tokenizer.json or None, got "
                          f"{type(vocabulary).__name__} {vocabulary!r:.60}")
    if not found:
        raise ConfigError(f"lexicon vocabulary {vocabulary!s} is not a file; give the tokenizer.json of a "
                          f"WordPiece model, or vocabulary=None to weigh every word as rare")


def check_facts(value: Any) -> tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]:
    """``fact_statements`` as (the noun's index terms, its compiled expression) pairs."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise ConfigError(f"lexicon fact_statements must be (noun, regular expression) pairs, got "
                          f"{type(value).__name__}; pass e.g. (('job', r'\\bworks as\\b'),)")
    out = []
    for pair in value:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], str) and pair[0].strip()):
            raise ConfigError(f"lexicon fact_statements holds {pair!r:.80}, not a (noun, regular expression) pair; "
                              f"pass e.g. ('job', r'\\bworks as\\b')")
        terms = tuple(_core.tokenize(pair[0]))
        if not terms:
            raise ConfigError(f"lexicon fact_statements noun {pair[0]!r} has no index term; use a content word")
        pattern = check_pattern(pair[1], name=f"fact_statements[{pair[0]!r}]")
        assert pattern is not None
        out.append((terms, pattern))
    return tuple(out)

