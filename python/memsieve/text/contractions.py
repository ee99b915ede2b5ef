"""A contraction read as its two words ("i'm": "i am", "don't": "do not").

The gate's marks (memsieve.text.marks) and its reading of who does what
(memsieve.text.voice) both split contractions: "I'm not" and "I am not" say one
denial, and in "I've hired Ben" the doer is the "I" of "I've". Both read them
through one ``Contractions``, built from the lexicon's ``contractions``,
``possessive_ending`` and ``contraction_hosts``, so a language's contractions
have one home.
"""

from __future__ import annotations

from collections.abc import Collection

from memsieve.errors import ConfigError


class Contractions:
    """Splits a lowercased word at a contraction's ending.

    Args:
        groups: an ending and the word it stands for, written ``"'m/am"``; a group may name
            more readings (``"'d/would/had"``), of which the first is the one read.
        possessive_ending: an ending that is also the possessive ("'s": "Tom's car"), read as
            a contraction only after ``hosts``; "" for none.
        hosts: the words after which ``possessive_ending`` is a contraction ("it's", "she's").

    >>> c = Contractions(["n't/not", "'m/am", "'s/is"], possessive_ending="'s", hosts={"she"})
    >>> c.split("i'm"), c.split("don't"), c.split("she's"), c.split("tom's"), c.split("ok")
    (('i', 'am'), ('do', 'not'), ('she', 'is'), None, None)
    >>> c.reading("i'm"), c.reading("tom's")
    ('am', "tom's")
    >>> c.is_possessive("tom's"), c.is_possessive("she's")
    (True, False)
    """

    def __init__(self, groups: Collection[str], *, possessive_ending: str = "",
                 hosts: Collection[str] = ()) -> None:
        for name, given, example in (("contractions", groups, "[\"'m/am\", \"n't/not\"]"),
                                     ("hosts", hosts, "{'it', 'she'}")):
            if isinstance(given, str) or not isinstance(given, Collection):
                raise ConfigError(f"{name} must be a collection of strings, got {given!r}; pass e.g. {example}")
        pairs = []
        for group in groups:
            forms = group.split("/") if isinstance(group, str) else []
            if len(forms) < 2 or not all(f and " " not in f for f in forms):
                raise ConfigError(f"contraction group {group!r} is not an ending and its word apart by '/'; "
                                  "write it like \"'m/am\"")
            pairs.append((forms[0], forms[1]))
        if not isinstance(possessive_ending, str):
            raise ConfigError(f"possessive_ending must be a string, got {type(possessive_ending).__name__}; "
                              "pass e.g. \"'s\", or '' for none")
        # The longest ending first, so that no ending is cut short by one it ends in.
        self.endings = tuple(sorted(pairs, key=lambda p: (-len(p[0]), p[0])))
        if not all(isinstance(h, str) for h in hosts):
            raise ConfigError(f"hosts must hold words, got {sorted(map(repr, hosts))}; pass e.g. {{'it', 'she'}}")
        self.possessive_ending, self.hosts = possessive_ending, frozenset(hosts)
        # The characters every ending holds (English: the apostrophe): a word without them is no
        # contraction, decided without trying each ending (the voice reader asks ~90 times a text).
        needed = frozenset.intersection(*(frozenset(e) for e, _ in self.endings)) if self.endings else frozenset()
        self._needle = min(needed) if needed else ""

    def split(self, word: str) -> tuple[str, str] | None:
        """The word a contraction is cut from and the word its ending stands for, or None."""
        if not self.endings or (self._needle and self._needle not in word):
            return None
        for end, full in self.endings:
            if word.endswith(end) and len(word) > len(end):
                host = word[:-len(end)]
                if end == self.possessive_ending and host not in self.hosts:
                    return None
                return host, full
        return None

    def is_possessive(self, word: str) -> bool:
        """Whether a lowercased word names an owner by the possessive ending ("tom's"), not a
        contraction cut from a host ("it's")."""
        end = self.possessive_ending
        return bool(end) and len(word) > len(end) and word.endswith(end) and self.split(word) is None

    def reading(self, word: str) -> str:
        """The word a contraction's ending stands for ("i'd": "would"), or the word itself."""
        parts = self.split(word)
        return parts[1] if parts else word
