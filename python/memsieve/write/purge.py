"""Purging: which memories a request to erase reaches, erasing them, and saying whether the bytes are gone.

A soft delete keeps a memory's text and embedding (inactive, readable with
``get()``); a purge erases them from every record the store keeps
(memsieve.store.sql_purge) and leaves a tombstone. What a purge reaches:

- by id (``Memory.purge``): that memory, active or not;
- by description (``Memory.forget(..., purge=True)``): the active memories the
  deterministic rule names (memsieve.write.forgetting), and the scope's
  *inactive* memories (soft-deleted, superseded, retired by a merge) whose
  terms cover the request's subject terms as the rule requires, weighted by
  rarity over the active and inactive memories together, and that are about
  whom the request is (the rule's subject check) (an inactive memory
  is never named by meaning alone: a purge cannot be undone);
- in both cases, every memory a consolidation merge in force retired into a
  memory purged, at any depth (a member of a merge whose kept memory was
  itself retired into another, and so on): they hold the same fact.

The bytes: the transaction that purges makes the store drop them (SQLite: a
TRUNCATE checkpoint; PostgreSQL: VACUUM), and the scope's saved hnswlib index
file is overwritten and written anew without the point. Whether the bytes are
physically gone is the store's to say, and ``Erasure.pending`` says it: on
SQLite another connection's read begun before the purge keeps the old pages
(``finish_erasure`` and every later commit retry; closing the last connection
finishes it); on PostgreSQL the dead row versions' bytes stay in the tables'
pages until ``compact`` (``VACUUM FULL``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

import memsieve._core as _core
from memsieve.records import MemoryItem
from memsieve.scope import Scope
from memsieve.write.forget import ForgetPath
from memsieve.write.forgetting import ForgetQuery, SubjectFilter, coverage
from memsieve.write.retired import retired_into

#: Share of the request's subject terms (weighted by rarity) an inactive memory must hold to be named.
MIN_INACTIVE_COVERAGE = 0.5


@dataclass(frozen=True)
class Erasure:
    """What a purge erased, and whether its bytes are physically gone from the store's files.

    Attributes:
        memory_ids: the memories erased (tombstones now), the one asked for first.
        pending: True while some bytes of an erased text or embedding may still
            be in the store's files; ``why`` says where and what finishes it.
        why: None when nothing is pending.
    """

    memory_ids: tuple[str, ...]
    pending: bool
    why: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"memory_ids": list(self.memory_ids), "pending": self.pending, "why": self.why}


@dataclass(frozen=True)
class Target:
    """One memory a purge erases: why, which layer named it, and whether it was active."""

    seq: int
    memory_id: str
    was_active: bool
    layer: str
    reason: str


def erasure(store: Any, memory_ids: Iterable[str] = ()) -> Erasure:
    """The store's word on whether what purges erased is still in its files."""
    why = store.erasure_pending
    return Erasure(memory_ids=tuple(memory_ids), pending=why is not None, why=why)


# ---- what a purge reaches ----------------------------------------------------------


def inactive_named(reader: Any, gate: Any, scope: Scope, query: ForgetQuery, *,
                   min_coverage: float = MIN_INACTIVE_COVERAGE) -> list[tuple[int, str, str]]:
    """(seq, id, reason) of the scope's inactive, unpurged memories whose terms cover the request's subject.

    The weight of a term is its bm25-style IDF over the active memories (the
    gate) and the inactive ones together; a term no memory holds weighs the
    most (memsieve.write.forgetting._scope_idf).
    """
    rows = reader.inactive_texts(scope) if query.terms else []
    return _rows_named(rows, gate, query, min_coverage=min_coverage,
                       says="an inactive memory holding {:.0%} of the request's subject terms, weighted by rarity")


