"""A value said with words that the memory says of another value.

"My brother lives in Denver and my sister lives in Austin" holds every word of
"My brother lives in Austin", so the information term finds nothing new in
it, and a NOOP would fold it there. Yet a reader of that memory learns that
the sister lives in Austin, not the brother: the text moves Austin to the
brother. The memory says each value in a clause (``Marks.clauses``) with the
words that tell what it is the value of; a text that says a value with a word
the memory says only in the clause of another value of the same class (a
number, a day, a name), one the text does not say, changes what that word's
value is.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from memsieve.text.marks import Marks, word_hashes


@dataclass(frozen=True, slots=True)
class _Clause:
    words: frozenset[int]
    values: dict[int, tuple[str, str]]


def said_of_another(said: Sequence[str], mine: Marks, memory: Marks,
                    filler: Collection[str] = ()) -> tuple[str, ...]:
    """What a text says of a value that its memory says of another value.

    For each value of the text that the memory says too, and each content word said in the
    same clause of the text: when no clause of the memory says the two together, and every
    clause of the memory that says the word says another value of the value's class, one the
    text does not say, the text gives the word a new value ("Dinner is at 8" against
    "Breakfast is at 8 and dinner is at 6"). A word the memory says in a clause with no value
    ("I moved to Denver in 2019, and I love it" / "I love Denver") is not read: nothing in the
    memory is the value of it.

    Args:
        said: the text's words (``sequence_words``), one per entry of ``mine.sequence``.
        mine: the text's marks; ``memory`` the memory's (``Lexicon.marks``, with clauses read).
        filler: words that say nothing by themselves ("really"): never read.

    Returns:
        One line per value so moved, ``"'austin' said with what it says of 'denver'"``, in text order.
    """
    if len(memory.values) < 2 or not mine.values or not _read(mine) or not _read(memory):
        return ()
    ours = set(mine.sequence)  # a value the text says, as a value or a word ("Jo drives ...")
    fill = word_hashes(frozenset(filler))
    theirs = _clauses(memory)
    held = set().union(*(c.values for c in theirs))
    out: list[str] = []
    for clause in _clauses(mine):
        for value, (cls, _) in clause.values.items():
            if value not in held:
                continue  # a value the memory does not say: memsieve.gate.profiles.kde reads it as unsaid
            with_value = [c for c in theirs if value in c.values]
            for word in clause.words - fill:
                if any(word in c.words or word in c.values for c in with_value):
                    continue
                # A word the text does not read as a value may be one in the memory ("Jo" opening
                # the text, a name inside the memory's sentence).
                others = [c for c in theirs if word in c.words or word in c.values]
                if not others:
                    continue
                moved = [[t for h, (k, t) in c.values.items() if k == cls and h not in ours] for c in others]
                if all(moved):
                    out.append(f"{_surface(said, mine, value)!r} said with what it says of {moved[0][0]!r}")
                    break
    return tuple(dict.fromkeys(out))


def _read(marks: Marks) -> bool:
    return len(marks.clauses) == len(marks.sequence) == len(marks.terms) > 0


def _value_hashes(marks: Marks) -> list[tuple[int, tuple[str, str]]]:
    return [(hash(term), (cls, term)) for cls, term in marks.values]


def _clauses(marks: Marks) -> list[_Clause]:
    """The clauses of a text: the content words that are no value, and the values, of each.

    A clause that says values but no other content word ("Alice and Bob live in Austin": "Alice")
    names things the next clause tells of: it is read with the next one.
    """
    values = dict(_value_hashes(marks))
    words: dict[int, set[int]] = {}
    said: dict[int, dict[int, tuple[str, str]]] = {}
    for h, term, clause in zip(marks.sequence, marks.terms, marks.clauses):
        if not term:
            continue
        if h in values:
            said.setdefault(clause, {})[h] = values[h]
        else:
            words.setdefault(clause, set()).add(h)
    out: list[_Clause] = []
    carried: dict[int, tuple[str, str]] = {}
    for clause in sorted(set(words) | set(said)):
        carried = {**carried, **said.get(clause, {})}
        if clause in words:
            out.append(_Clause(words=frozenset(words[clause]), values=carried))
            carried = {}
    if carried and out:
        out[-1] = _Clause(words=out[-1].words, values={**out[-1].values, **carried})
    return out


def _surface(said: Sequence[str], marks: Marks, value: int) -> str:
    """The value as the text writes it (its first word whose hash it is)."""
    for word, h in zip(said, marks.sequence):
        if h == value:
            return word
    return next(t for c, t in marks.values if hash(t) == value)
