"""Which memories a request to forget names, decided without an LLM.

``Memory.forget("please forget my old address", user_id=...)`` must find the
memories the request is about. The rule is deterministic and explainable:

0. A clause that asks *not* to forget ("don't forget my birthday", "I don't
   want you to delete ...", "remember my birthday", "forgetting it would be
   terrible") is left out, and one that takes back what came before ("no
   wait, keep it") leaves out the clauses before it; a request of only such
   clauses names nothing.
   What an asking clause leaves unsaid it takes from the declined one: "don't
   forget my birthday, forget Tom's" asks for Tom's birthday.
1. The request's opening and framing ("could you please forget", "what I told
   you about") are cut, and its own words (the lexicon's request words: please,
   everything, thanks, oh, ...) dropped; what is left are the *subject terms*,
   tokenized and stemmed as the keyword index does.
2. A memory is named when its terms cover at least ``min_coverage`` of the
   subject terms, weighted by the scope's IDF, so a rare name ("Marco") or
   number decides and a common word ("number") does not. A term no memory of
   the scope holds weighs the most: the request asks for something the scope
   does not have ("my passport number" where only the phone number is
   stored), which a memory holding the request's other words is not. A
   memory also holds the nouns of the facts it states in the lexicon's plain
   ways (``fact_statements``): "Leo works as a chef" holds "job", "My sister
   lives in Austin" "address" ("I work out" states no job).
3. When no memory covers the subject terms (the request paraphrases: "my old
   employer" for "I used to work at ..."), the memory nearest in meaning is
   named if its cosine reaches ``min_cosine``, among the memories that hold
   one of the words of what is asked when the scope holds any of them (and
   always, for another person's fact: "my sister's email" is not her phone
   number, however near the two are in meaning).
4. A request is about its subject (the lexicon's reading of whom a text is
   about, memsieve.text.subjects): the user's own facts, unless it names
   another person ("my mother", "Anna", "her"), then only that person's. A
   memory is named only if its own subject agrees: "forget that I like tea"
   spares "My mother likes tea with lemon", "forget where my brother lives"
   spares the sister's home and "My brother works at a shipyard" (the
   person's terms say whom, the rest of the request what: coverage is of
   the rest). A memory that opens with a word read as a possible name ("Tom
   drives a red Fiat") may be the user's fact written without "I"; beside a
   memory that is surely the user's, it is not. A request that is only a person ("everything about Oskar")
   names every memory that gives that person by name, or as the user's own
   relation ("my boss", not "my wife's boss"). A name is matched as a name
   ("Mark", not "marking" nor a good "mark"); a compound relation is its own
   person ("my mother" spares "my mother-in-law", "my wife" the "ex-wife");
   what a name owns is not the name ("Tom's dog" spares "Tom lives in Leeds"
   and "Tom's brother's dog").
5. A value the request gives (a number, a date, a weekday, a name) that a
   memory lacks while it holds another of that kind marks a near miss:
   "forget my dentist appointment on Monday" spares the one on Friday.
6. A request for the *old* or *previous* value ("forget my old address"; the
   lexicon's old-version words) names the older versions of the matched fact
   and spares the newest one: the versions are the matched memories' groups
   (linked by the write path, or near-duplicates).
7. Where a memory says all a request of several words asks ("my Tuesday yoga
   class"), one that says part of it ("my pottery class is on Tuesdays") is
   another fact sharing a word and stays, unless the write path linked it to
   one that says it all, or the request asks for everything about it (the
   lexicon's ``broad_words``: "everything about my yoga class").
8. A request that names a fact and no value of it ("my sister's phone
   number") takes the versions the write path linked to what it names (her
   new number, an update of the old), of the same person; one that names a
   value ("that I moved to Berlin") takes that version only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import memsieve._core as _core
from memsieve.text.lexicon import Lexicon
from memsieve.write.forget_request import ForgetQuery, parse_request, parse_requests, with_names

__all__ = ["ForgetQuery", "Forgotten", "SubjectFilter", "choose", "coverage", "named_folds", "named_memories",
           "parse_request", "parse_requests", "with_names"]



def coverage(query: ForgetQuery, memory_terms: set[str], idf: Callable[[str], float]) -> float:
    """IDF-weighted share of the query's subject terms that the memory holds (0.0 without terms).

    The terms are what the request asks to forget (``ForgetQuery.what_terms``):
    a named person's terms are the subject rule's to check, not coverage's.
    """
    terms = query.what_terms
    total = sum(max(idf(t), 1e-6) for t in terms)
    if total <= 0.0:
        return 0.0
    return sum(max(idf(t), 1e-6) for t in terms if query.forms_of(t) & memory_terms) / total


def named_memories(query: ForgetQuery, *, keys: Sequence[int], terms_of: Callable[[int], set[str]],
                   idf: Callable[[str], float], cosines: Sequence[float], min_coverage: float = 0.5,
                   min_cosine: float = 0.45, allowed: Callable[[int], bool] = lambda key: True
                   ) -> list[tuple[int, str]]:
    """(key, reason) of each memory the request names, before versions are considered.

    Args:
        query: the parsed request.
        keys: the scope's active memories.
        terms_of: a memory's stored index terms.
        idf: the scope's IDF of a term.
        cosines: each memory's cosine to the request's subject, aligned with ``keys``.
        allowed: whether a memory is about whom the request is (``ForgetQuery.allows``).
    """
    if query.declined:
        return []
    named = []
    elsewhere = False  # the request's words are said of someone else
    for key in keys:
        c = coverage(query, terms_of(key), idf)
        if c >= min_coverage:
            if allowed(key):
                named.append((key, f"it holds {c:.0%} of the request's subject terms, weighted by rarity"))
            else:
                elsewhere = True
    if named or not keys or elsewhere:
        # A memory of someone else's that holds the request's words ("where carlos lives", typed in lower
        # case, beside "My friend Carlos lives in Lima") says the request is about that one: no guess by
        # meaning among the user's own ("I live in Quito").
        return named
    # Rule 3: a paraphrase. When the scope holds some of the words of what is asked, only a
    # memory holding one of them may be the paraphrase: "my sister's birthday" where the
    # user's birthday is stored and hers is not names nothing, not her phone number.
    what = set(query.what_terms)
    said = what & set().union(*(terms_of(k) for k in keys)) if what else set()
    # Of another person, something of what is asked must be said: the person's words dominate a
    # cosine, and "my sister's email", where only her phone number is stored, is nearest it.
    of_person = query.about.who == "person" and not query.person_only
    fits = [i for i in range(len(keys)) if allowed(keys[i])
            and (said & terms_of(keys[i]) if (said or of_person) else True)]
    if not fits:
        return []
    best = max(fits, key=lambda i: (cosines[i], -i))
    if cosines[best] >= min_cosine:
        return [(keys[best], f"no memory holds the request's words; it is the closest in meaning "
                             f"(cosine {cosines[best]:.2f})")]
    return []


def named_folds(queries: Sequence[ForgetQuery], folds: Sequence[tuple[str, str, str]], gate: Any, *,
                min_coverage: float = 0.5) -> list[tuple[str, str]]:
    """(rejection id, reason) of each text folded into a kept memory that one of a request's queries
    names by its words, once each (the first query that names it says why).

    Search shows a fold beside its memory (memsieve.read.folded), so a request to forget reads
    the folds too: a fold is named when it holds ``min_coverage`` of the request's subject terms,
    weighted by the scope's rarity, and is about whom the request is (rule 4), as a memory is.
    A fold has no vector of its own, so a paraphrase (rule 3) names none.

    Args:
        queries: the parsed request's queries (``parse_requests``).
        folds: (rejection id, text, memory id) of the scope's folds (``store.shown_folds``).
        gate: the scope's ScopeGate (its rarity of terms, which terms its memories hold).
    """
    asked = [q.scoped(lambda t: bool(gate.term_df(t))) for q in queries if not q.declined and q.terms]
    if not asked or not folds:
        return []
    idf = _scope_idf(gate)
    named: dict[str, str] = {}
    for rejection_id, text, memory_id in folds:
        terms = set(_core.tokenize(text))
        for query in asked:
            c = coverage(query, terms, idf)
            if c >= min_coverage and query.allows(text, terms):
                named[rejection_id] = (f"folded into memory {memory_id}, it holds {c:.0%} of the request's "
                                       "subject terms, weighted by rarity")
                break
    return list(named.items())


def _scope_idf(gate: Any) -> Callable[[str], float]:
    """The scope's bm25 IDF of a term; a term no memory holds has the highest of all.

    The request's padding ("oh gosh", "thanks") is cut before its terms are
    read, so a word no memory holds is part of what is asked: "forget my
    passport number" where only the phone number is stored asks for something
    the scope does not have, and must not cover the phone number by "number".
    """
    return gate.term_idf


@dataclass(frozen=True)
class Forgotten:
    """One memory a request to forget named.

    Attributes:
        seq: the memory's store sequence number.
        reason: why the rule named it.
    """

    seq: int
    reason: str


class SubjectFilter:
    """``ForgetQuery.allows`` of each memory of ``texts`` (seq -> text), the scope's known names drawn from
    them all ("my cousin Aisha" makes "Aisha is a nurse" Aisha's); a memory without a text is not allowed.

    Called with a seq; ``known`` holds the names it read."""

    def __init__(self, query: ForgetQuery, texts: dict[int, str], terms_of: Callable[[int], Collection[str]]
                 ) -> None:
        self.query, self.texts, self.terms_of = query, texts, terms_of
        self.known: set[str] = set()
        for text in texts.values():
            self.known |= query.lexicon.relation_names(text)
        self._memo: dict[int, bool] = {}

    def __call__(self, seq: int) -> bool:
        if seq not in self._memo:
            self._memo[seq] = seq in self.texts and self.query.allows(self.texts[seq], self.terms_of(seq),
                                                                      known=self.known)
        return self._memo[seq]


def _with_stated_facts(terms_of: Callable[[int], Collection[str]], texts: dict[int, str],
                       lexicon: Lexicon) -> Callable[[int], set[str]]:
    """A memory's index terms and the facts its text states without their noun (``Lexicon.stated_facts``:
    "Leo works as a chef" holds "job"), so that "forget Leo's job" covers it as "forget Leo's chef
    job" would."""
    memo: dict[int, set[str]] = {}

    def terms(seq: int) -> set[str]:
        if seq not in memo:
            text = texts.get(seq)
            memo[seq] = set(terms_of(seq)) | (lexicon.stated_facts(text) if text else frozenset())
        return memo[seq]
    return terms


