"""A request to forget, read: what it asks to forget and of whom (``ForgetQuery``).

Rules 0 and 1 of memsieve.write.forgetting: a clause that asks *not* to forget, or takes back
what came before, is left out; the request's opening, framing and own words are cut, and what is
left are its subject terms, tokenized and stemmed as the keyword index does, with whom it is
about, the values it gives, and whether it asks for the old version or for everything about its
subject. Which memories a query names is memsieve.write.forgetting's.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

import memsieve._core as _core
from memsieve.text.lexicon import ENGLISH, Lexicon
from memsieve.text.subjects import USER, Subject, name_words, says_name


@dataclass(frozen=True)
class ForgetQuery:
    """A request to forget, reduced to what it is about.

    Attributes:
        terms: the subject terms (index tokens), request words removed.
        wants_old: the request asks for the older version(s) only.
        subject: the subject as text, for embedding.
        about: whom the request is about (the user unless it names someone).
        values: (term, kind) of the request's values: its numbers, dates and names (rule 5).
        person_only: the request names a person and nothing else ("everything about Oskar").
        declined: the request only asks *not* to forget ("don't forget my birthday"): it names nothing.
        name_words: the request's names as typed, lowercased ("mark"): a memory gives the person only by
            the name itself, capitalized ("Mark", not "marking" nor a good "mark").
        request: the words the query was read from.
        lexicon: the language it was read in, which reads the memories' subjects too.
    """

    terms: tuple[str, ...]
    wants_old: bool
    subject: str
    about: Subject = USER
    person_only: bool = False
    values: tuple[tuple[str, str], ...] = ()
    declined: bool = False
    name_words: frozenset[str] = frozenset()
    request: str = ""
    broad: bool = False
    lexicon: Lexicon = field(default=ENGLISH, compare=False, repr=False)

    @property
    def what_terms(self) -> tuple[str, ...]:
        """The terms that say what is to be forgotten: a named person's own terms left out, unless they are all."""
        if self.about.who != "person" or self.person_only:
            return self.terms
        person = _person_terms(self.about, self.lexicon)
        return tuple(t for t in self.terms if t not in person)

    def forms_of(self, term: str) -> set[str]:
        """A term and the index terms of the relation words that name the same person ("mum": mother, mom)."""
        pairs = _alias_terms(self.lexicon.relation_aliases)
        person = next((relation for word, relation in pairs if term in (word, relation)), None)
        if person is None:
            return {term}
        return {term, person, *(word for word, relation in pairs if relation == person)}

    def near_miss(self, text: str) -> bool:
        """Whether the memory holds another value where the request's is missing ("on Friday" for "on Monday")."""
        wanted = [(t, k) for t, k in self.values if t not in self.about.terms]
        if not wanted:
            return False
        held: dict[str, set[str]] = {}
        for term, _, kind in _core.tokenize_kinds(text):
            held.setdefault(kind, set()).add(term)
        asked, every = {t for t, _ in self.values}, set().union(*held.values())
        # (presence is of any kind: a name that opens a sentence is read as a plain word)
        return any(t not in every and held.get(k, set()) - asked for t, k in wanted)

    def scoped(self, holds: Callable[[str], bool]) -> "ForgetQuery":
        """The query in a scope (``holds``: whether some memory holds a term): ``person_only`` when the
        person is all of its terms. A word no memory holds still counts: "forget my sister's job" asks
        for a job, which no memory gives her, not for everything about her (the request's padding,
        "oh gosh", is cut before its terms are read)."""
        if self.about.who != "person":
            return self
        return replace(self, person_only=bool(self.terms) and set(self.terms) <= _person_terms(self.about,
                                                                                                self.lexicon))

    def allows(self, text: str, terms: Collection[str], *, known: Collection[str] = ()) -> bool:
        """Whether a memory (its text and index terms) is about whom the request is (rule 4).

        Args:
            known: lowercased names known to be people's in the scope.
        """
        if self.near_miss(text):
            return False
        about = self.about
        if not self.lexicon.self_words:
            return True  # a lexicon that cannot tell the user from others names by the words alone
        mine = self.lexicon.subject(text, known={*known, *about.names})
        if about.who == "user":
            return mine.who == "user" or not mine.sure
        if about.who == "other":
            return mine.who != "user"
        if self.person_only:
            if about.names:
                return self._names_the_person(text, terms, mine)
            return bool(about.terms & mine.own)  # "my boss", not "my wife's boss"
        if mine.who != "person":
            return False
        if about.names and mine.names:
            return bool(about.names & mine.names) and self._names_the_person(text, terms, mine, exact=True)
        if about.terms & about.own and not about.terms & mine.own and mine.own:
            return False  # "my sister" asked: "my wife's sister" is the wife's, not the user's own sister
        return bool(about.terms & mine.terms)

    def _names_the_person(self, text: str, terms: Collection[str], mine: Subject, *, exact: bool = False) -> bool:
        """Whether a memory gives the request's named person, and the same one of theirs ("Tom's dog").

        The name must be said as a name (memsieve.text.subjects.says_name). A request for what a name
        owns ("Tom's dog") spares what the name owns otherwise ("Tom's brother's dog") and the name
        alone ("Tom lives in Leeds"); a memory whose subject says no such link ("Tom has a dog")
        must hold the words of it. ``exact``: a request for a thing of the person's ("Omar's car")
        spares the same thing of someone the person owns ("Omar's father's car").
        """
        about = self.about
        if not says_name(text, self.name_words or about.names):
            return False
        if exact and mine.names & about.names and mine.chain != about.chain and mine.chain:
            return False  # "Omar's car" asked: "Omar's father's car" is the father's
        if not about.chain:
            return True
        if mine.names & about.names and mine.chain:
            return mine.chain == about.chain
        return set(about.chain) <= set(terms)


