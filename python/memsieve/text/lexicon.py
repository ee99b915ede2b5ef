"""``Lexicon``: everything memsieve knows about one language, behind one small object.

The gate asks a lexicon which change cues a candidate says and how rare its
plain words are; search asks it for change cues and for the words that name
whom a memory is about; forgetting asks it whether a message is a request to
forget and which words of the request are the asking, not the subject. None
of them holds a word list of its own, so another language is another
``Lexicon`` handed to ``Memory(lexicon=...)``:

    >>> import dataclasses
    >>> from memsieve.text import ENGLISH
    >>> mine = dataclasses.replace(ENGLISH, name="english+de", change_cues=ENGLISH.change_cues | {"umgezogen"})
    >>> sorted(mine.cues("Wir sind umgezogen."))
    ['umgezogen']

The tokenizer itself (stopwords, the Snowball stemmer, number words) is the
Rust core's and English; a lexicon changes what is read on top of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import memsieve._core as _core
from memsieve.errors import ConfigError
from memsieve.resources import packaged_tokenizer_path
from memsieve.text import english
from memsieve.text.lexicon_checks import check_entries, check_fractions, check_vocabulary
from memsieve.text.events import tells_of_event
from memsieve.text.cues import find_subject_terms
from memsieve.text.lexicon_derived import Derived
from memsieve.text.marks import Marks
from memsieve.text.marks import forget_texts as forget_read_texts
from memsieve.text.requests import cut_framing, split_clauses
from memsieve.text.fold import fold, words
from memsieve.text.subjects import Subject, find_subject, relation_names
from memsieve.text.when_told import names_its_date

@dataclass(frozen=True)
class Lexicon:
    """A language's word lists and phrasings, with the rules that read them.

    Every entry is matched on the text's lowercased words after the Rust
    tokenizer's folding (memsieve.text.fold), and is folded and lowercased
    the same way when the lexicon is made. Answers are remembered per
    instance, so a lexicon is cheap to consult again.

    Attributes:
        name: what to call the lexicon in messages and reports.
        change_cues: single words and phrases ("moved", "no longer"):
            a text that says one says a fact changed (memsieve.text.cues).
        cue_suffixes: word endings that are change cues ("n't").
        relations: words that name a person by their relation to the speaker
            ("sister", "boss"); with the names beside them they are whom a
            fact is about, not what it says.
        relation_aliases: (word, relation) pairs of relation words that name the same
            person as another ("mom", "mother"), read as it in whom a text is about.
        request_words: the words a request to forget is made of ("please",
            "forget", "everything about"), dropped to leave its subject.
        old_words: words that ask for the older version of a fact ("old", "previous").
        broad_words: words by which a request asks for everything about its subject ("everything").
        fact_statements: (noun, regular expression) pairs: a memory the expression matches
            (lowercased) states the fact the noun names ("job": "works as"), for a request
            to forget that names it by the noun.
        determiners: words that may open a clause before its subject ("the", "my").
        value_labels: nouns whose number is an attribute's value, not the name of a
            thing ("code 4471"); after any other noun a number names which one ("room 101").
        self_words: first-person words ("i", "my", "i'm"): the user (memsieve.text.subjects).
        self_possessives: the possessives among them ("my"), which before a relation word name that person.
        other_pronouns: third-person pronouns ("she", "his"): someone not the user.
        companions: animals a fact is about, read like relation words for its subject ("dog").
        request_opening: a regular expression for a request's opening up to its verb
            ("could you forget"), cut before its subject is read; None: nothing is cut.
        request_framing: a regular expression for the request's talk of having said
            it ("what i told you"), cut too; None: nothing is cut.
        forget_request: a regular expression, searched on the folded
            lowercased text, that finds a request to forget; None: no text is one.
        not_a_forget_request: a regular expression for texts that match
            ``forget_request`` yet are not one ("don't forget to ..."); None: none.
        keep_request: a regular expression for a clause of a request that asks
            not to forget ("don't forget my birthday"); None: no clause does.
        retract_request: a regular expression for a clause that takes back the clauses
            before it ("no wait, keep it"); None: none does.
        request_exception: a regular expression for a clause that keeps something out of
            the request ("except my birthday", "not my email"); None: none does.
        request_conjunction: a regular expression where one request names two of the
            user's own things ("... my address and my job"); None: never split.
        clause_break: a regular expression where a request's clauses part
            ("," "but"); None: a request is one clause.
        assistant_said: a regular expression for a question about what the assistant
            said ("you mentioned", "what did you recommend"); None: no question is one.
        user_said: one for a question about what the user said ("I told you"), which
            outweighs ``earlier_chat``; None: none.
        earlier_chat: one for talk of an earlier chat ("our previous conversation"),
            which without ``user_said`` asks about the assistant's words; None: none.
        value_words: words that state a value though the keyword index drops them
            ("once", "pm", "after", "was"): a text is folded only into a memory that
            says each of these it says (memsieve.text.marks.Marks).
        polarity_words: words that deny what a text says ("not", "never"): a text
            and a memory that differ in them are not folded together.
        past_words: verbs that put a fact in the past ("was", "went").
        present_words: verbs that put it in the present ("am", "is").
        future_words: words that put it in the future ("will"): a text is not
            folded into a memory that says only another tense.
        past_ending: the ending of a regular past verb ("ed"; "" for none) ...
        not_past: ... and the words with that ending that are none ("hundred").
        state_past: past verbs that tell of a state, not of a thing done ("was", "lived") ...
        doers: ... the pronouns that do what the next verb says ("i", "we") ...
        event_adverbs: ... and the words passed over between one and its verb ("just"): a
            statement whose doers do things in the past alone tells of an event, which a
            later one does not replace (memsieve.text.events).
        plain_pasts: verbs of a thing done whose past is spelled as their plain form ("read",
            "put") ...
        plain_doers: ... and the doers after whom that form is the present too ("i", "we"):
            there it tells of an event only in a text dated in the past or saying another
            verb in the past ("I read Dune last month"; "I read every night" is a habit).
        set_phrases: a past verb and the word after it that, ending a clause, tell of nothing
            done ("got this": "You got this!" cheers someone on).
        happening_words: the words of a question that ask what happened, not about what
            ("happened", "anything"): a question with a time window and no other content
            word asks about that time alone (``asks_only_when``).
        filler_words: words a restatement adds without saying more ("honestly",
            "said"): not counted as changed (memsieve.text.aligned.changed_in_place).
        currency_signs: characters that name a currency ("$", "€").
        pronoun_forms: a pronoun's forms as doer, receiver and owner, written
            ``"i/me/my"``: a text that says one where the memory says another and not
            it is not folded into it.
        word_forms: forms of one word that the next word chooses, written ``"a/an"``:
            "a cautious" and "an aggressive" differ by one word, not two.
        auxiliaries: words that stand between a subject and its verb ("have", "will",
            "just"), passed over to find who does what a verb says (memsieve.text.voice).
        passive_auxiliaries: the words before a verb in the passive ("was", "got") ...
        agent_words: ... and the word before its doer ("by"); empty: no text is read
            for its doers, and "I was hired by Ben" may fold into "I hired Ben".
        verb_forms: a verb's past and participle where they differ, written
            ``"gave/given"``: read as one verb when who does it is compared.
        verb_pasts: a verb's plain form, past and participle where the index does not read
            them as one term, written ``"buy/bought"``: a question asked with one ("what
            did I buy last?") is about texts that say another ("I bought ...").
        verb_kin: verbs, written ``"go/visit/travel"``, that a question may ask about an
            event with where the event was told with another of them ("where did I go
            first?" over "I visited ..."); each in every form ``verb_pasts`` gives it.
        modal_words: words (or two-word phrases) that say a fact is only planned, wished,
            tried or nearly done ("planning", "almost", "going to"): a text that says none is
            not folded into a memory that says one, nor the other way round.
        contractions: a contraction's ending and the word it stands for, written ``"'m/am"``:
            "I'm not" and "I am not" say one denial, and in "I've hired Ben" the doer is "I"
            (memsieve.text.contractions; a group may name more readings, the first is read).
        possessive_ending: an ending that is also the possessive ("'s"), read as a contraction ...
        contraction_hosts: ... only after these words ("it's", "she's"; "Tom's" is Tom's).
        role_prepositions: words that say a thing's part in what happens ("from", "for",
            "with"): put in place of another in a text that lines up with a memory ("a gift
            from my aunt" / "a gift for my aunt"), they change it.
        placed_values: stopwords that say a value when put in another word's place ("until" /
            "from", "unless" / "if") in a text that lines up with a memory word for word.
        fraction_words: (word, value) pairs of the words that say a fraction (("half", 0.5)):
            "half a pound" and "a pound and a half" say two amounts in the same words
            (memsieve.text.amounts) ...
        one_words: ... the words that count one thing there ("a", "an") ...
        clock_words: ... and the words after a fraction that make it a time ("half past").
        one_units: units a measure of one is said in with a one word ("for an hour", "once a
            week"), after one of ``measure_leads`` (memsieve.text.amounts.measures_of_one).
        clause_joints: words that join two clauses ("and", "but"): a value is said of the
            words of its clause (memsieve.text.clauses).
        progressive_ending: the ending of a verb in the progressive ("ing"; "" for none): after
            a form of "be" it is said in the active ("my grandmother is knitting").
        vocabulary: a Hugging Face ``tokenizer.json`` (path or Traversable)
            whose WordPiece vocabulary ranks words by frequency, for the
            word-rarity prior (memsieve.text.rarity); None: every word is rare (1.0).
    """

    name: str
    change_cues: frozenset[str] = frozenset()
    cue_suffixes: frozenset[str] = frozenset()
    relations: frozenset[str] = frozenset()
    relation_aliases: tuple[tuple[str, str], ...] = ()
    request_words: frozenset[str] = frozenset()
    old_words: frozenset[str] = frozenset()
    broad_words: frozenset[str] = frozenset()
    fact_statements: tuple[tuple[str, str], ...] = ()
    determiners: frozenset[str] = frozenset()
    value_labels: frozenset[str] = frozenset()
    self_words: frozenset[str] = frozenset()
    self_possessives: frozenset[str] = frozenset()
    other_pronouns: frozenset[str] = frozenset()
    companions: frozenset[str] = frozenset()
    request_opening: str | None = None
    request_framing: str | None = None
    forget_request: str | None = None
    not_a_forget_request: str | None = None
    keep_request: str | None = None
    retract_request: str | None = None
    request_conjunction: str | None = None
    request_exception: str | None = None
    clause_break: str | None = None
    assistant_said: str | None = None
    user_said: str | None = None
    earlier_chat: str | None = None
    value_words: frozenset[str] = frozenset()
    polarity_words: frozenset[str] = frozenset()
    past_words: frozenset[str] = frozenset()
    present_words: frozenset[str] = frozenset()
    future_words: frozenset[str] = frozenset()
    past_ending: str = ""
    not_past: frozenset[str] = frozenset()
    state_past: frozenset[str] = frozenset()
    doers: frozenset[str] = frozenset()
    event_adverbs: frozenset[str] = frozenset()
    plain_pasts: frozenset[str] = frozenset()
    plain_doers: frozenset[str] = frozenset()
    set_phrases: frozenset[str] = frozenset()
    happening_words: frozenset[str] = frozenset()
    filler_words: frozenset[str] = frozenset()
    currency_signs: str = ""
    pronoun_forms: frozenset[str] = frozenset()
    word_forms: frozenset[str] = frozenset()
    auxiliaries: frozenset[str] = frozenset()
    passive_auxiliaries: frozenset[str] = frozenset()
    agent_words: frozenset[str] = frozenset()
    verb_forms: frozenset[str] = frozenset()
    verb_pasts: frozenset[str] = frozenset()
    verb_kin: frozenset[str] = frozenset()
    modal_words: frozenset[str] = frozenset()
    contractions: frozenset[str] = frozenset()
    possessive_ending: str = ""
    contraction_hosts: frozenset[str] = frozenset()
    progressive_ending: str = ""
    role_prepositions: frozenset[str] = frozenset()
    placed_values: frozenset[str] = frozenset()
    fraction_words: tuple[tuple[str, float], ...] = ()
    one_words: frozenset[str] = frozenset()
    clock_words: frozenset[str] = frozenset()
    one_units: frozenset[str] = frozenset()
    measure_leads: frozenset[str] = frozenset()
    clause_joints: frozenset[str] = frozenset()
    vocabulary: Any = None
    _derived: Derived = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"lexicon name must be a non-empty string, got {self.name!r}; e.g. name='german'")
        for name in ("change_cues", "cue_suffixes", "relations", "request_words", "old_words", "broad_words", "determiners",
                     "value_labels", "self_words", "self_possessives", "other_pronouns", "companions", "value_words",
                     "polarity_words", "past_words", "present_words", "future_words", "not_past", "state_past",
                     "doers", "event_adverbs", "plain_pasts", "plain_doers", "set_phrases", "happening_words", "filler_words",
                     "pronoun_forms", "word_forms", "auxiliaries", "passive_auxiliaries", "agent_words", "verb_forms",
                     "verb_pasts", "verb_kin", "modal_words", "contractions", "contraction_hosts", "role_prepositions",
                     "placed_values", "one_words", "clock_words", "one_units", "measure_leads", "clause_joints"):
            object.__setattr__(self, name, check_entries(getattr(self, name), name=name))
        for name, example in (("pronoun_forms", "'i/me/my'"), ("word_forms", "'a/an'"),
                              ("verb_forms", "'gave/given'"), ("verb_pasts", "'buy/bought'"),
                              ("verb_kin", "'go/visit'"), ("contractions", "\"'m/am\"")):
            for group in getattr(self, name):
                forms = group.split("/")
                if len(forms) < 2 or not all(f and " " not in f for f in forms):
                    raise ConfigError(f"lexicon {name} holds {group!r}, not one-word forms apart by '/'; "
                                      f"write it like {example}")
        for name, example in (("currency_signs", "'$€£'"), ("past_ending", "'ed'"), ("possessive_ending", "\"'s\""),
                              ("progressive_ending", "'ing'")):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"lexicon {name} must be a string, got {type(getattr(self, name)).__name__}; "
                                  f"pass e.g. {example}")
        for name in ("past_ending", "possessive_ending", "progressive_ending"):
            # Read against folded, lowercased words, as the word lists are ("’s" is "'s").
            ending = fold(getattr(self, name)).lower()
            if ending != ending.strip() or " " in ending:
                raise ConfigError(f"lexicon {name} must be a word's ending without spaces, got "
                                  f"{getattr(self, name)!r}; pass e.g. 'ing', or '' for none")
            object.__setattr__(self, name, ending)
        object.__setattr__(self, "fraction_words", check_fractions(self.fraction_words))
        check_vocabulary(self.vocabulary)
        object.__setattr__(self, "_derived", Derived(self))

    def __getstate__(self) -> dict[str, Any]:
        # The memo caches are rebuilt, not pickled: they hold bound methods.
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_derived", Derived(self))

    @classmethod
    def english(cls) -> "Lexicon":
        """The English lexicon (memsieve.text.english) with MiniLM's vocabulary as the rarity prior."""
        suffixes = frozenset(english.CUE_SUFFIXES)
        return cls(name="english", change_cues=frozenset(c for g in english.CUES.values() for c in g) - suffixes,
                   cue_suffixes=suffixes, relations=english.RELATIONS, relation_aliases=tuple(sorted(english.RELATION_ALIASES.items())), request_words=english.REQUEST_WORDS,
                   old_words=english.OLD_WORDS, broad_words=english.BROAD_WORDS,
                   fact_statements=english.FACT_STATEMENTS,
                   determiners=english.DETERMINERS,
                   value_labels=english.VALUE_LABELS, self_words=english.SELF_WORDS,
                   self_possessives=english.SELF_POSSESSIVES, other_pronouns=english.OTHER_PRONOUNS,
                   companions=english.COMPANIONS, request_opening=english.REQUEST_OPENING,
                   request_framing=english.REQUEST_FRAMING, forget_request=english.FORGET_REQUEST,
                   not_a_forget_request=english.NOT_A_FORGET_REQUEST, keep_request=english.KEEP_REQUEST,
                   retract_request=english.RETRACT_REQUEST, request_conjunction=english.REQUEST_CONJUNCTION,
                   request_exception=english.REQUEST_EXCEPTION,
                   clause_break=english.CLAUSE_BREAK, assistant_said=english.ASSISTANT_SAID,
                   user_said=english.USER_SAID, earlier_chat=english.EARLIER_CHAT,
                   value_words=english.VALUE_WORDS, polarity_words=english.POLARITY_WORDS,
                   past_words=english.PAST_WORDS, present_words=english.PRESENT_WORDS,
                   future_words=english.FUTURE_WORDS, past_ending=english.PAST_ENDING, not_past=english.NOT_PAST,
                   state_past=english.STATE_PAST, doers=english.DOERS, event_adverbs=english.EVENT_ADVERBS,
                   plain_pasts=english.PLAIN_PASTS, plain_doers=english.PLAIN_DOERS, set_phrases=english.SET_PHRASES,
                   happening_words=english.HAPPENING_WORDS,
                   filler_words=english.FILLER_WORDS,
                   currency_signs=english.CURRENCY_SIGNS, pronoun_forms=english.PRONOUN_FORMS,
                   word_forms=english.WORD_FORMS, auxiliaries=english.AUXILIARIES,
                   passive_auxiliaries=english.PASSIVE_AUXILIARIES, agent_words=english.AGENT_WORDS,
                   verb_forms=english.VERB_FORMS, verb_pasts=english.VERB_PASTS,
                   verb_kin=english.VERB_KIN, modal_words=english.MODAL_WORDS,
                   contractions=english.CONTRACTIONS, possessive_ending=english.POSSESSIVE_ENDING,
                   contraction_hosts=english.CONTRACTION_HOSTS, progressive_ending=english.PROGRESSIVE_ENDING,
                   role_prepositions=english.ROLE_PREPOSITIONS, placed_values=english.PLACED_VALUE_WORDS,
                   fraction_words=tuple(sorted(english.FRACTION_WORDS.items())), one_words=english.ONE_WORDS,
                   clock_words=english.CLOCK_WORDS, one_units=english.ONE_UNITS,
                   measure_leads=english.MEASURE_LEADS, clause_joints=english.CLAUSE_JOINTS,
                   vocabulary=packaged_tokenizer_path())

    # ---- what a text says ------------------------------------------------------

    def cues(self, text: str) -> frozenset[str]:
        """The change cues a text holds, lowercased (empty when it says no change).

        >>> sorted(ENGLISH.cues("I don't go to Ironworks anymore."))
        ['anymore', "n't"]
        """
        return self._derived.cues(text)

    def forget_texts(self) -> None:
        """Drop every text this lexicon and the text readers remember (their memo caches): a
        purge erases a text from the process's memory too, not only from the store."""
        d = self._derived
        for memo in (d.cues, d.identifying, d.marks):
            memo.cache_clear()  # type: ignore[attr-defined]
        forget_read_texts()

    @property
    def modal_terms(self) -> frozenset[str]:
        """The index terms of ``modal_words`` ("planning": "plan"): the content words a modal says."""
        return self._derived.modal_terms

    @property
    def verb_form_hashes(self) -> dict[int, int]:
        """Each of ``verb_forms``' words as ``Marks.sequence`` holds it (memsieve.text.marks.word_hash),
        mapped to its group's first form: "given" and "gave" are one verb."""
        return self._derived.verb_form_hashes

    def with_verb_forms(self, terms: frozenset[str]) -> frozenset[str]:
        """Index terms with every form of each verb of ``verb_pasts`` among them, and of its kin
        (``verb_kin``).

        >>> sorted(ENGLISH.with_verb_forms(frozenset({"buy", "desk"})))
        ['bought', 'buy', 'desk', 'order', 'purchas']
        """
        forms = self._derived.verb_terms
        return terms.union(*(forms[t] for t in terms if t in forms))

    def marks(self, text: str) -> Marks:
        """The value words, denials, currency signs and ordered values of a text
        (memsieve.text.marks.MarkReader): what a memory must share with a text folded into it.

        >>> m = ENGLISH.marks("I'm not at work after 6 pm")
        >>> sorted(m.words), sorted(m.tense)
        (['after', 'not', 'pm'], ['present'])
        """
        return self._derived.marks(text)

    def tells_of_event(self, text: str) -> bool:
        """Whether a text tells of a thing done in the past, which a later one does not replace
        (memsieve.text.events): "I went to a jazz concert", not "I live in Oakland" nor "I moved".

        >>> ENGLISH.tells_of_event("We adopted a cat named Miso.")
        True
        """
        return tells_of_event(text, lambda: self.marks(text), lambda: self.cues(text), self._derived.event_words)

    def tells_of_its_day(self, text: str) -> bool:
        """Whether a text tells of a thing done on the day it is told: an event
        (``tells_of_event``) that does not name its date or year in words. "I went to the gym this
        morning" told on two days is two visits; "I ran the Boston marathon in 2019" told again is
        the same race, which a reader finds in either text, whatever day it was told. The gate
        folds no such text across days, nor does consolidation merge two such memories.

        >>> ENGLISH.tells_of_its_day("I went to the gym this morning."), ENGLISH.tells_of_its_day("I ran a marathon in 2019.")
        (True, False)
        """
        return self.tells_of_event(text) and not names_its_date(text)

    def asks_only_when(self, question: str, phrase: str) -> bool:
        """Whether a question asks about the time its ``phrase`` names and nothing else: none
        of its content words is outside the phrase but the ``happening_words``.

        >>> ENGLISH.asks_only_when("What happened yesterday?", "yesterday")
        True
        >>> ENGLISH.asks_only_when("What concert did I go to last month?", "last month")
        False
        """
        said = set(_core.tokenize(question)) - set(_core.tokenize(phrase))
        return said <= self._derived.happening_terms

    def subject_terms(self, text: str) -> frozenset[str]:
        """The index terms that name who the text is about (memsieve.text.cues.find_subject_terms)."""
        return find_subject_terms(text, relations=self.relations)

    def identifying_values(self, text: str) -> frozenset[str]:
        """The index terms of the numbers and names that say which thing a text is about
        (memsieve.text.cues.find_identifying_values): two texts that differ in one are
        about two things, and neither is a newer version of the other.

        >>> sorted(ENGLISH.identifying_values("Room 101 has the colour printer."))
        ['room 101']
        >>> sorted(ENGLISH.identifying_values("My gate code is 4471."))
        []
        """
        return self._derived.identifying(text)

    def rarity(self, word: str) -> float:
        """A weight in [COMMON_WEIGHT, 1.0] (memsieve.text.rarity): low for common words, 1.0 for rare ones."""
        return self._derived.rarity(word)

    @property
    def rarity_of(self) -> Callable[[str], float]:
        """``rarity`` as the remembered function itself, for a caller that calls it per word (the
        information term, from Rust): no method call in between."""
        return self._derived.rarity

    def speaker_asked(self, question: str) -> str:
        """Whose words a question asks about: ``"assistant"`` or ``"user"`` (memsieve.read.speaker).

        >>> ENGLISH.speaker_asked("What was the restaurant you recommended in Rome?")
        'assistant'
        >>> ENGLISH.speaker_asked("Can you recommend a restaurant in Rome?")
        'user'
        >>> ENGLISH.speaker_asked("In our last chat I mentioned my cat's name; what was it?")
        'user'
        """
        d = self._derived
        folded = fold(question).lower()
        if d.assistant_said is not None and d.assistant_said.search(folded):
            return "assistant"
        if d.user_said is not None and d.user_said.search(folded):
            return "user"
        if d.earlier_chat is not None and d.earlier_chat.search(folded):
            return "assistant"
        return "user"

    # ---- requests to forget ------------------------------------------------------

    def is_forget_request(self, text: str) -> bool:
        """Whether a message asks the memory to forget something (deterministic).

        >>> ENGLISH.is_forget_request("Oh no, please forget what I said about Benedikt.")
        True
        >>> ENGLISH.is_forget_request("Don't forget to water the plants.")
        False
        """
        asks, unless = self._derived.forget_request, self._derived.not_a_forget_request
        if asks is None:
            return False
        folded = fold(text).lower()
        if not asks.search(folded) or (unless is not None and unless.search(folded)):
            return False
        return bool(self.request_clauses(text)[0])  # a question, a complaint, someone else's words ask nothing

    def request_clauses(self, text: str) -> tuple[list[str], list[str]]:
        """A request's clauses that ask to forget, and those that ask not to ("don't forget ...").

        A clause with no verb of its own ("... and my email") goes with the one before it.

        >>> ENGLISH.request_clauses("Don't forget my birthday, forget Tom's")
        (["forget Tom's"], ["Don't forget my birthday"])
        """
        return split_clauses(text, self._derived, is_exception=self.is_exception)

    def is_exception(self, clause: str) -> bool:
        """Whether a request's clause keeps something out of it ("except my birthday", "not my email")."""
        d = self._derived
        return d.request_exception is not None and bool(d.request_exception.search(fold(clause).lower()))

    def conjoined(self, text: str) -> list[str]:
        """A request's parts where it names two of the user's own things ("forget my address and my job")."""
        d = self._derived
        return [p for p in d.request_conjunction.split(text) if p.strip()] if d.request_conjunction else [text]

    def request_terms(self) -> frozenset[str]:
        """The request words as typed and as index terms (stemmed), to drop from a request's subject."""
        return self._derived.request_terms()

    def subject(self, text: str, *, known: Iterable[str] = ()) -> Subject:
        """Whom a text is about (memsieve.text.subjects): the user, a person, or an unnamed other.

        >>> ENGLISH.subject("My mother likes tea with lemon.").terms
        frozenset({'mother'})
        >>> ENGLISH.subject("I like tea.").who
        'user'

        Args:
            known: lowercased names known to be people's (from the request, or beside a relation word).
        """
        d = self._derived
        return find_subject(text, self_words=self.self_words, possessives=self.self_possessives,
                            other_pronouns=self.other_pronouns, relations=d.persons, known=known,
                            aliases=dict(self.relation_aliases))

    def request_subject(self, text: str) -> tuple[str, Subject]:
        """A request's subject text (its opening and framing cut) and whom it is about.

        >>> ENGLISH.request_subject("Please forget what I told you about my brother's job")[1].terms
        frozenset({'brother'})
        """
        rest = cut_framing(text, self._derived, own_words=self.relations | self.companions | self.self_words
                           | self.determiners | self.request_words)
        known = {s for _, s, kind in _core.tokenize_kinds(text) if kind == "name"}
        known = {w[:-2] if w.endswith("'s") else w.rstrip("'") for w in known} | self.relation_names(text)
        about = self.subject(rest, known=known)
        if about.who == "person" and not about.sure:  # a capitalized word the user asks about is a person
            about = Subject(who="person", terms=about.terms, names=about.names, own=about.own,
                            people=about.people | about.names, chain=about.chain)
        return rest, about

    def relation_names(self, text: str) -> frozenset[str]:
        """The names a text gives people beside a relation word ("my cousin Aisha" -> {"aisha"}), lowercased."""
        return relation_names(text, relations=self._derived.persons, possessives=self.self_possessives)

    def stated_facts(self, text: str) -> frozenset[str]:
        """The index terms of the facts ``text`` states by a ``fact_statements`` expression ("Leo works
        as a chef" -> {"job"}); empty when it states none so."""
        return self._derived.stated_facts(text)

    def asks_broadly(self, text: str) -> bool:
        """Whether a request asks for everything about its subject ("forget everything about my trip")."""
        return any(w in self.broad_words for w in words(text))

    def asks_for_old(self, text: str) -> bool:
        """Whether a request asks for the older version of a fact ("forget my old address")."""
        # Read from the raw words, each part of a contraction on its own: the index
        # drops some of these as stopwords ("before"), and "old's" still says "old".
        return any(part in self.old_words for w in words(text) for part in w.split("'"))


#: The default lexicon: English, with MiniLM's vocabulary as the rarity prior.
ENGLISH = Lexicon.english()


def check_lexicon(lexicon: Any) -> Lexicon:
    """``lexicon`` itself if it is a Lexicon.

    Raises:
        ConfigError: it is anything else.
    """
    if not isinstance(lexicon, Lexicon):
        raise ConfigError(f"lexicon must be a memsieve.text.Lexicon, got {type(lexicon).__name__}; "
                          f"use memsieve.text.ENGLISH or build one with Lexicon(name=..., cues=...)")
    return lexicon
