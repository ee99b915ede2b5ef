"""What folding a text into a memory would leave unsaid, read from the two texts' ``Marks``.

``unmarked`` lists what a fold would lose that the content words do not show (a value word, a
denial, a tense, values in another order, a pronoun's form); ``read_unaligned`` what is read
whether or not the two line up word for word (another doer, a plan against a deed);
``past_against_present`` the tense of a text that does not line up. ``part_of`` reads a passage's
marks as part of its longer text. The marks themselves are memsieve.text.marks's to read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memsieve.text.marks import NO_MARKS, Marks, rewritten_values, unread_values
from memsieve.text.voice import doers_differ, voice_turned

__all__ = ["other_doers", "other_modality", "other_tense", "part_of", "past_against_present", "read_unaligned",
           "said_amounts", "unmarked"]


def said_amounts(text: Marks, memory: Marks) -> tuple[str, ...]:
    """The amounts a text says in words (memsieve.text.amounts: "an hour and a half" as ``"1.5"``,
    "for about an hour" as ``"1 hour"``) that the memory does not: numbers the keyword index
    cannot see, which a fold would lose as it would a digit.

    >>> a = Marks(words=frozenset({"1 hour", "once"}), polarity=frozenset(), tense=frozenset(), values=())
    >>> said_amounts(a, NO_MARKS)
    ('1 hour',)
    """
    return tuple(sorted(w for w in text.words - memory.words if w[:1].isdigit()))


def unmarked(text: Marks, memory: Marks, *, aligned: bool = False) -> tuple[str, ...]:
    """What folding a text with marks ``text`` into a memory with marks ``memory`` would leave unsaid:
    its value words and signs the memory does not say, a denial either says and the other does
    not, a tense when the memory says only another, values of one class (numbers,
    days, names) that the memory says in another order ("Alice is 30 and Bob is 25" / "Alice is
    25 and Bob is 30"; "March 3rd" / "the 3rd of March" is one number and one day: no order),
    and a pronoun in a form the memory does not say it in ("my brother owes me" / "I owe my
    brother"). With ``aligned`` (the two line up word for
    word, memsieve.text.aligned.changed_in_place), a value word the memory says and the text drops
    is unsaid too ("at six" / "at half past six").

    >>> a = Marks(words=frozenset({"once"}), polarity=frozenset(), tense=frozenset({"present"}),
    ...           values=(("number", "25"), ("name", "bob"), ("number", "30")))
    >>> b = Marks(words=frozenset({"twice", "not"}), polarity=frozenset({"not"}), tense=frozenset({"past"}),
    ...           values=(("number", "30"), ("name", "bob"), ("number", "25")))
    >>> unmarked(a, b)
    ('once', "without 'not'", 'the present tense', 'the order of 25, 30')
    """
    out = [w for w in sorted(text.words - memory.words)]
    out += [f"{w!r} where it says {m!r}" for w, m in rewritten_values(text.written, memory.written)]
    out += [repr(w) for w in unread_values(text.written, memory.written)]
    out += [f"without {w!r}" for w in sorted(memory.polarity - text.polarity)]
    # A text that lines up with the memory word for word and drops one of its value words says
    # another value: "at six" against "at half past six", "every week" against "every other week".
    if aligned:
        out += [f"without {w!r}" for w in sorted(memory.words - text.words - memory.polarity)]
        # ... and one that drops the memory's past says it of now ("I used to play tennis" /
        # "I play tennis"): a verb in the present bears no mark of its own.
        if "past" in memory.tense and not text.tense:
            out.append("without the past tense")
        # ... and one that says a denial more or fewer than the memory, both saying some, denies
        # something else: the sets above cannot tell.
        if text.polarity and memory.polarity and text.denials != memory.denials:
            out.append(f"{text.denials} denials where it says {memory.denials}")
    # A pronoun said as the receiver where the memory says it only as the doer or the owner,
    # or any other way round: "my brother owes me" against "I owe my brother", "we borrowed
    # our neighbours' ladder" against "our neighbours borrowed our ladder".
    # The owner's form (a group's third, "my") stands for the others in a paraphrase ("my car
    # is grey" / "the car I have is grey"), so against it only a text that keeps it and adds
    # another form changes who does what.
    # A text that turns the memory's verb from the active to the passive with the same doer
    # ("Ben hired me" / "I was hired by Ben") says the receiver in the doer's form by grammar.
    turned = voice_turned(text.doers, memory.doers)
    for group, form in sorted(() if turned else text.roles - memory.roles):
        said = {f for g, f in memory.roles if g == group}
        owner = set(group.split("/")[2:])
        mine = {f for g, f in text.roles if g == group}
        if (said - owner and form not in owner) or (said and said <= mine):
            out.append(f"{form!r} where it says {'/'.join(repr(f) for f in sorted(said))}")
    out += other_tense(text, memory)
    # A verb said in the passive by one and in the active by the other, with another doer: "I was
    # hired by Ben" against "I hired Ben" (but "Ben hired me" restates it).
    out += read_unaligned(text, memory)
    # Names trade places when a verb turns voice ("Tom interviewed Maria" / "Maria was
    # interviewed by Tom"); numbers and days keep theirs.
    for cls in sorted({c for c, _ in text.values} - ({"name"} if turned else set())):
        said_values = [t for c, t in text.values if c == cls]
        if len(set(said_values)) > 1 and not _in_order(said_values, [t for c, t in memory.values if c == cls]):
            out.append(f"the order of {', '.join(said_values[:6])}")
    return tuple(out)


def part_of(part: Marks, whole: Marks) -> Marks:
    """The marks of a passage, read as a part of a longer text: what the whole says that the
    passage does not (a denial, a tense, a plan, a pronoun's form) is not missing from it.
    Its words in order, its values and its doers stay the passage's own, to be lined up with
    a memory's.
    """
    return replace(part, words=part.words | whole.words, polarity=part.polarity | whole.polarity,
                   tense=part.tense | whole.tense, roles=part.roles | whole.roles, modal=part.modal | whole.modal,
                   speakers=part.speakers | whole.speakers, people=part.people | whole.people,
                   denials=whole.denials, written=part.written | whole.written)


def read_unaligned(text: Marks, memory: Marks) -> list[str]:
    """What folding the text into the memory would leave unsaid that is read whether or not the
    two line up ("I was given a car by my dad" / "I gave my dad a car" do not; "I was going to
    buy a bike" / "I bought a bike" neither):

    - a verb one says in the passive and the other in the active, with another doer ("I was
      hired by Ben" / "I hired Ben");
    - a plan, a wish, a try or a near miss against a thing done, either way round ("I quit my
      job" / "I'm planning to quit my job", "I missed my flight" / "I almost missed my flight").
    """
    return other_doers(text, memory) + other_modality(text, memory)


def other_doers(text: Marks, memory: Marks) -> list[str]:
    """The verbs the two give different doers (memsieve.text.voice.doers_differ): in the passive
    against the active, or the speaker against someone else, in a deed or a state."""
    return [f"another doer of {verb!r}" for verb in doers_differ(
        text.doers, memory.doers, speakers=text.speakers | memory.speakers, people=text.people | memory.people)]


def other_tense(text: Marks, memory: Marks) -> list[str]:
    """The tenses of a text in the past where the memory is not, or the other way round.

    Only the past against the rest: "I worked at Google" / "I work at Google", "I am a teacher" /
    "I was a teacher". The present and the future stand for each other too often ("I'm making
    lasagne on Saturday" / "Saturday's dinner will be lasagne"), and a text in no tense says none.
    """
    if ("past" in text.tense) != ("past" in memory.tense) and (
            "past" in text.tense or (memory.tense == {"past"} and text.tense)):
        return [f"the {t} tense" for t in sorted(text.tense)]
    return []


def past_against_present(text: Marks, memory: Marks) -> list[str]:
    """``other_tense`` for a text that does not line up with the memory: only where each says a
    tense and one says the past alone where the other says none ("I had our second baby" / "I'm
    pregnant with our second"). A verb in the present simple bears no mark, and a text in two
    tenses ("My passport is kept in the drawer") says no change of one."""
    if not text.tense or not memory.tense:
        return []
    if (text.tense == {"past"} and "past" not in memory.tense) or (
            memory.tense == {"past"} and "past" not in text.tense):
        return [f"the {t} tense" for t in sorted(text.tense)]
    return []


def other_modality(text: Marks, memory: Marks) -> list[str]:
    """The modal words of one when the other says none: a plan against a deed, either way round."""
    if bool(text.modal) == bool(memory.modal):
        return []
    return sorted(text.modal) or [f"without {w!r}" for w in sorted(memory.modal)]


def _in_order(mine: Sequence[str], theirs: Sequence[str]) -> bool:
    """Whether ``mine``, the values held by ``theirs`` among them, occur in ``theirs`` in that order."""
    held = set(theirs)
    it = iter(theirs)
    return all(any(t == v for t in it) for v in mine if v in held)