def earlier_named(reader: Any, gate: Any, scope: Scope, query: ForgetQuery, *,
                  min_coverage: float = MIN_INACTIVE_COVERAGE) -> list[tuple[int, str, str]]:
    """(seq, id, reason) of the memories one of whose earlier texts (a superseded version, a text folded into
    them) covers the request's subject, as ``inactive_named`` reads an inactive memory: a fact updated
    since ("my neighbour Zorblax lives at ..." now "my neighbour lives next door") still holds the name."""
    if query.wants_old:
        return []  # "my old address": the rule's own reading of versions decides (forgetting.choose)
    rows = reader.earlier_texts(scope) if query.terms else []
    named = _rows_named(rows, gate, query, min_coverage=min_coverage,
                        says="an earlier text of it holds {:.0%} of the request's subject terms, weighted by rarity")
    # A memory that now holds another value where the request's is missing ("my Monday appointment",
    # moved to Friday since) is not the one asked for: erasing it would lose the value it holds now.
    return [(seq, mid, why) for seq, mid, why in named if not query.near_miss(reader.memory_row(mid).text)]


def _rows_named(rows: list[tuple[int, str, str]], gate: Any, query: ForgetQuery, *, min_coverage: float,
                says: str) -> list[tuple[int, str, str]]:
    """(seq, id, reason) of each memory with a text among ``rows`` (seq, id, text) that the request names."""
    if not rows:
        return []
    terms = [set(_core.tokenize(text)) for _, _, text in rows]
    n = (len(gate) if gate is not None else 0) + len(rows)
    weights: dict[str, float] = {}

    def idf(term: str) -> float:
        if term not in weights:
            df = (gate.term_df(term) if gate is not None else 0) + sum(term in ts for ts in terms)
            weights[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return weights[term]

    query = query.scoped(lambda t: any(t in ts for ts in terms) or bool(gate and gate.term_df(t)))
    allowed = SubjectFilter(query, {i: text for i, (_, _, text) in enumerate(rows)}, lambda i: terms[i])
    out: dict[str, tuple[int, str, str]] = {}
    for i, (seq, memory_id, _) in enumerate(rows):
        if memory_id in out:
            continue
        c = coverage(query, terms[i], idf)
        if c >= min_coverage and allowed(i):
            out[memory_id] = (seq, memory_id, says.format(c))
    return list(out.values())


def with_retired(reader: Any, scope: Scope, targets: list[Target], *, query: ForgetQuery | None = None,
                 gate: Any = None) -> list[Target]:
    """``targets`` and, after them, every memory merges retired into one of them (``retired_into``).

    With ``query`` (a purge by description), a retired member the request can tell apart is spared: one
    about someone else ("Mia is 7" merged into "Zoe is 9", asked "everything about Zoe") or holding
    another value where the request's is missing ("Monday" merged into "Thursday", asked "my Thursday
    meeting"). A merge may have joined what it should not have; the request says what is to go."""
    layer_of = {t.memory_id: t.layer for t in targets}
    reached = [(member, root, why, reader.memory_row(member)) for member, root, why in
               retired_into(reader, scope, layer_of)]
    if query is not None and reached:
        scoped = query.scoped(lambda t: bool(gate is not None and gate.term_df(t)))
        texts = {row.seq: row.text for _, _, _, row in reached}
        allowed = SubjectFilter(scoped, texts, lambda seq: set(_core.tokenize(texts[seq])))
        reached = [r for r in reached if allowed(r[3].seq)]
    return [*targets, *(Target(seq=row.seq, memory_id=member, was_active=False, layer=layer_of[root], reason=why)
                        for member, root, why, row in reached)]


def forget_targets(reader: Any, gate: Any, scope: Scope, query: ForgetQuery, vector: np.ndarray) -> list[Target]:
    """Everything ``forget(..., purge=True)`` erases: the rule's active picks, the inactive memories that
    match, and what merges retired into either. A dry run lists exactly this."""
    targets: list[Target] = []
    if gate is not None:
        path = ForgetPath(reader, gate, scope)
        targets = [Target(seq=f.seq, memory_id=path.rows[f.seq].id, was_active=True, layer="forget",
                          reason=f.reason) for f in path.named(query, vector)]
    named = {t.memory_id for t in targets}
    for seq, mid, why in inactive_named(reader, gate, scope, query):
        if mid not in named:
            named.add(mid)
            targets.append(Target(seq=seq, memory_id=mid, was_active=False, layer="forget", reason=why))
    for seq, mid, why in earlier_named(reader, gate, scope, query):
        if mid not in named:
            named.add(mid)
            targets.append(Target(seq=seq, memory_id=mid, was_active=reader.memory_row(mid).is_active,
                                  layer="forget", reason=why))
    return with_retired(reader, scope, targets, query=query, gate=gate)


# ---- erasing -------------------------------------------------------------------------


def erase(tx: Any, gate: Any, scope: Scope, targets: list[Target], *, reason: str, now: str) -> None:
    """Purge each target once, with its ``PURGE`` history row; an active one also leaves the gate.

    ``reason`` is the request's; a target reached through a merge adds how.
    Counters: a memory that was active counts as a ``DELETE`` of its layer,
    one already inactive as a ``PURGE``.
    """
    # The text readers' memo caches may hold the purged texts: they go too.
    gate.lexicon.forget_texts()
    done: set[int] = set()
    for t in targets:
        if t.seq in done:
            continue
        done.add(t.seq)
        tx.purge_memory(t.seq, reason=f"{reason}: {t.reason}" if t.reason != reason else reason, now=now)
        tx.bump(scope, "DELETE" if t.was_active else "PURGE", t.layer)
        gate.remove(t.seq)


def rewrite_index_file(gate: Any) -> None:
    """Overwrite the scope's saved hnswlib index file with zeros, then save the index anew (its purged
    points are zero vectors, memsieve.gate.ann) or, with no index in memory, remove the file."""
    from memsieve.gate.ann import _file_lock

    path = getattr(gate, "index_path", None)
    if path is None or not os.path.exists(path):
        return
    with _file_lock(path, exclusive=True):
        try:
            with open(path, "r+b") as f:
                size = os.fstat(f.fileno()).st_size
                for start in range(0, size, 1 << 20):
                    f.write(bytes(min(1 << 20, size - start)))
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            pass  # unreadable or gone: nothing to overwrite here
    if gate.index is not None:
        gate.save_index()
    else:
        for stale in (path, path + ".json"):
            if os.path.exists(stale):
                os.unlink(stale)


def _all_targets(reader: Any, gate: Any, scope: Scope, asked: list[tuple[ForgetQuery, np.ndarray]]
                 ) -> list[Target]:
    """``forget_targets`` of every query, each memory once (the first query that names it says why)."""
    out: dict[str, Target] = {}
    for query, vector in asked:
        for t in forget_targets(reader, gate, scope, query, vector):
            out.setdefault(t.memory_id, t)
    return list(out.values())


def forget_purge(gates: Any, store: Any, scope: Scope, asked: list[tuple[ForgetQuery, np.ndarray]], *,
                 dim: int, dry_run: bool, now: str) -> list[MemoryItem]:
    """``Memory.forget(..., purge=True)``: the memories erased (tombstones), or with ``dry_run`` the ones
    a real run would erase, as they are now. ``asked``: each query of the request with its subject's vector."""
    if dry_run:
        gate = gates.for_read(scope, dim=dim)
        return [store.get(t.memory_id) for t in _all_targets(store, gate, scope, asked)]
    with gates.write(scope, dim=dim) as (tx, gate):
        targets = _all_targets(tx, gate, scope, asked)
        erase(tx, gate, scope, targets, reason="forgotten on request", now=now)
    if targets:
        rewrite_index_file(gate)
    return [store.get(i) for i in dict.fromkeys(t.memory_id for t in targets)]


def purge_by_id(gates: Any, store: Any, item: MemoryItem, *, reason: str, now: str) -> Erasure:
    """``Memory.purge``: erase one memory (active or inactive) and what merges retired into it; a memory
    purged already is left as it is, and the ``Erasure`` lists no id."""
    scope = Scope(item.user_id, item.agent_id, item.run_id)
    dim = gates.scope_dim(scope)
    assert dim is not None, "a scope with a memory has a width"
    with gates.write(scope, dim=dim) as (tx, gate):
        row = tx.memory_row(item.id)
        if not row.is_active and not row.text:
            # Purged already (a stored text is never empty): the first purge erased it and what merges
            # retired into it; another records nothing and erases nothing.
            return erasure(store, ())
        targets = with_retired(tx, scope, [Target(seq=row.seq, memory_id=item.id, was_active=row.is_active,
                                                  layer="user", reason=reason)])
        erase(tx, gate, scope, targets, reason=reason, now=now)
    rewrite_index_file(gate)
    return erasure(store, dict.fromkeys(t.memory_id for t in targets))
