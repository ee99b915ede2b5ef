"""Who does what a verb says, read the same way in the active and the passive.

"I was hired by Ben" and "I hired Ben" hold the same content words in the same
order: neither the index nor the alignment of ``changed_in_place`` tells them
apart, yet one has Ben hiring and the other has him hired. "Ben hired me" says
what the first does. ``VoiceReader`` names, for each verb a short text says
once, its doer: the word before the verb in the active (auxiliaries and
adverbs passed over), the word after the agent word ("by") in the passive.
A word said after "be" with no agent ("I'm worried about my dad's health",
"my sister was hired") is a state, and the one it holds of is the subject
before "be": "my dad is worried about my health" holds it of someone else.
``unmarked`` (memsieve.text.marks) compares them only where one text says the
verb in the passive: two actives that trade their words are the business of
``_swapped`` in memsieve.text.aligned.

A doer is kept as the hashes of its index terms, or of its pronoun's group
("i/me/my"), never as text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence

from memsieve.text.contractions import Contractions

#: How a text says a verb: its doer is the subject before it (``ACTIVE``), the phrase after the
#: agent word (``PASSIVE``: "hired by Ben"), or, said after "be" with no agent, the subject before
#: "be" is the one it holds of (``STATE``: "I'm worried", "she was hired").
ACTIVE, PASSIVE, STATE = "active", "passive", "state"
#: A verb said once, the hashes of the words that may name its doer (or holder), and how it is said.
Doer = tuple[str, frozenset[int], str]

#: A passive's agent word ("by") comes at most this many words after its participle.
MAX_BEFORE_AGENT = 3
#: A doer's phrase is read over at most this many words.
PHRASE_WORDS = 4


class VoiceReader:
    """Reads the ``Doer`` of each verb a text says once.

    >>> read = VoiceReader(auxiliaries={"have", "has"}, passive_auxiliaries={"was", "been"},
    ...                    agent_words={"by"}, determiners={"the", "my"},
    ...                    role_of={"i": "i/me/my", "me": "i/me/my", "my": "i/me/my"}, owner_forms={"my"},
    ...                    term_of=lambda w: w if w not in {"i", "me", "my", "was", "by", "the"} else "")
    >>> [(v, how) for v, _, how in read(["i", "was", "hired", "by", "ben"])]
    [('hired', 'passive')]
    >>> read(["i", "was", "hired", "by", "ben"])[0][1] == read(["ben", "has", "hired", "me"])[0][1]
    True
    >>> [(v, how) for v, _, how in read(["i", "was", "hired"])]
    [('hired', 'state')]
    """

    def __init__(self, *, auxiliaries: Collection[str], passive_auxiliaries: Collection[str],
                 agent_words: Collection[str], determiners: Collection[str],
                 role_of: Mapping[str, str], owner_forms: Collection[str], term_of: Callable[[str], str],
                 verb_of: Mapping[str, str] | None = None, contractions: Contractions | None = None,
                 progressive_ending: str = "") -> None:
        self.auxiliaries, self.passive_auxiliaries = frozenset(auxiliaries), frozenset(passive_auxiliaries)
        self.agent_words = frozenset(agent_words)
        self.determiners, self.role_of, self.owner_forms = frozenset(determiners), role_of, frozenset(owner_forms)
        self.term_of = term_of
        # A participle read as its verb's past ("given": "gave"), so both voices name one verb.
        self.verb_of = dict(verb_of or {})
        self.contractions = contractions or Contractions(())
        # "is knitting": a form of "be" before a verb with this ending says it in the active.
        self.progressive_ending = progressive_ending

    def __call__(self, words: Sequence[str]) -> tuple[Doer, ...]:
        if not self.agent_words:
            return ()
        terms = [self.term_of(self.verb_of.get(w, w)) for w in words]
        once = Counter(t for t in terms if t)
        out: list[Doer] = []
        for i, (w, t) in enumerate(zip(words, terms)):
            if not t or once[t] != 1 or w in self.role_of or w in self.auxiliaries or w in self.passive_auxiliaries:
                continue
            progressive = self._progressive(w)
            # A bare "-ing" word is a gerund or a participle ("I'm a pharmacist, working in
            # Tucson"), whose doer is no phrase before it.
            if progressive and not self._after_be(words, i):
                continue
            agent = 0 if progressive else self._agent_word_after(words, i)
            be = -1 if agent or progressive else self._be_before(words, i, nouns=True)
            if agent:
                doers, how = self._agent_after(words, terms, agent + 1), PASSIVE
            elif be >= 0:
                doers, how = self._holder_before(words, terms, be), STATE
            else:
                doers, how = self._subject_before(words, terms, i), ACTIVE
            if doers:
                out.append((t, doers, how))
        return tuple(out)

    def _holder_before(self, words: Sequence[str], terms: Sequence[str], be: int) -> frozenset[int]:
        """The one a state holds of: the subject before its "be" at ``be`` ("my dad is worried":
        dad), or the pronoun a contraction of "be" is cut from ("i'm worried": i)."""
        pronoun = self._pronoun_of(words[be])
        return self._as_subject(pronoun) if pronoun is not None else self._subject_before(words, terms, be)

    def _as_subject(self, pronoun: str) -> frozenset[int]:
        """A pronoun's group as a subject, if the pronoun is its doer's form ("I", not "me" or "my")."""
        group = self.role_of[pronoun]
        return frozenset({hash(group)}) if group.split("/")[0] == pronoun else frozenset()

    def _agent_word_after(self, words: Sequence[str], i: int) -> int:
        """Where the agent word of ``words[i]`` said in the passive is (0: not in the passive).

        A word after a passive auxiliary, its agent word at most ``MAX_BEFORE_AGENT`` words on:
        "I was hired by Ben", "I got picked up by Ana", "I was given a car by my dad". The word's
        form is not read: "hurt" and "hired" are participles alike, and a word that is none
        ("I was late by an hour") names a doer that no active text gives it.
        """
        for j in range(i - 1, max(i - 3, -1), -1):
            if self._aux_of(words[j]) in self.passive_auxiliaries:
                break
            if not self._passed_over(words[j]):
                return 0
        else:
            return 0
        for j in range(i + 1, min(i + 2 + MAX_BEFORE_AGENT, len(words))):
            if words[j] in self.agent_words:
                return j
            if words[j] in self.passive_auxiliaries or words[j] in self.auxiliaries:
                return 0  # another clause's verb
        return 0

    def _agent_after(self, words: Sequence[str], terms: Sequence[str], start: int) -> frozenset[int]:
        """The agent's words: its pronoun's group, or the content words of its phrase ("by the
        chef at Nori": chef, nori), any of which may be named as the active's subject."""
        said: set[int] = set()
        gaps = 0
        for j in range(start, min(start + PHRASE_WORDS, len(words))):
            w = words[j]
            if w in self.determiners or w in self.owner_forms:
                continue
            if w in self.role_of:
                if not said:
                    return frozenset({hash(self.role_of[w])})
                break
            if terms[j]:
                said.add(hash(terms[j]))
                continue
            gaps += 1  # a preposition inside the phrase ("at"); a second word of the kind ends it
            if gaps > 1 or not said:
                break
        return frozenset(said)

    def _subject_before(self, words: Sequence[str], terms: Sequence[str], i: int) -> frozenset[int]:
        """The subject's words before an active verb: its pronoun's group, or the content words of
        the phrase before it ("the chef at Nori cooked": chef, nori)."""
        said: set[int] = set()
        j = i - 1
        # A contracted pronoun is the subject, not an auxiliary to pass over ("i've hired"); "be"
        # before a progressive is passed over like one ("my grandmother is knitting").
        progressive = self._progressive(words[i])
        while j >= 0 and self._pronoun_of(words[j]) is None and (
                self._aux_of(words[j]) in self.auxiliaries or self._passed_over(words[j])
                or (progressive and self._aux_of(words[j]) in self.passive_auxiliaries)):
            j -= 1
        for j in range(j, max(j - PHRASE_WORDS, -1), -1):
            w = words[j]
            # A verb after a passive auxiliary with no agent ("I was hired last year") names no doer.
            if not progressive and self._aux_of(w) in self.passive_auxiliaries and not said:
                return frozenset()
            pronoun = self._pronoun_of(w)
            if pronoun is not None:
                if said:
                    break
                return self._as_subject(pronoun)
            if terms[j]:
                said.add(hash(terms[j]))
            elif not said or w not in self.determiners:
                break  # "the" belongs to the phrase; "at" or "that" ends it
        return frozenset(said)

    def _pronoun_of(self, word: str) -> str | None:
        if word in self.role_of:
            return word
        split = self.contractions.split(word)
        return split[0] if split and split[0] in self.role_of else None

    def _aux_of(self, word: str) -> str:
        """An auxiliary, or the one a contraction ends in ("i'm": "am", "she's": "is")."""
        return self.contractions.reading(word)

    def _progressive(self, word: str) -> bool:
        """Whether a verb is in the progressive form ("knitting"), never a passive's participle."""
        end = self.progressive_ending
        return bool(end) and len(word) >= len(end) + 2 and word.endswith(end)  # "doing", not "king"

    def _after_be(self, words: Sequence[str], i: int) -> bool:
        """Whether a form of "be" stands before ``words[i]``, adverbs passed over ("is still knitting")."""
        return self._be_before(words, i) >= 0

    def _be_before(self, words: Sequence[str], i: int, *, nouns: bool = False) -> int:
        """Where the form of "be" before ``words[i]`` stands, adverbs passed over; -1 for none.

        With ``nouns``, a noun's determiner and owner are passed over too ("is my boss", "'m
        Sam's boss"): the state is being that noun.
        """
        for j in range(i - 1, max(i - 4, -1) if nouns else max(i - 3, -1), -1):
            if self._aux_of(words[j]) in self.passive_auxiliaries:
                return j
            if not (self._passed_over(words[j]) or (nouns and self._owner_or_determiner(words[j]))):
                return -1
        return -1

    def _owner_or_determiner(self, word: str) -> bool:
        """A determiner, an owner's pronoun ("my") or an owner named by the possessive ending ("sam's")."""
        return word in self.determiners or word in self.owner_forms or self.contractions.is_possessive(word)

    def _passed_over(self, word: str) -> bool:
        """Words between a subject and its verb that are no subject: auxiliaries, adverbs in -ly."""
        return word in self.auxiliaries or (len(word) > 4 and word.endswith("ly"))


def voice_turned(text: Sequence[Doer], memory: Sequence[Doer]) -> bool:
    """Whether a verb one side says in the passive the other says in the active with the same
    doer: "I was hired by Ben" / "Ben hired me", where "I" and "me" are one person in two roles."""
    theirs = {verb: (doer, how) for verb, doer, how in memory}
    return any(verb in theirs and {how, theirs[verb][1]} == {ACTIVE, PASSIVE} and doer & theirs[verb][0]
               for verb, doer, how in text)


def doers_differ(text: Sequence[Doer], memory: Sequence[Doer], *, speakers: Collection[int] = (),
                 people: Collection[int] = ()) -> tuple[str, ...]:
    """The verbs both sides say that the two give different doers.

    Where one side says the verb in the passive, any other doer differs ("I was hired by Ben" /
    "I hired Ben"). Where both say it in the active, or both as a state, the doers differ when
    one is the speaker (``speakers``: the hashes of the speaker's pronoun groups, "i/me/my") and
    the other names someone (``people``: the hashes of the words that name a person): "my
    husband is cooking dinner" / "I'm cooking dinner", "my grandmother is knitting a scarf for
    me" / "I'm knitting a scarf for my grandmother", "I'm worried about my dad's health" / "my
    dad is worried about my health". "My work starts at 8:30" restates "I start work at 8:30"
    (work is no one), two words for one doer ("my neighbour's dog" / "my neighbor's dog") are no
    speaker, and "he" is the one a text names, not someone new. A state held of two people,
    neither the speaker, differs too ("our cat is scared of the dog" / "the dog is scared of
    our cat"). A state and a deed are not compared ("I was hired" / "Ben hired me").

    >>> ben, ana, me = frozenset({1}), frozenset({2}), frozenset({3})
    >>> doers_differ([("hire", ben, PASSIVE)], [("hire", ana, ACTIVE)]), doers_differ([("hire", me, ACTIVE)], [("hire", ana, ACTIVE)])
    (('hire',), ())
    >>> doers_differ([("hire", me, ACTIVE)], [("hire", ana, ACTIVE)], speakers={3}, people={2})
    ('hire',)
    >>> doers_differ([("worry", me, STATE)], [("worry", ana, STATE)], speakers={3}, people={2})
    ('worry',)
    >>> doers_differ([("hire", ben, PASSIVE)], [("hire", ben, ACTIVE)])
    ()
    """
    theirs = {verb: (doer, how) for verb, doer, how in memory}
    me, others = frozenset(speakers), frozenset(people)

    def apart(mine: frozenset[int], other: frozenset[int]) -> bool:
        return bool((mine & me and not other & me and other & others)
                    or (other & me and not mine & me and mine & others))

    def differ(doer: frozenset[int], how: str, other: frozenset[int], other_how: str) -> bool:
        if doer & other:
            return False
        if {how, other_how} == {ACTIVE, PASSIVE}:
            return True
        # A state held of two people, neither the speaker, is two facts too ("our cat is scared
        # of the neighbour's dog" / "the neighbour's dog is scared of our cat").
        both = how == other_how == STATE and bool(doer & others) and bool(other & others)
        return how == other_how != PASSIVE and (apart(doer, other) or both)

    return tuple(verb for verb, doer, how in text if verb in theirs and differ(doer, how, *theirs[verb]))
