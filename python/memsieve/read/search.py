"""Reading: dense, keyword and hybrid search within one scope.

A search is a line of stages, each handed what it needs:

1. candidates (``rank.Candidates``): filters and ``as_of`` restrict the
   memories *before* anything is ranked, in every mode, so a filtered search
   returns min(limit, number of matches) and a point-in-time search ranks the
   text and the vector that held at that time;
2. rank (``rank.Ranker``): dense, keyword or both fused (``fusion``); a
   memory's keyword score is its own words' or, if better, those of a text
   folded into it (``fold_keys``);
3. speaker (``speaker``): in a scope whose memories carry chat roles, the
   memories of the speaker the question asks about (the user's own words,
   unless it asks what the assistant said) are raised, read from deeper in
   the rankings; a scope without roles passes unchanged;
4. when (``when``): a query with a time window ("last month", read against
   its reference time) raises the memories dated inside it, read from
   deeper in the rankings; a query without time words passes unchanged;
5. rerank (``rerank``): a cross-encoder rescoring of the first results, if
   one is configured;
6. around (``around``): a question that sets the events it asks about off
   from another ("what did I buy before the standing desk?") puts those on
   the asked side of that event's date first, the nearest first;
7. versions (``versions``): each fact's newest version first (the oldest
   first when the query asks for the earliest: "first", "originally"); the
   events an order word asks about in order of time, the earliest (latest)
   of them pulled into the last place asked for from down to
   ``around.AROUND_DEPTH`` if it ranks below;
8. folded (``folded``): each result with the latest texts folded into it
   that say words it does not;
9. results: ``SearchResult`` rows.

The store is read here, between the stages: the rows of the ranked memories,
and for the versions stage their links and vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from memsieve.errors import ConfigError, is_choice, short_repr
from memsieve.read.around import AROUND_DEPTH, SetOff, around, set_off
from memsieve.read.fold_keys import FoldKeys
from memsieve.read.folded import FOLDS_READ, told_since
from memsieve.read.fusion import Fusion
from memsieve.read.rank import Candidates, Hits, Ranker, matches_filters
from memsieve.read.speaker import SPEAKER_REACH, asked, raise_speaker, role_of
from memsieve.read.rerank import DEFAULT_RERANK_DEPTH, Reranker, rerank_order
from memsieve.read.versions import (DEFAULT_VERSION_COS, Version, alike_pairs, freshen, is_event,
                                    may_be_versions, ordered_events)
from memsieve.read.when import Focus, aware, focus, promote, topic_terms
from memsieve.records import Folded, MemoryItem, SearchResult
from memsieve.scope import Scope
from memsieve.text.lexicon import ENGLISH, Lexicon

if TYPE_CHECKING:
    from memsieve.gate.cache import ScopeGates

SearchMode = Literal["dense", "keyword", "hybrid", "auto"]
_MODES = ("dense", "keyword", "hybrid")

Found = tuple[int, MemoryItem, float]  # (seq, row, score)


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
        self._ranker = Ranker(gates, fusion=fusion or Fusion(), folds=FoldKeys(store))
        self._version_cos = version_cos
        self._store = store
        self._embed = embed
        self._reranker = reranker
        self._rerank_depth = rerank_depth

    def search(self, scope: Scope, query: str, *, limit: int, filters: dict[str, Any], as_of: str | None,
               mode: str, vector: np.ndarray | None = None, current_only: bool = False,
               reference_time: str | None = None) -> list[SearchResult]:
        """Search one scope; ``vector`` is the query's (d,) float32 embedding if already known.

        ``reference_time`` (ISO-8601, or None for the call's time) is the
        query's "now", against which its time words are read (memsieve.read.when).

        Freshness reorders the results asked for (see memsieve.read.versions); it
        never pulls a newer version up from below the cut (an order word pulls up
        one event, ``_pull_extreme``). Reading deeper to
        find one was tried: on LoCoMo dev each version pulled up pushed out a
        result that answered the question (answer recall@10 0.5 to 0.9 points
        lower at gamma 0.5), since not every text the band stores as a newer
        version is one.
        """
        if not is_choice(mode, _MODES):
            raise ConfigError(f"unknown search mode {short_repr(mode)}; use one of {', '.join(_MODES)} "
                              "(or 'auto' with a router)")
        mode = str.__str__(mode)  # a str subclass's own == never runs below
        restricted = bool(filters) or as_of is not None
        view = Candidates.load(self._store, scope, filters=filters, as_of=as_of) if restricted else None
        if view is not None and not len(view):
            return []
        depth = max(limit, self._rerank_depth) if self._reranker is not None else limit
        # Keyword mode needs no query vector, and freshness groups by similarity
        # only where one was computed, so a caller's vector changes nothing here.
        q = None
        if mode != "keyword":
            q = self._embed([query])[0] if vector is None else vector
        f = focus(query, reference_time)
        windowed = f is not None and f.window is not None
        # "What did I buy before the standing desk?": dated by another event (below).
        apart = None if windowed else set_off(query, self._lexicon)
        inside: frozenset[int] = frozenset()
        found: list[Found] = []
        chat = False
        if not windowed:
            hits = self._ranker.rank(scope, query, vector=q, mode=mode, depth=depth, view=view)
            found = self._rows(hits, as_of=as_of)
            # Only a scope whose results carry chat roles is read again, deeper.
            chat = any(role_of(it.metadata) is not None for _, it, _ in found)
        if windowed or chat:
            reach = f.reaches() if windowed and f is not None else SPEAKER_REACH
            pool, head = self._ranker.pool(scope, query, vector=q, mode=mode, depth=depth, view=view, reach=reach)
            rows = self._items([s for s, _ in pool], as_of=as_of)
            roles = {s: role_of(it.metadata) for s, it in rows.items()}
            speaker = asked(query, roles.values(), self._lexicon)
            if speaker is not None:
                pool = raise_speaker(pool, head, roles, speaker, limit=depth)
            if windowed:
                # In the offset each was said in: "yesterday" said on the morning of
                # 1 March in Tokyo is 29 February; read in UTC, where it is still the 29th,
                # it would be the 28th.
                dates = {s: it.valid_from_local or it.created_at for s, it in rows.items()}
                alone = f.window is not None and self._lexicon.asks_only_when(query, f.window.phrase)
                pool, inside = promote(pool, head, dates, f, texts={s: it.text for s, it in rows.items()},
                                       roles=roles, alone=alone)
            found = [(s, rows[s], score) for s, score in pool[:depth] if s in rows]
        if self._reranker is not None:
            order = rerank_order(self._reranker, query, [it.text for _, it, _ in found])
            found = [(found[i][0], found[i][1], score) for i, score in order]
        if apart is not None and found:
            found = self._around(scope, query, found, apart, vector=q, mode=mode, view=view, as_of=as_of)
        # "What did I buy last?" asks about the texts that say "bought".
        topic = self._lexicon.with_verb_forms(topic_terms(query, f)) if f and f.order else frozenset()
        if f is not None and f.order is not None and found and len(found) >= limit:
            found = self._pull_extreme(scope, query, found, f.order, topic, limit=limit, vector=q, mode=mode,
                                       view=view, as_of=as_of)
        found = found[:limit]
        ranked = [(it, score, newer)
                  for (_, it, score), newer in self._freshen(found, query=q, view=view, focus=f, lead=inside,
                                                             topic=topic)
                  if newer is None or not current_only]
        folds = self._folds(scope, [it.id for it, _, _ in ranked], as_of=as_of)
        if filters:  # a filtered search shows only the folds the filters hold for, as it does memories
            folds = {k: [f for f in fs if matches_filters(f.metadata, filters)] for k, fs in folds.items()}
        return [_result(it, score, superseded_by=newer, folded=told_since(it.text, folds.get(it.id, ())))
                for it, score, newer in ranked]

    def _folds(self, scope: Scope, memory_ids: list[str], *, as_of: str | None) -> dict[str, list[Folded]]:
        """Per result, the newest texts folded into it or into a memory a consolidation retired into
        it (its fact lives on in the result), newest first (memsieve.read.folded)."""
        retired = self._store.retired_members(scope, memory_ids, as_of=as_of) if memory_ids else {}
        read = self._store.folds_into(scope, memory_ids + list(retired), newest=FOLDS_READ, as_of=as_of)
        if not retired:
            return read
        out: dict[str, list[Folded]] = {}
        for memory_id, folds in read.items():
            out.setdefault(retired.get(memory_id, memory_id), []).extend(folds)
        return {k: sorted(fs, key=lambda f: f.created_at, reverse=True)[:FOLDS_READ] for k, fs in out.items()}

    def _pull_extreme(self, scope: Scope, query: str, found: list[Found], order: str, topic: frozenset[str], *,
                      limit: int, vector: np.ndarray | None, mode: str, view: Candidates | None,
                      as_of: str | None) -> list[Found]:
        """``found`` with the earliest (latest) of the events an order word asks about in its last
        place, when that event ranks below the cut, down to ``AROUND_DEPTH``: "where did I go
        first?" is answered by the first trip, however it ranks. One event at most, so the results
        asked for lose one place at most; versions of one fact are never pulled up (that was
        measured to push out answers: ``search``'s docstring)."""
        kept = found[:limit]
        deeper = self._deeper(scope, query, kept, vector=vector, mode=mode, view=view, as_of=as_of)
        if not deeper:
            return found
        rows = {seq: (seq, it, score) for seq, it, score in kept + deeper}
        keys = list(rows)
        pairs = ordered_events(keys, texts={k: rows[k][1].text for k in keys}, topic=topic, lexicon=self._lexicon,
                               roles={k: role_of(rows[k][1].metadata) for k in keys})
        group = {k for pair in pairs for k in pair}
        if not group:
            return found
        when = {k: aware(str(rows[k][1].valid_from or rows[k][1].created_at)) for k in group}
        pick = (min if order == "earliest" else max)(group, key=when.__getitem__)
        return found if pick in {seq for seq, _, _ in kept} else kept[:limit - 1] + [rows[pick]]

    def _around(self, scope: Scope, query: str, found: list[Found], apart: SetOff, *, vector: np.ndarray | None,
                mode: str, view: Candidates | None, as_of: str | None) -> list[Found]:
        """``found`` with the events ``apart`` asks about first (``around.around``), read from the
        results and from up to ``AROUND_DEPTH`` deeper: the events it asks about and the one it
        sets them off from rank near one another. The results keep their order, and a memory only
        the deeper lists reach follows them, so nothing else changes."""
        deeper = self._deeper(scope, query, found, vector=vector, mode=mode, view=view, as_of=as_of)
        floor = found[-1][2]
        rows = {seq: (seq, it, score) for seq, it, score in found} | {seq: (seq, it, min(score, floor))
                                                                       for seq, it, score in deeper}
        keys = [seq for seq, _, _ in found] + [seq for seq, _, _ in deeper]
        return [rows[k] for k in around(keys, texts={k: rows[k][1].text for k in keys},
                                        dates={k: rows[k][1].valid_from or rows[k][1].created_at for k in keys},
                                        asked=apart, lexicon=self._lexicon,
                                        roles={k: role_of(rows[k][1].metadata) for k in keys})]

    def _deeper(self, scope: Scope, query: str, found: list[Found], *, vector: np.ndarray | None, mode: str,
                view: Candidates | None, as_of: str | None) -> list[Found]:
        """The memories ranked down to ``AROUND_DEPTH`` that ``found`` does not hold, best first."""
        pool, _ = self._ranker.pool(scope, query, vector=vector, mode=mode, depth=AROUND_DEPTH, view=view, reach=1)
        have = {seq for seq, _, _ in found}
        return self._rows([(seq, score) for seq, score in pool[:AROUND_DEPTH] if seq not in have], as_of=as_of)

    def _items(self, seqs: list[int], *, as_of: str | None) -> dict[int, MemoryItem]:
        return self._store.items_for_seqs(seqs) if as_of is None else self._store.items_at(seqs, as_of)

    def _rows(self, hits: Hits, *, as_of: str | None) -> list[Found]:
        """The ranked memories' rows (as they were at ``as_of``), in rank order."""
        items = self._items([s for s, _ in hits], as_of=as_of)
        return [(s, items[s], score) for s, score in hits if s in items]

    def _freshen(self, found: list[Found], *, query: np.ndarray | None, view: Candidates | None,
                 focus: Focus | None = None, lead: frozenset[int] = frozenset(),
                 topic: frozenset[str] = frozenset()) -> list[tuple[Found, str | None]]:
        """The results with every fact's newest version first: (result, id of the newer version or None).

        A query that asks for the earliest (``focus.order``) lists each fact's
        oldest version first instead; the older ones are still marked
        ``superseded_by`` the newest. Versions dated inside the query's window
        (``lead``) lead their group.

        Versions linked by the write path are grouped, and so are those that
        ``version_pairs`` tells apart by what they say.
        """
        if len(found) < 2:
            return [(f, None) for f in found]
        versions = [Version(key=seq, valid_from=it.valid_from, created_at=it.created_at, order=seq)
                    for seq, it, _ in found]
        seq_of = {it.id: seq for seq, it, _ in found}
        roles = {seq: role_of(it.metadata) for seq, it, _ in found}
        version_of = {v.key: v for v in versions}
        texts = {seq: it.text for seq, it, _ in found}
        # A link the write path made between two speakers, or two turns of one moment, records
        # what the gate saw (an answer close to its question); it is no fact's history. Nor is
        # an ``updates`` link between two events (one written before events were told apart):
        # both happened, so they are siblings.
        pairs: list[tuple[int, int]] = []
        siblings: list[tuple[int, int]] = []
        events: dict[int, bool] = {}  # which results tell of an event, read once for every stage below
        for a, b, kind in self._store.version_links(list(seq_of)):
            if a not in seq_of or b not in seq_of:
                continue
            pair = (seq_of[a], seq_of[b])
            if not may_be_versions(version_of[pair[0]], version_of[pair[1]], roles):
                continue
            both_events = kind == "updates" and all(is_event(events, s, texts, self._lexicon) for s in pair)
            (siblings if both_events else pairs).append(pair)
        similar: list[tuple[int, int]] = []
        if query is not None:
            seqs = [seq for seq, _, _ in found]
            vectors = view.vectors(seqs) if view is not None else self._store.embeddings_for_seqs(seqs)
            alike = alike_pairs(versions, texts=texts, vectors=vectors, query=query, version_cos=self._version_cos,
                                lexicon=self._lexicon, roles=roles, events=events)
            similar = alike.versions
            siblings += alike.siblings
        by_seq = {seq: (seq, it, score) for seq, it, score in found}
        id_of = {seq: it.id for seq, it, _ in found}
        order = focus.order if focus is not None else None
        if order is not None:
            # "The last thing I bought": the events the question asks about, alike or not, go in time.
            siblings += ordered_events([seq for seq, _, _ in found], texts=texts, topic=topic, lexicon=self._lexicon,
                                       roles=roles, events=events)
        return [(by_seq[v.key], None if newer is None else id_of[newer])
                for v, newer in freshen(versions, pairs, similar=similar, oldest_first=order == "earliest", lead=lead,
                                        siblings=siblings, sibling_order=order)]


def _result(it: MemoryItem, score: float, *, superseded_by: str | None, folded: tuple[Folded, ...]) -> SearchResult:
    return SearchResult(id=it.id, text=it.text, score=float(score), source=it.source, sources=it.sources,
                        metadata=it.metadata, valid_from=it.valid_from, created_at=it.created_at,
                        superseded_by=superseded_by, valid_from_offset=it.valid_from_offset, folded=folded)
