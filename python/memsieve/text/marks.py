"""What a text says that its content words do not show, and whether it restates a memory.

The keyword index keeps content words. A text folded into a memory (a gate
NOOP) must lose nothing, yet some changes are invisible to the index: a value
its stopwords state ("once" / "twice", "9 am" / "9 pm"), a denial, a tense, a
currency sign, values said in another order, a pronoun turned from doer to
receiver. ``Marks`` holds those of one text (``Lexicon.marks`` reads them with
a lexicon's words), and memsieve.text.unmarked says what folding one text into
a memory would leave unsaid.

Whether a text that lines up with a memory changes it in place is
memsieve.text.aligned's to say.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from array import array
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import memsieve._core as _core
from memsieve.text.amounts import amounts, measures_of_one
from memsieve.text.contractions import Contractions
from memsieve.text.cues import digits, value_tokens
from memsieve.text.fold import fold
from memsieve.text.fold import forget_texts as forget_folds
from memsieve.text.voice import Doer, VoiceReader
from memsieve.text.when_told import dates_past, time_phrases


@dataclass(frozen=True, slots=True)
class Marks:
    """What a text says that its content words do not show: the marks a memory must share with a
    text folded into it (memsieve.gate.profiles.kde).

    Attributes:
        words: the lexicon's value and polarity words the text says, contractions read as their
            words ("don't": "not"), and the currency signs it holds.
        polarity: the polarity words among them ("not", "never", "without").
        tense: the tenses its verbs put it in ("past", "present"; empty: it says none).
        values: the index terms of its numbers, names and dates, in the order it says them,
            each as ``(class, term)``: a number with a digit, a day or month word, a name.
        sequence: its folded words in order, each as the hash of its index term (8 bytes a
            word, not the text): what ``changed_in_place`` aligns.
        roles: the pronouns it says that name a doer, a receiver or an owner, each as
            ``(group, form)`` (``("i/me/my", "me")``): "I owe my brother" and "my brother owes
            me" say the same words but for the form of one pronoun.
        doers: each verb a short text says once, with its doer's hash and how it says the verb,
            in the active, the passive or as a state (memsieve.text.voice): "I was hired by Ben" /
            "I hired Ben", "I'm worried about my dad" / "my dad is worried about me".
        modal: the lexicon's modal words and phrases it says ("planning", "going to"): it
            tells of a plan, a wish, a try or a near miss, not of a thing done.
        speakers: the hashes of the speaker's pronoun groups it says ("i/me/my", "we/us/our"):
            the persons whom another doer may trade places with ("I'm knitting a scarf for my
            grandmother" / "my grandmother is knitting a scarf for me"). "He" and "she" are
            none: they name someone the text names too ("Tim says he enjoys ...").
        people: the hashes of the index terms that name someone else: a relation word
            ("grandmother", "boss"), a companion ("dog") or a name. "My work starts at 8:30"
            restates "I start work at 8:30": work is no one.
        denials: how many times it says a polarity word: a long text that lines up with a
            memory and drops one of its several denials ("he doesn't qualify" / "he does
            qualify", a "not" said elsewhere in both) says the opposite there.
        owners: where in ``sequence`` it names an owner by the possessive ending ("my friend's
            son": 2): "my son" folded into it would become the friend's.
        written: its words that hold a digit, or short words with a sign, as written (NFC;
            case, compatibility forms and signs kept): the index reads "Tr0ub4dor" as
            "tr0ub4dor", "10⁵" as "105" and "O-" as "O+", which are other values.
        terms: one byte per word of ``sequence``, 1 where the index keeps the word (a content
            word), 0 for a stopword: a filler put in a content word's place changes it ("the
            left side" / "the right side").
        clauses: one byte per word of ``sequence``, the index of the clause that says it (a
            sentence's end or a joining word such as "and" starts the next; at most 255):
            "my brother lives in Denver and my sister lives in Austin" says Austin of the
            sister (memsieve.text.clauses). Empty for a text that says no values.
    """

    words: frozenset[str]
    polarity: frozenset[str]
    tense: frozenset[str]
    values: tuple[tuple[str, str], ...]
    sequence: array = field(default_factory=lambda: array("q"), compare=False)
    roles: frozenset[tuple[str, str]] = frozenset()
    doers: tuple[Doer, ...] = ()
    modal: frozenset[str] = frozenset()
    speakers: frozenset[int] = frozenset()
    people: frozenset[int] = frozenset()
    denials: int = 0
    owners: tuple[int, ...] = ()
    written: frozenset[str] = frozenset()
    terms: bytes = b""
    clauses: bytes = b""


#: The empty set every Marks with nothing of a kind shares (an empty frozenset is no singleton).
_NONE: frozenset = frozenset()
#: The marks of a text that says none.
NO_MARKS = Marks(words=frozenset(), polarity=frozenset(), tense=frozenset(), values=())


class MarkReader:
    """Reads the ``Marks`` of texts with one lexicon's words (``Lexicon.marks`` holds one).

    >>> read = MarkReader(value_words={"twice"}, polarity_words={"not"}, tenses={"present": {"is"}},
    ...                   currency_signs="$", contractions=["n't/not", "'s/is"], possessive_ending="'s",
    ...                   contraction_hosts={"it"})
    >>> m = read("I don't go twice a week; it's $5.")
    >>> sorted(m.words), sorted(m.polarity), sorted(m.tense), m.values
    (['$', 'not', 'twice'], ['not'], ['present'], (('number', 'twice'), ('number', '5')))
    """

    def __init__(self, *, value_words: Collection[str], polarity_words: Collection[str],
                 tenses: Mapping[str, Collection[str]], currency_signs: str, past_ending: str = "",
                 not_past: Collection[str] = (), pronoun_forms: Collection[str] = (),
                 word_forms: Collection[str] = (), auxiliaries: Collection[str] = (),
                 passive_auxiliaries: Collection[str] = (), agent_words: Collection[str] = (),
                 verb_forms: Collection[str] = (), determiners: Collection[str] = (),
                 modal_words: Collection[str] = (), contractions: Collection[str] = (),
                 possessive_ending: str = "", contraction_hosts: Collection[str] = (),
                 progressive_ending: str = "", self_words: Collection[str] = (),
                 person_words: Collection[str] = (), fractions: Mapping[str, float] | None = None,
                 ones: Collection[str] = (), clock_words: Collection[str] = (),
                 one_units: Collection[str] = (), measure_leads: Collection[str] = (),
                 clause_joints: Collection[str] = ()) -> None:
        self.value_words, self.polarity_words = frozenset(value_words), frozenset(polarity_words)
        # "a pound and a half": an amount the index reads as the words "pound" and "half".
        self.fractions, self.ones, self.clock_words = dict(fractions or {}), frozenset(ones), frozenset(clock_words)
        # "for an hour": a measure of one the index reads as the unit alone.
        self.one_units, self.measure_leads = frozenset(one_units), frozenset(measure_leads)
        self.clause_joints = frozenset(clause_joints)
        # "i/me/my": each form of a pronoun, doer, receiver or owner, mapped to its group.
        self.role_of = {form: group for group in pronoun_forms for form in group.split("/")}
        self.role_words = frozenset(self.role_of)
        # As index terms, so that "neighbours" names a neighbour.
        self.person_terms = frozenset(hash(_term_of(w)) for w in person_words)
        self.speaker_groups = frozenset(g for g in pronoun_forms if g.split("/")[0] in frozenset(self_words))
        # A capitalized word opening a sentence before one of these names its subject ("Marcus was").
        self.opener_verbs = frozenset(auxiliaries) | frozenset(passive_auxiliaries)
        # "a/an": forms of one word that the next word's sound chooses, aligned as the first.
        self.form_of = {form: group.split("/")[0] for group in word_forms for form in group.split("/")[1:]}
        self.tense_of: dict[str, tuple[str, ...]] = {}
        for name, verbs in tenses.items():
            for verb in verbs:
                self.tense_of[verb] = (*self.tense_of.get(verb, ()), name)
        self.currency_signs, self.past_ending, self.not_past = currency_signs, past_ending, frozenset(not_past)
        # A modal phrase ("going to") is found at its second word.
        self.modal_words = frozenset(w for w in modal_words if " " not in w)
        self.modal_phrases = frozenset(w for w in modal_words if " " in w)
        # The words that can mark; most words are none of them and are passed over with one lookup.
        self.marking = (self.value_words | self.polarity_words | frozenset(self.tense_of) | self.role_words
                        | self.modal_words | frozenset(p.split()[-1] for p in self.modal_phrases))
        participle_of = {form: group.split("/")[0] for group in verb_forms for form in group.split("/")[1:]}
        self.contractions = Contractions(contractions, possessive_ending=possessive_ending,
                                         hosts=contraction_hosts)
        self.voice = VoiceReader(auxiliaries=auxiliaries, passive_auxiliaries=passive_auxiliaries, agent_words=agent_words,
                                 contractions=self.contractions, progressive_ending=progressive_ending,
                                 verb_of=participle_of, determiners=determiners,
                                 role_of=self.role_of, owner_forms={g.split("/")[2] for g in pronoun_forms
                                                                    if g.count("/") >= 2},
                                 term_of=_term_or_none)

    def __call__(self, text: str) -> Marks:
        said: set[str] = set()
        tense: set[str] = set()
        roles: set[tuple[str, str]] = set()
        modal: set[str] = set()
        denials = 0
        value_words, polarity_words, tense_of = self.value_words, self.polarity_words, self.tense_of
        ending = self.past_ending
        sequence = sequence_words(text)
        owners = tuple(k for k, w in enumerate(sequence) if self.contractions.is_possessive(w)) if "'" in text else ()
        previous = ""
        for w in sequence:
            last, previous = previous, w
            if w not in self.marking and "'" not in w and not (ending and w.endswith(ending)):
                continue
            pair = f"{self.contractions.reading(last)} {w}"
            # "I've got 3 siblings" says what one has now, as "I have 3 siblings" does.
            if pair in self.not_past:
                continue
            if w in self.modal_words:
                modal.add(w)
            elif pair in self.modal_phrases:  # "i'd like": "would like"
                modal.add(pair)
            # A word that is both a value and a verb ("9 am" / "I am") is the value after a number only.
            if w in value_words and w in tense_of and not digits(last):
                tense.update(tense_of[w])
                continue
            split = self.contractions.split(w)
            parts = list(split) if split else [w]
            # A contraction's second part ("i'm": "am") is a verb or a denial, never the "am" of "9 am".
            for k, p in enumerate(parts):
                if (k == 0 and p in value_words) or p in polarity_words:
                    said.add(p)
                denials += p in polarity_words
                if k == 0 and p in self.role_words:
                    roles.add((self.role_of[p], p))
                if p in tense_of and not (k == 0 and p in value_words):
                    tense.update(tense_of[p])
            if ending and len(w) > len(ending) + 2 and w.endswith(ending) and w not in self.not_past:
                tense.add("past")
        said.update(c for c in self.currency_signs if c in text)
        if self.fractions and not self.fractions.keys().isdisjoint(sequence):
            said.update(amounts(sequence, fractions=self.fractions, ones=self.ones, times=self.clock_words))
        if self.one_units and not self.one_units.isdisjoint(sequence):
            said.update(measures_of_one(sequence, ones=self.ones, units=self.one_units, leads=self.measure_leads))
        values = tuple((_value_class(term, kind), term) for term, _, kind in value_tokens(text) if kind != "word")
        hashes = array("q", [hash(_term_of(self.form_of.get(w, w))) for w in sequence])
        people = (self.person_terms.intersection(hashes) | frozenset(hash(t) for c, t in values if c == "name")
                  | _opener_names(text, self.opener_verbs))
        # A cached gate holds one Marks per memory, and most of its sets are empty: they share one.
        return Marks(words=frozenset(said) or _NONE,
                     polarity=frozenset(w for w in said if w in polarity_words) or _NONE,
                     tense=frozenset(tense) or _NONE, values=values,
                     sequence=hashes,
                     roles=frozenset(roles) or _NONE,
                     doers=self.voice(sequence) if len(sequence) <= MAX_SWAP_WORDS else (),
                     modal=frozenset(modal) or _NONE,
                     speakers=frozenset(hash(g) for g, _ in roles if g in self.speaker_groups) or _NONE,
                     people=people or _NONE,
                     denials=denials, owners=owners, written=written_values(text),
                     terms=bytes(is_term(w) for w in sequence),
                     # Only a text that says values has clauses to read (memsieve.text.clauses).
                     clauses=clause_ids(text, self.clause_joints) if self.clause_joints and values else b"")


_WORD_EDGES = "\"'.,;:!?()[]{}<>«»“”‘’"
#: A decimal digit, or a superscript, subscript or vulgar-fraction one (which NFKC turns into digits).
_HAS_DIGIT = re.compile(r"[\d\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089\u2150-\u215f]")


#: A short word with a sign the index drops: a grade or a blood group ("B+", "O-"), a language ("C++", "C#").
_SIGNED_WORD = re.compile(r"[^\W\d_]{1,3}(?:\+\+|[+#\u2212-])")
_SIGNS = "+-#\u2212\u00b1"
#: A capital letter standing alone inside a sentence, after a word or a comma: a grade, a vitamin,
#: a plan ("an A in calculus", "vitamin D", "plan B"). "I" is the speaker; a letter opening a
#: sentence is read as the article "A".
_LETTER = re.compile(r"[\w,][ \t]+([A-HJ-Z])(?![\w'\u2019+#\u2212-])")


def written_values(text: str) -> frozenset[str]:
    """The words of ``text`` that hold a digit (superscripts and fractions too), are a short word
    with a sign ("O+", "C#"), or a capital letter alone inside a sentence ("an A"), as written
    (NFC): values the index reads alike when they differ, or does not read.

    >>> sorted(written_values("My code is Tr0ub4dor, the count 10⁵ per ml, it was -5 and I got a B+."))
    ['-5', '10⁵', 'B+', 'Tr0ub4dor']
    >>> sorted(written_values("A week ago I got an A in calculus"))
    ['A']
    """
    letters = frozenset(_LETTER.findall(text)) if _LETTER.search(text) else _NONE
    if not _HAS_DIGIT.search(text) and not _SIGNED_WORD.search(text):
        return letters
    words = (w.strip(_WORD_EDGES) for w in unicodedata.normalize("NFC", text).split())
    return frozenset(w for w in words if _HAS_DIGIT.search(w) or _SIGNED_WORD.fullmatch(w)) | letters or _NONE


def unread_values(text: frozenset[str], memory: frozenset[str]) -> list[str]:
    """The text's written values without a digit (a grade, a letter: "A-", "A") that the memory
    says in no writing: the index drops them ("a" is a stopword) or reads "A-" as "a", so nothing
    else sees that "I got an A-" is not "I got a B+".

    >>> unread_values(frozenset({"A-"}), frozenset({"B+"}))
    ['A-']
    >>> unread_values(frozenset({"B"}), frozenset({"B+"}))
    []
    """
    if not text:
        return []
    keys = {_value_key(w) for w in memory}
    return [w for w in sorted(text - memory) if not _HAS_DIGIT.search(w) and _value_key(w) not in keys]


def _value_key(word: str) -> str:
    """What the index and exact dedup read a written value as: compatibility forms, case and signs folded."""
    return unicodedata.normalize("NFKC", word).casefold().strip(_SIGNS)


def rewritten_values(text: frozenset[str], memory: frozenset[str]) -> list[tuple[str, str]]:
    """(the text's word, the memory's) for each written value the two write differently but that
    reads the same once case, compatibility forms and signs are folded ("tr0ub4dor" / "Tr0ub4dor",
    "105" / "10⁵", "-5" / "5", "O-" / "O+"): the index and exact dedup see one value where there
    are two.

    >>> rewritten_values(frozenset({"tr0ub4dor"}), frozenset({"Tr0ub4dor", "42"}))
    [('tr0ub4dor', 'Tr0ub4dor')]
    """
    if not text or not memory:
        return []
    folded = {_value_key(w): w for w in sorted(memory)}
    return [(w, folded[k]) for w in sorted(text - memory) if (k := _value_key(w)) in folded and folded[k] != w]


@functools.lru_cache(maxsize=65536)
def _term_of(word: str) -> str:
    """A word as the index reads it ("three" and "3" are one term), or as typed if it has none."""
    terms = _core.tokenize(word)
    return terms[0] if terms else word


#: A capitalized word that opens the text, a sentence of it, or what a speaker's label before a
#: colon introduces ("Ana: Marcus was laid off"), and the word after it.
_OPENER = re.compile(r"(?:^(?:[^\W\d_][^\W_]*\s*:\s*)?|[.!?]\s+|\n\s*)([^\W\d_][^\W_]*)\s+([\w']+)")


def _opener_names(text: str, auxiliaries: Collection[str]) -> frozenset[int]:
    """The hashes of the capitalized content words that open the text's sentences before an
    auxiliary or a form of "be": the index reads a capitalized word as a name only mid-sentence,
    but "Marcus was hired" and "Jess has been married" name their subjects first. A word
    before anything else is left alone ("Sounds great!", "Missing that trip"), and so is a
    speaker's label, before a colon ("Audrey: I can't wait" is Audrey's own "I").

    >>> aux = {"was", "has", "is"}
    >>> _opener_names("Marcus was hired. The office is in Leeds", aux) == frozenset({hash(_term_of("marcus"))})
    True
    >>> _opener_names("Audrey: Sounds great! Missing that trip.", aux)
    frozenset()
    >>> _opener_names("Ana: Marcus was laid off.", aux) == frozenset({hash(_term_of("marcus"))})
    True
    """
    return frozenset(hash(_term_of(w.lower())) for w, after in _OPENER.findall(fold(text))
                     if after.lower() in auxiliaries and w[:1].isupper() and not w.isupper()
                     and is_term(w.lower()))


def word_hash(word: str) -> int:
    """What ``Marks.sequence`` holds for a folded word: the hash of its index term (of the word
    itself for a stopword)."""
    return hash(_term_of(word))


@functools.lru_cache(maxsize=8)
def word_hashes(words: frozenset[str]) -> frozenset[int]:
    """What ``Marks.sequence`` holds for each of a set of a lexicon's words (``word_hash``), remembered."""
    return frozenset(word_hash(w) for w in words)


def _term_or_none(word: str) -> str:
    """A word's index term, or "" for a word the index drops (a stopword)."""
    return _term_of(word) if is_term(word) else ""


def sequence_words(text: str) -> list[str]:
    """A text's folded, lowercased words in order, as ``Marks.sequence`` aligns them: a word of
    letters and digits, and each character of a script written without spaces (kana, CJK, Hangul).

    >>> sequence_words("My cat's name is Tama (私の猫).")
    ['my', "cat's", 'name', 'is', 'tama', '私', 'の', '猫']
    """
    return _SEQUENCE_WORD.findall(fold(text).lower())


_SEQUENCE_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
                            r"|[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
                            r"(?:[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|'(?=\w))*")


#: Where a clause ends between two words: a sentence's end, a semicolon or a colon before a space, a line.
_CLAUSE_END = re.compile(r"[.!?;:](?=\s)|\n")


def clause_ids(text: str, joints: Collection[str]) -> bytes:
    """For each word of ``sequence_words(text)``, the index of the clause that says it (``Marks.clauses``).

    A clause ends at a sentence's end, a semicolon, a colon or a line's end, and a joining word
    (``joints``: "and", "but") opens the next. A decimal point ("3.5") or a clock's colon
    ("8:30") ends nothing. Indexes stop at 255.

    >>> list(clause_ids("Breakfast is at 8:30 and dinner at 6. I cook.", {"and"}))
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    """
    low = fold(text).lower()
    out = bytearray()
    clause, end = 0, 0
    for m in _SEQUENCE_WORD.finditer(low):
        if _CLAUSE_END.search(low, end, m.start()) or m.group() in joints:
            clause += 1
        out.append(min(clause, 255))
        end = m.end()
    return bytes(out)


#: Texts of at most this many words are read for their doers and checked for two words that
#: swapped places (memsieve.text.aligned).
MAX_SWAP_WORDS = 80


@functools.lru_cache(maxsize=65536)
def is_term(word: str) -> bool:
    """Whether the index keeps ``word`` (a content word, not a stopword)."""
    return bool(_core.tokenize(word))


# The index terms of the day and month names, which the tokenizer calls numbers: a class of
# their own, so that "March 3rd" and "the 3rd of March" say their number and day in one order.
_DAY_TERMS = frozenset(_core.tokenize("January February March April May June July August September October "
                                      "November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday"))


def _value_class(term: str, kind: str) -> str:
    if kind == "name":
        return "name"
    return "day" if term in _DAY_TERMS else "number"


def forget_texts() -> None:
    """Clear the memo caches keyed by texts: the folding, the tokens, the dating phrases, the words."""
    forget_folds()
    time_phrases.cache_clear()  # type: ignore[attr-defined]
    dates_past.cache_clear()  # type: ignore[attr-defined]
    value_tokens.cache_clear()
    _term_of.cache_clear()
    is_term.cache_clear()