def _linked_to(pairs: list[tuple[int, int]], inside: Collection[int]) -> list[int]:
    """The other ends of the links (``versions_of``'s pairs) with one end ``inside`` and one out."""
    return list(dict.fromkeys(b if a in inside else a for a, b in pairs if (a in inside) != (b in inside)))


def _all_of_it(query: ForgetQuery, named: list[tuple[int, str]], *, terms_of: Callable[[int], set[str]],
               idf: Callable[[str], float], versions_of: Callable[[list[int]], list[tuple[int, int]]]
               ) -> list[tuple[int, str]]:
    """Where a memory says all of what a request of several words asks ("my Tuesday yoga class"),
    the memories that say part of it ("my pottery class is on Tuesdays") are other facts sharing a
    word, and stay, unless a write-path link makes one a version of a memory that says it all. A
    request for everything about something ("everything about my Japan trip") keeps them all."""
    if len(named) < 2 or len(set(query.what_terms)) < 2 or query.person_only or query.broad:
        return named
    whole = {k for k, _ in named if coverage(query, terms_of(k), idf) >= 1.0 - 1e-9}
    if not whole:
        return named
    linked = set(_linked_to(versions_of([k for k, _ in named]), whole))
    return [(k, r) for k, r in named if k in whole or k in linked]