def parse_request(what: str, *, lexicon: Lexicon = ENGLISH) -> ForgetQuery:
    """Split a request to forget into its subject terms and whether it asks for old versions.

    A clause that asks *not* to forget ("don't forget my birthday") is left out
    (rule 0); a request that only asks that names nothing. What a kept clause
    leaves unsaid it takes from the declined one: in "don't forget my
    birthday, forget Tom's", Tom's birthday.

    Args:
        what: the request, or just what to forget.
        lexicon: the language of the request: its request words and old-version words.
    """
    asking, keeping = lexicon.request_clauses(what)
    if keeping and not asking:
        return ForgetQuery(terms=(), wants_old=False, subject=what, declined=True, lexicon=lexicon)
    query = _parse_clause(" ".join(asking) if keeping else what, lexicon)
    lending = [c for c in keeping if not lexicon.is_exception(c)]  # "except my birthday" lends nothing
    if lending and (query.person_only or not query.terms):
        declined = _parse_clause(" ".join(lending), lexicon)
        extra = tuple(t for t in declined.what_terms if t not in query.terms and t not in query.about.terms)
        query = replace(query, terms=query.terms + extra, person_only=False,
                        subject=" ".join([query.subject, *extra]) if query.terms else " ".join(extra) or what,
                        values=query.values + tuple(v for v in declined.values if v[0] in extra))
    return replace(query, request=what)


def with_names(query: ForgetQuery, people: Collection[str]) -> ForgetQuery:
    """The query read again with the words that are people's names in the scope capitalized, when it was
    read as the user's own: "forget where carlos lives", typed in lower case beside "My friend Carlos
    lives in Lima", is about Carlos, not about where the user lives.

    Args:
        people: index terms of names the scope's memories give people (memsieve.text.subjects.Subject.people).
    """
    if query.about.who != "user" or query.declined or not query.request:
        return query
    typed = set(query.terms) & set(people)
    if not typed:
        return query

    def capitalized(m: re.Match[str]) -> str:
        word = m.group(0)
        base = word[:-2] if word.endswith("'s") else word
        found = _core.tokenize(base)
        return word[:1].upper() + word[1:] if found and found[0] in typed else word

    return parse_request(re.sub(r"\b[a-z][\w']*", capitalized, query.request), lexicon=query.lexicon)


def parse_requests(what: str, *, lexicon: Lexicon = ENGLISH) -> list[ForgetQuery]:
    """A request to forget as one query per thing it names: "forget my address and my job" is two.

    Split only where each side is a thing of the user's own ("my ...") that names something by itself; a
    side that is a person alone ("forget my mom and my dad's anniversary") or says nothing, a request
    with a clause that asks to keep, and any other "and" ("the name and the number of my dentist") keep
    the request whole, as ``parse_request`` reads it.
    """
    whole = parse_request(what, lexicon=lexicon)
    if whole.declined or lexicon.request_clauses(what)[1]:
        return [whole]
    parts = lexicon.conjoined(what)
    if len(parts) < 2:
        return [whole]
    queries = [parse_request(p, lexicon=lexicon) for p in parts]
    if any(q.declined or q.person_only or not q.terms or q.about.who == "person" for q in queries):
        return [whole]
    return queries


@functools.lru_cache(maxsize=8)
def _alias_terms(aliases: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The lexicon's relation aliases as index terms ("mum" -> "mum", "mother" -> "mother")."""
    return tuple(((_core.tokenize(w) or [w])[0], (_core.tokenize(r) or [r])[0]) for w, r in aliases)


def _person_terms(about: Subject, lexicon: Lexicon = ENGLISH) -> set[str]:
    """The index terms that name a request's person: a compound relation ("ex-wife") is one term of the
    subject reading's, and its parts ("ex", "wife") are the request's own index terms for it; so are
    the words that name the same person ("mom" for the subject's "mother")."""
    aliases = [_core.tokenize(word) for word, relation in lexicon.relation_aliases if relation in about.terms]
    return set(about.terms).union(*(_core.tokenize(t) for t in about.terms if "-" in t), *aliases)


def _parse_clause(what: str, lexicon: Lexicon) -> ForgetQuery:
    """One request's subject terms, read from what follows its asking (opening and framing cut)."""
    request = lexicon.request_terms()
    wants_old = lexicon.asks_for_old(what)
    rest, about = lexicon.request_subject(what)
    terms: list[str] = []
    surfaces: list[str] = []
    values: list[tuple[str, str]] = []
    for term, surface, kind in _core.tokenize_kinds(rest):
        if term in request or surface in request or surface in lexicon.old_words or term in terms:
            continue
        terms.append(term)
        surfaces.append(surface)
        if kind in ("number", "name"):
            values.append((term, kind))
    if about.who == "person" and not _person_terms(about, lexicon) & set(terms):
        about = USER  # the "person" was a word of the asking ("Bitte ..."), not of the subject
    person_only = about.who == "person" and bool(terms) and set(terms) <= _person_terms(about, lexicon)
    return ForgetQuery(terms=tuple(terms), wants_old=wants_old, subject=" ".join(surfaces) or what, about=about,
                       person_only=person_only, values=tuple(values), name_words=name_words(rest, about.names),
                       broad=lexicon.asks_broadly(what), lexicon=lexicon)
