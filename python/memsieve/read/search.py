"""Reading: dense, keyword and hybrid search within one scope.

Filters and ``as_of`` restrict the candidates *before* anything is ranked, in
every mode, so a filtered search returns min(limit, number of matches) and a
point-in-time search ranks the text and the vector that held at that time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from memsieve import _core
from memsieve.errors import ConfigError
from memsieve.read.versions import Version, freshen
from memsieve.read.fusion import Fusion
from memsieve.records import SearchResult
from memsieve.read.rerank import DEFAULT_RERANK_DEPTH, Reranker, rerank_order
from memsieve.scope import Scope
from memsieve.text.lexicon import ENGLISH, Lexicon

if TYPE_CHECKING:
    from memsieve.gate.cache import ScopeGates

SearchMode = Literal["dense", "keyword", "hybrid", "auto"]
_MODES = ("dense", "keyword", "hybrid")

Hits = list[tuple[int, float]]
#: Among the results asked for, memories at least this close are taken as versions of
#: one fact and the newest goes first. Reordering within the results never drops one,
#: so a low bar costs no recall (docs/UPDATES.md has the sweep).
DEFAULT_VERSION_COS = 0.4
#: ... and they must answer the query about equally well: cosines to it within this
#: gap. On the updates dev set 0.25 keeps 86% of versions newest-first (0.3: 90%,
#: 0.2: 83%); at 0.3 a fact about one person was outranked by a newer, unrelated
#: fact about her, which 0.25 prevents in the tests.
VERSION_RELEVANCE_GAP = 0.25
#: A newer memory that says a change (a Lexicon's change cues) and shares a content term
#: with an older one is its version at a lower bar: a correction or a later event is
#: often worded apart from the fact it changes, and answers the question less
#: directly ("I quit Fenwick Insurance" for "where do I work?").
CHANGED_COS_OFFSET = 0.1  # below version_cos: 0.3 at the default
CHANGED_RELEVANCE_GAP = 0.4


class Searcher:
    """Runs searches over a store, with the scopes' gates for the unfiltered dense path.

    Args:
        store: the store (rows, keyword search, point-in-time candidates).
        gates: the scopes' cached gate state (exact scan or hnswlib index).
        embed: embeds a list of texts to (n, d) float32 unit rows.
        reranker: rescores the first ``rerank_depth`` results, if given.
        fusion: how ``hybrid`` combines the dense and keyword rankings.
        version_cos: two retrieved memories at least this close (cosine) are
            versions of one fact for freshness, linked or not.
        lexicon: the language freshness reads change cues and subjects with.
    """

    def __init__(self, store: Any, gates: "ScopeGates", *, embed: Callable[[Sequence[str]], np.ndarray],
                 reranker: Reranker | None = None, rerank_depth: int = DEFAULT_RERANK_DEPTH,
                 fusion: Fusion | None = None, version_cos: float = DEFAULT_VERSION_COS,
                 lexicon: Lexicon = ENGLISH) -> None:
        self._lexicon = lexicon
        self._fusion = fusion or Fusion()
        self._version_cos = version_cos
        self._store = store
        self._gates = gates
        self._embed = embed
        self._reranker = reranker
        self._rerank_depth = rerank_depth

    def search(self, scope: Scope, query: str, *, limit: int, filters: dict[str, Any], as_of: str | None,
               mode: str, vector: np.ndarray | None = None, current_only: bool = False) -> list[SearchResult]:
        """Search one scope; ``vector`` is the query's (d,) float32 embedding if already known.

        Freshness reorders the results asked for (see memsieve.read.versions); it
        never pulls a newer version up from below the cut. Reading deeper to
        find one was tried: on LoCoMo dev each version pulled up pushed out a
        result that answered the question (answer recall@10 0.5 to 0.9 points
        lower at gamma 0.5), since not every text the band stores as a newer
        version is one.
        """
        if mode not in _MODES:
            raise ConfigError(f"unknown search mode {mode!r}; use one of {', '.join(_MODES)} (or 'auto' with a router)")
        restricted = bool(filters) or as_of is not None
        view = _Candidates.load(self._store, scope, filters=filters, as_of=as_of) if restricted else None
        if view is not None and not len(view.seqs):
            return []
        wanted = limit
        if self._reranker is not None:
            limit = max(limit, self._rerank_depth)
        # Keyword mode needs no query vector, and freshness groups by similarity
        # only where one was computed, so a caller's vector changes nothing here.
        q = None
        if mode == "keyword":
            hits = self._keyword(scope, query, limit, view)
        else:
            q = self._embed([query])[0] if vector is None else vector
            if mode == "dense":
                hits = self._dense(scope, q, limit, view)
            else:
                depth = max(self._fusion.depth, limit)
                hits = self._fusion.fuse(self._dense(scope, q, depth, view),
                                         self._keyword(scope, query, depth, view))[:limit]
        seqs = [s for s, _ in hits]
        items = self._store.items_for_seqs(seqs) if as_of is None else self._store.items_at(seqs, as_of)
        found = [(s, items[s], score) for s, score in hits if s in items]
        if self._reranker is not None:
            order = rerank_order(self._reranker, query, [it.text for _, it, _ in found])
            found = [(found[i][0], found[i][1], score) for i, score in order]
        found = found[:wanted]
        results = []
        for (seq, it, score), newer in self._freshen(found, within=wanted, view=view, query=q):
            if newer is not None and current_only:
                continue
            results.append(SearchResult(
                id=it.id, text=it.text, score=float(score), source=it.source, sources=it.sources,
                metadata=it.metadata, valid_from=it.valid_from, created_at=it.created_at, superseded_by=newer))
        return results[:wanted]

    def _freshen(self, found: list[tuple[int, Any, float]], *, within: int, view: "_Candidates | None",
                 query: np.ndarray | None) -> list[tuple[tuple[int, Any, float], str | None]]:
        """The results with every fact's newest version first: (result, id of the newer version or None).

        Versions linked by the write path are grouped; so are versions told
        apart by similarity alone among the first ``within`` results (all of
        them, now that the ranking is cut before freshness). Two such texts
        must also answer the query about equally well (their cosines to it
        within ``VERSION_RELEVANCE_GAP``): two versions of one fact do, while a
        fact and another on the same person usually do not.
        """
        if len(found) < 2:
            return [(f, None) for f in found]
        versions = [Version(key=seq, valid_from=it.valid_from, created_at=it.created_at, order=seq)
                    for seq, it, _ in found]
        by_recency = {v.key: v.recency() for v in versions}
        seq_of = {it.id: seq for seq, it, _ in found}
        pairs = [(seq_of[a], seq_of[b]) for a, b, _ in self._store.version_links(list(seq_of))
                 if a in seq_of and b in seq_of]
        seqs = [seq for seq, _, _ in found[:within]]
        if view is not None:
            row = {int(s): i for i, s in enumerate(view.seqs)}
            vectors = {s: view.matrix[row[s]] for s in seqs if s in row}
        else:
            vectors = self._store.embeddings_for_seqs(seqs)
        known = [s for s in seqs if s in vectors]
        # version_cos 1.0 asks for linked versions only: no similarity rule at all.
        if len(known) >= 2 and query is not None and self._version_cos < 1.0:
            m = np.ascontiguousarray(np.stack([vectors[s] for s in known]), dtype=np.float32)
            sims = m @ m.T
            rel = m @ query
            gap = np.abs(rel[:, None] - rel[None, :])
            alike = gap <= VERSION_RELEVANCE_GAP
            texts = {seq: it.text for seq, it, _ in found}
            slots = [_slot_terms(texts[s], self._lexicon) for s in known]
            close = np.argwhere(np.triu((sims >= self._version_cos) & alike, k=1))
            said = [self._lexicon.cues(texts[s]) for s in known]
            pairs += [(known[i], known[j]) for i, j in close
                      if slots[i] & slots[j] or said[i] ^ said[j]]
            pairs += changed_pairs(known, said, slots, sims=sims, gap=gap,
                                   newer=lambda a, b: by_recency[a] > by_recency[b],
                                   min_cos=self._version_cos - CHANGED_COS_OFFSET)
        by_seq = {seq: (seq, it, score) for seq, it, score in found}
        id_of = {seq: it.id for seq, it, _ in found}
        return [(by_seq[v.key], None if newer is None else id_of[newer]) for v, newer in freshen(versions, pairs)]

    def _dense(self, scope: Scope, q: np.ndarray, limit: int, view: "_Candidates | None") -> Hits:
        if view is None:
            gate = self._gates.for_read(scope, dim=q.shape[0])
            if gate is None or len(gate) == 0:
                return []
            seqs, cos = gate.nearest(q, limit)
            return [(int(s), float(c)) for s, c in zip(seqs, cos)]
        sims = _core.similarities(view.matrix, q)
        top = np.argsort(-sims, kind="stable")[:limit]
        return [(int(view.seqs[i]), float(sims[i])) for i in top]

    def _keyword(self, scope: Scope, query: str, limit: int, view: "_Candidates | None") -> Hits:
        if view is not None and view.as_of is not None:
            # The scope's index holds today's texts; a point-in-time search ranks
            # the texts that held then, with the statistics of that set.
            then = _core.KeywordIndex()
            then.add_many(view.seqs, view.texts)
            seqs, scores = then.search(query, limit)
            return [(int(q), float(x)) for q, x in zip(seqs, scores)]
        gate = self._gates.for_read(scope)
        if gate is None:
            return []
        # Filters apply inside the ranking: only the allowed memories compete.
        return gate.keyword_search(query, limit, allow=None if view is None else view.seqs)


class _Candidates:
    """The memories a restricted search may return: seqs (n,) int64, matrix (n, d) float32, texts."""

    def __init__(self, seqs: np.ndarray, matrix: np.ndarray, texts: list[str], as_of: str | None) -> None:
        self.seqs = seqs
        self.matrix = matrix
        self.texts = texts
        self.as_of = as_of

    @classmethod
    def load(cls, store: Any, scope: Scope, *, filters: dict[str, Any], as_of: str | None) -> "_Candidates":
        found = store.candidates(scope, as_of=as_of)
        keep = [i for i, m in enumerate(found.metadata) if _matches(m, filters)]
        if not keep:
            return cls(np.empty(0, np.int64), np.empty((0, 0), np.float32), [], as_of)
        return cls(np.ascontiguousarray(found.seqs[keep]), np.ascontiguousarray(found.matrix[keep]),
                   [found.texts[i] for i in keep], as_of)


def _matches(metadata: dict[str, Any], filters: dict[str, Any]) -> bool:
    return all(k in metadata and metadata[k] == v for k, v in filters.items())


def changed_pairs(seqs: Sequence[int], cues: Sequence[frozenset[str]], terms: Sequence[set[str]], *,
                  sims: np.ndarray, gap: np.ndarray, newer: Callable[[int, int], bool],
                  min_cos: float) -> list[tuple[int, int]]:
    """Pairs (i, j) where the newer memory says a change about the older one.

    The newer must say a change cue the older does not, share a content term
    with it that is not the person both are about (Lexicon.subject_terms), be
    at least ``min_cos`` close and answer the query within
    ``CHANGED_RELEVANCE_GAP`` of it.

    Args:
        seqs: n memories.
        cues: their change cues (Lexicon.cues), aligned.
        terms: their content terms less the person they are about, aligned.
        sims: (n, n) cosines between them.
        gap: (n, n) absolute differences of their cosines to the query.
        newer: whether the first memory is newer than the second.
        min_cos: the similarity bar (``version_cos`` less ``CHANGED_COS_OFFSET``).
    """
    if not any(cues):
        return []
    out = []
    for i in range(len(seqs)):
        for j in range(i + 1, len(seqs)):
            if sims[i, j] < min_cos or gap[i, j] > CHANGED_RELEVANCE_GAP:
                continue
            new, old = (i, j) if newer(seqs[i], seqs[j]) else (j, i)
            if cues[new] - cues[old] and terms[new] & terms[old]:
                out.append((seqs[i], seqs[j]))
    return out


def _slot_terms(text: str, lexicon: Lexicon) -> set[str]:
    """A memory's content terms other than the person it is about."""
    return set(_core.tokenize(text)) - lexicon.subject_terms(text)
