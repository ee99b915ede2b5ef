"""Which memories a request to forget names, decided without an LLM.

``Memory.forget("please forget my old address", user_id=...)`` must find the
memories the request is about. The rule is deterministic and explainable:

1. The request's own words (the lexicon's request words: forget, please,
   delete, everything about, what I told you, ...) are dropped; what is left
   are the *subject terms*, tokenized and stemmed as the keyword index does.
2. A memory is named when its terms cover at least ``min_coverage`` of the
   subject terms, weighted by the scope's IDF, so a rare name ("Marco") or
   number decides and a common word ("number") does not. Terms no memory of
   the scope holds weigh nothing: they cannot tell memories apart.
3. When no memory covers the subject terms (the request paraphrases: "my old
   employer" for "I used to work at ..."), the memory nearest in meaning is
   named if its cosine reaches ``min_cosine``.
4. A request for the *old* or *previous* value ("forget my old address"; the
   lexicon's old-version words) names the older versions of the matched fact
   and spares the newest one: the versions are the matched memories' groups
   (linked by the write path, or near-duplicates).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memsieve import _core
from memsieve.text.lexicon import ENGLISH, Lexicon


@dataclass(frozen=True)
class ForgetQuery:
    """A request to forget, reduced to what it is about.

    Attributes:
        terms: the subject terms (index tokens), request words removed.
        wants_old: the request asks for the older version(s) only.
        subject: the subject as text, for embedding.
    """

    terms: tuple[str, ...]
    wants_old: bool
    subject: str


def parse_request(what: str, *, lexicon: Lexicon = ENGLISH) -> ForgetQuery:
    """Split a request to forget into its subject terms and whether it asks for old versions.

    Args:
        what: the request, or just what to forget.
        lexicon: the language of the request: its request words and old-version words.
    """
    request = lexicon.request_terms()
    kinds = _core.tokenize_kinds(what)
    wants_old = lexicon.asks_for_old(what)
    terms: list[str] = []
    surfaces: list[str] = []
    for term, surface, _ in kinds:
        if term in request or surface in request or surface in lexicon.old_words or term in terms:
            continue
        terms.append(term)
        surfaces.append(surface)
    return ForgetQuery(terms=tuple(terms), wants_old=wants_old, subject=" ".join(surfaces) or what)


def coverage(query: ForgetQuery, memory_terms: set[str], idf: Callable[[str], float]) -> float:
    """IDF-weighted share of the query's subject terms that the memory holds (0.0 without terms)."""
    total = sum(max(idf(t), 1e-6) for t in query.terms)
    if total <= 0.0:
        return 0.0
    return sum(max(idf(t), 1e-6) for t in query.terms if t in memory_terms) / total


def named_memories(query: ForgetQuery, *, keys: Sequence[int], terms_of: Callable[[int], set[str]],
                   idf: Callable[[str], float], cosines: Sequence[float], min_coverage: float = 0.5,
                   min_cosine: float = 0.45) -> list[tuple[int, str]]:
    """(key, reason) of each memory the request names, before versions are considered.

    Args:
        query: the parsed request.
        keys: the scope's active memories.
        terms_of: a memory's stored index terms.
        idf: the scope's IDF of a term.
        cosines: each memory's cosine to the request's subject, aligned with ``keys``.
    """
    named = []
    for key in keys:
        c = coverage(query, terms_of(key), idf)
        if c >= min_coverage:
            named.append((key, f"it holds {c:.0%} of the request's subject terms, weighted by rarity"))
    if named or not keys:
        return named
    best = max(range(len(keys)), key=lambda i: (cosines[i], -i))
    if cosines[best] >= min_cosine:
        return [(keys[best], f"no memory holds the request's words; it is the closest in meaning "
                             f"(cosine {cosines[best]:.2f})")]
    return []


def _scope_idf(gate: Any) -> Callable[[str], float]:
    """The scope's IDF of a term, and 0 for a term no memory holds.

    A word of the request that no memory holds ("oh", "like") cannot tell
    memories apart, yet its bm25 IDF is the highest of all: counted, it would
    dilute the coverage of the words that do name the memory.
    """
    return lambda term: gate.term_idf(term) if gate.term_df(term) else 0.0


@dataclass(frozen=True)
class Forgotten:
    """One memory a request to forget named.

    Attributes:
        seq: the memory's store sequence number.
        reason: why the rule named it.
    """

    seq: int
    reason: str


def choose(query: ForgetQuery, gate: Any, subject_vector: np.ndarray, *, versions_of: Callable[[list[int]],
           list[tuple[int, int]]], recency: Callable[[int], tuple[str, str, int]],
           vectors_of: Callable[[list[int]], dict[int, np.ndarray]], min_coverage: float = 0.5,
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
        version_cos: memories at least this close to the matched one, and
            about as close to the request's subject (within ``relevance_gap``
            of it, and at least ``min_relevance``), are its versions too. The
            bar is low because two values of one slot ("I live at 8 Juniper
            Close", "the new place is 31 Harbour View") share few words and
            the default embedder puts them at cosines of 0.2 to 0.4; the
            subject, not the pair, is what ties them.
    """
    if not len(gate):
        return []
    lexical = [s for s, _ in gate.keyword_search(" ".join(query.terms), len(gate))] if query.terms else []
    near_seqs, near_cos = gate.nearest(subject_vector, min(10, len(gate)))
    near = [int(s) for s in near_seqs]
    keys = list(dict.fromkeys(lexical + near))
    cos_of = dict(zip(near, (float(c) for c in near_cos)))
    named = named_memories(query, keys=keys, terms_of=gate.terms_of, idf=_scope_idf(gate),
                           cosines=[cos_of.get(k, -1.0) for k in keys], min_coverage=min_coverage,
                           min_cosine=min_cosine)
    if not query.wants_old:
        return [Forgotten(seq=k, reason=r) for k, r in named]
    # "my old address": the matched fact's older versions go, its newest stays.
    chosen = [k for k, _ in named] or near[:1]
    group = set(chosen)
    for a, b in versions_of(near + chosen):
        if a in group or b in group:
            group |= {a, b}
    vectors = vectors_of(near + chosen)
    for c in chosen:
        if c not in vectors:
            continue
        rel_c = float(vectors[c] @ subject_vector)
        group |= {k for k in near if k in vectors and float(vectors[k] @ vectors[c]) >= version_cos
                  and float(vectors[k] @ subject_vector) >= max(min_relevance, rel_c - relevance_gap)}
    if len(group) < 2:
        return []  # nothing older to forget: the request names the only version
    newest = max(group, key=recency)
    return [Forgotten(seq=k, reason="an older version of the fact the request names; the newest is kept")
            for k in sorted(group - {newest})]