#: How many links from a named memory its versions are followed: a fact's history is a short chain.
VERSION_HOPS = 4


def _with_versions(query: ForgetQuery, named: list[tuple[int, str]], *,
                   versions_of: Callable[[list[int]], list[tuple[int, int]]], allowed: Callable[[int], bool],
                   texts: dict[int, str], text_of: Callable[[int], str | None],
                   terms_of: Callable[[int], set[str]]) -> list[tuple[int, str]]:
    """The named memories and the versions the write path linked to them (its updates), when the
    request names the fact and no value of it: "forget my sister's phone number" takes her new
    number too, "forget that I moved to Berlin" spares the move to Hamburg it updated. A version
    must be of whom the request is about, as every memory it names, and say a word of what it asks
    (or state the fact it names, ``Lexicon.fact_statements``): the gate links a text to the memory
    it is close to, and "My sister's address is 4 Elm Road" may be linked to her phone number."""
    if not named or query.values:
        return named
    asked = set(query.what_terms)
    out = dict(named)
    frontier = list(out)
    for _ in range(VERSION_HOPS):
        found = _linked_to(versions_of(frontier), out)
        frontier = []
        for k in found:
            if k not in texts and (text := text_of(k)) is not None:
                texts[k] = text
            if allowed(k) and asked & terms_of(k):
                out[k] = "a version the write path linked to a memory the request names"
                frontier.append(k)
        if not frontier:
            break
    return list(out.items())


def _surely_the_users(query: ForgetQuery, named: list[tuple[int, str]], texts: dict[int, str], *,
                      known: Collection[str]) -> list[tuple[int, str]]:
    """A request about the user names the memories surely the user's when it names any.

    A memory that opens with a word read as a possible name ("Tom drives a
    red Fiat", "Likes green tea") may be the user's own fact written without
    "I", so rule 4 lets it through; beside a memory that says "I" or "my" of
    the same fact ("I drive a blue Tesla"), it is someone else's, and stays.
    """
    if query.about.who != "user" or len(named) < 2:
        return named
    lexicon = query.lexicon
    sure = [(k, r) for k, r in named
            if k in texts and (s := lexicon.subject(texts[k], known=known)).who == "user" and s.sure]
    return sure or named


