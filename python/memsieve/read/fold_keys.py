"""A folded text's words, findable: keyword search reads them as its memory's.

Search shows the texts the gate folded into a memory beside it (memsieve.read.folded), but
their words indexed nothing: a keyword search for a word only a fold says ("flowers", in "I love
the farmers market ... and flowers" folded into "I love the farmers market") found nothing,
though the store was told it. The gate's keyword index cannot hold them: its terms are the
information term's neighbours, which every decision of the gate rests on. So search keeps an
index of its own per scope: one document per memory that texts were folded into, the distinct
words of its folds that search may show (not restored, not forgotten, not purged; exact
duplicates aside, as they say no word their memory does not). A fold told since is read in as
the next search meets it, and the index is built again when one leaves; whether either happened
costs the store two index reads (``folds_signature``). One document per memory, of distinct
words, keeps a memory that thousands of texts were folded into ("thanks so much!") one short
posting per word.

A memory's keyword score is the better of its own words' and its folds' document's. The folds'
index scores with its own collection's statistics; with fewer documents its idf is lower, so
folded words rank their memory below a memory that says the same words itself (a NOOP is mostly
a repeat).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import memsieve._core as _core
from memsieve.scope import Scope

Hits = list[tuple[int, float]]

#: Scopes whose folds' index is kept; the least recently searched is dropped past it (a server's
#: tenants would otherwise each keep one for the process's life).
MOST_SCOPES = 256

_WORD = re.compile(r"[\w'-]+")


class _Folds:
    """One scope's folds: per memory seq, its folds (seq, text, when the store learned it, metadata)
    and an index of one document per memory, the distinct words of its folds."""

    def __init__(self) -> None:
        self.index = _core.KeywordIndex()
        self.of: dict[int, list[tuple[int, str, str, dict[str, Any]]]] = {}
        self.words: dict[int, dict[str, None]] = {}  # per memory, its folds' distinct words in order
        self.left = 0
        self.seen = 0  # the newest fold seq read: later ones are read forward from it
        # Member seq -> the seq of the memory merges retired it into, with the merges' signature
        # it was read at; read on the first hit on a memory search may not return.
        self.retired: tuple[tuple[int, int], dict[int, int]] | None = None

    def take(self, rows: list[tuple[int, str, int, str, dict[str, Any]]], newest: int) -> None:
        """Index ``rows`` (``store.folds_after``, oldest first), read when ``newest`` was the newest
        fold seq; a row told after that reading is one of them already, and is not read again."""
        touched: set[int] = set()
        for seq, text, memory, told, metadata in rows:
            self.of.setdefault(memory, []).append((seq, text, told, metadata))
            words = self.words.setdefault(memory, {})
            size = len(words)
            words.update(dict.fromkeys(_words(text)))
            if len(words) > size:  # a fold that says no new word leaves its memory's document as it is
                touched.add(memory)
        for memory in touched:
            document = " ".join(self.words[memory])
            if memory in self.index:
                self.index.replace(memory, document)
            else:
                self.index.add(memory, document)
        self.seen = max(self.seen, newest, rows[-1][0] if rows else 0)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def words_of(texts: Iterable[str]) -> str:
    """The distinct words of ``texts`` (case aside), in the order first said, as one text."""
    return " ".join(dict.fromkeys(w for t in texts for w in _words(t)))


class FoldKeys:
    """The keyword side of a scope's folds, read from ``store`` and kept per scope.

    Args:
        store: the store (``folds_signature``, ``folds_after``).
    """

    def __init__(self, store: Any) -> None:
        self._store = store
        self._scopes: OrderedDict[str, _Folds] = OrderedDict()
        self._lock = threading.Lock()

    def hits(self, scope: Scope, query: str, limit: int, *, holds: Callable[[int], bool],
             as_of: str | None = None, matches: Callable[[dict[str, Any]], bool] | None = None) -> Hits:
        """[(memory seq, its folds' bm25 score)] for ``query``, best first, at most ``limit``.

        Args:
            holds: whether a memory seq may be returned (active, and in a restricted search's view).
            as_of: keep the folds the store had learned by then.
            matches: whether a fold's metadata holds for the search's filters (a filtered search
                shows only such folds).
        """
        signature = self._store.folds_signature(scope)
        # Searches of one Memory share the cache; one at a time reads or extends a scope's index.
        with self._lock:
            folds = self._current(scope, *signature)
            if folds is None or not len(folds.index):
                return []
            return self._ranked(scope, folds, query, limit, holds=holds, as_of=as_of, matches=matches)

    def _ranked(self, scope: Scope, folds: _Folds, query: str, limit: int, *, holds: Callable[[int], bool],
                as_of: str | None, matches: Callable[[dict[str, Any]], bool] | None) -> Hits:
        retired: dict[int, int] | None = None  # read on the first hit search may not return

        def found_as(memory: int) -> int | None:
            # A memory a consolidation retired lives on in the one it was merged into: its folds'
            # words find that one (search shows them under it, memsieve.read.folded).
            nonlocal retired
            if holds(memory):
                return memory
            if retired is None:
                # A point-in-time search follows the merges in force then (one undone since had
                # retired the memory then).
                retired = self._retired(scope, folds, as_of=as_of)
            kept = retired.get(memory)
            return kept if kept is not None and holds(kept) else None

        if as_of is not None or matches is not None:
            # A restricted search reads every fold once, as it reads every memory (rank.Candidates),
            # and ranks the folds that held then with that set's statistics.
            said: dict[int, list[str]] = {}
            for memory, kept in folds.of.items():
                texts = [t for _, t, told, metadata in kept if (as_of is None or told <= as_of)
                         and (matches is None or matches(metadata))]
                target = found_as(memory) if texts else None
                if target is not None:
                    said.setdefault(target, []).extend(texts)
            then = _core.KeywordIndex()
            for memory, texts in said.items():
                then.add(memory, words_of(texts))
            seqs, scores = then.search(query, limit)
            return [(int(m), float(x)) for m, x in zip(seqs.tolist(), scores.tolist())]
        # Memories deleted since keep their document until the index is built again: read deeper
        # while they take places.
        k = limit
        while True:
            seqs, scores = folds.index.search(query, k)
            best: dict[int, float] = {}
            for m, x in zip(seqs.tolist(), scores.tolist()):
                target = found_as(int(m))
                if target is not None and float(x) > best.get(target, float("-inf")):
                    best[target] = float(x)
            if len(best) >= limit or len(seqs) < k:
                return sorted(best.items(), key=lambda t: -t[1])[:limit]
            k *= 4

    def _retired(self, scope: Scope, folds: _Folds, *, as_of: str | None = None) -> dict[int, int]:
        """The scope's retired members and where each lives on, read again when a merge or an undo
        moved the store's ``merges_signature`` (at ``as_of``: read each time, not kept). Called with
        the lock held."""
        if as_of is not None:
            return self._store.retired_into(scope, as_of=as_of)
        signature = self._store.merges_signature(scope)
        if folds.retired is None or folds.retired[0] != signature:
            folds.retired = (signature, self._store.retired_into(scope) if signature[0] else {})
        return folds.retired[1]

    def _current(self, scope: Scope, newest: int, left: int) -> _Folds | None:
        """The scope's folds as the store holds them now (its ``folds_signature``, read before the
        lock): the cached index, read forward by the folds told since, or built again when one left.
        Called with the lock held."""
        folds = self._scopes.get(scope.key)
        if folds is not None:
            self._scopes.move_to_end(scope.key)
            if folds.left == left:
                if newest > folds.seen:
                    folds.take(self._store.folds_after(scope, folds.seen), newest)
                return folds
        if newest == 0:
            self._scopes.pop(scope.key, None)
            return None
        folds = _Folds()
        # The count was read first: a fold that leaves meanwhile makes the next search build again.
        folds.left = left
        folds.take(self._store.folds_after(scope, 0), newest)
        self._scopes[scope.key] = folds
        while len(self._scopes) > MOST_SCOPES:
            self._scopes.popitem(last=False)
        return folds


def best_of(own: Hits, folded: Hits, limit: int) -> Hits:
    """Each memory's better score of its own keyword hit and its folds', best first (a memory's own
    hit first on a tie), at most ``limit``."""
    if not folded:
        return own[:limit]
    score = dict(own)
    for seq, s in folded:
        if s > score.get(seq, float("-inf")):
            score[seq] = s
    order = {seq: i for i, (seq, _) in enumerate(own)}
    ranked = sorted(score.items(), key=lambda t: (-t[1], order.get(t[0], len(order))))
    return ranked[:limit]