def choose(query: ForgetQuery, gate: Any, subject_vector: np.ndarray, *, versions_of: Callable[[list[int]],
           list[tuple[int, int]]], recency: Callable[[int], tuple[str, str, int]],
           vectors_of: Callable[[list[int]], dict[int, np.ndarray]], text_of: Callable[[int], str | None],
           min_coverage: float = 0.5,
           min_cosine: float = 0.45, version_cos: float = 0.2, relevance_gap: float = 0.12,
           min_relevance: float = 0.15) -> list[Forgotten]:
    """The memories of one scope's gate that a request to forget names (see the module docstring).

    Args:
        query: the parsed request.
        gate: the scope's ScopeGate.
        subject_vector: (d,) float32 embedding of ``query.subject``.
        versions_of: pairs of seqs that are versions of one fact, among those given (write-path links).
        recency: a memory's (valid_from, created_at, seq) sort key.
        vectors_of: the (d,) embeddings of some memories, by seq.
        text_of: a memory's text (None if unknown), for whom it is about (rule 4).
        version_cos: memories at least this close to the matched one, and
            about as close to the request's subject (within ``relevance_gap``
            of it, and at least ``min_relevance``), are its versions too. The
            bar is low because two values of one slot ("I live at 8 Juniper
            Close", "the new place is 31 Harbour View") share few words and
            the default embedder puts them at cosines of 0.2 to 0.4; the
            subject, not the pair, is what ties them.
    """
    if not len(gate) or query.declined or not query.terms:
        # A request with no words of its own to match ("forget it", or a name the index drops as a
        # word, "everything about Will") names nothing: the nearest memory in meaning to the whole
        # request is a guess, and a purge cannot be undone.
        return []
    query = query.scoped(lambda t: bool(gate.term_df(t)))
    lexical = [s for s, _ in gate.keyword_search(" ".join(query.terms), len(gate))] if query.terms else []
    near_seqs, near_cos = gate.nearest(subject_vector, min(10, len(gate)))
    near = [int(s) for s in near_seqs]
    keys = list(dict.fromkeys(lexical + near))
    cos_of = dict(zip(near, (float(c) for c in near_cos)))
    texts = {k: t for k in keys if (t := text_of(k)) is not None}
    if query.about.who == "user":
        people = set().union(*(query.lexicon.subject(t).people for t in texts.values()))
        people |= {p for t in texts.values() for n in query.lexicon.relation_names(t) for p in _core.tokenize(n)}
        query = with_names(query, people).scoped(lambda t: bool(gate.term_df(t)))
    terms_of = _with_stated_facts(gate.terms_of, texts, query.lexicon)
    allowed = SubjectFilter(query, texts, terms_of)
    named = named_memories(query, keys=keys, terms_of=terms_of, idf=_scope_idf(gate),
                           cosines=[cos_of.get(k, -1.0) for k in keys], min_coverage=min_coverage,
                           min_cosine=min_cosine, allowed=allowed)
    named = _surely_the_users(query, named, texts, known=allowed.known)
    named = _all_of_it(query, named, terms_of=terms_of, idf=_scope_idf(gate), versions_of=versions_of)
    if not query.wants_old:
        named = _with_versions(query, named, versions_of=versions_of, allowed=allowed, texts=texts,
                               text_of=text_of, terms_of=terms_of)
        return [Forgotten(seq=k, reason=r) for k, r in named]
    # "my old address": the matched fact's older versions go, its newest stays.
    chosen = [k for k, _ in named] or [k for k in near if allowed(k)][:1]
    group = set(chosen)
    linked = set(_linked_to(versions_of(near + chosen), group))
    vectors = vectors_of(near + chosen + sorted(linked))
    asked = set(query.what_terms)
    for c in chosen:
        if c not in vectors:
            continue
        rel_c = float(vectors[c] @ subject_vector)
        bar = max(min_relevance, rel_c - relevance_gap)
        group |= {k for k in near if k in vectors and float(vectors[k] @ vectors[c]) >= version_cos
                  and float(vectors[k] @ subject_vector) >= bar}
        # A write-path link is a version when it says a word of what is asked or is as near the
        # request as the similar ones: the gate links a text to the memory it is close to, and her
        # address may be linked to her phone number (whose newest it must not become).
        group |= {k for k in linked if asked & terms_of(k)
                  or (k in vectors and float(vectors[k] @ subject_vector) >= bar)}
    group = {k for k in group if allowed(k)}  # a version of the user's fact is the user's, not the brother's
    if len(group) < 2:
        return []  # nothing older to forget: the request names the only version
    newest = max(group, key=recency)
    return [Forgotten(seq=k, reason="an older version of the fact the request names; the newest is kept")
            for k in sorted(group - {newest})]
