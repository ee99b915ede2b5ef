"""The SQL every store shares: scope rows, memories, their versions, history,
rejections, links, counters and faults.

The SQL is written once, with psycopg's ``%s`` placeholders; the SQLite store
translates them to ``?``. What differs between dialects (boolean literals,
``IN`` lists, how an embedding is bound and read, how an insert returns its
seq, the full-text index) is a handful of small methods each store supplies.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memsieve.errors import ClosedError, NotFoundError, StoreError
from memsieve.offsets import in_offset, split_offset
from memsieve.records import HistoryEntry, MemoryItem, Rejection, merged_sources
from memsieve.scope import Scope
from memsieve.store.base import (MEMORY_COLUMNS, PURGED_HASH, REJECTION_COLUMNS, CandidatesRow, ChangesRow,
                                  MemoryRow, PartsRow, ScopeRow, memory_item, nan_to_none, none_to_nan,
                                  rejection_record, sql_limit, stack_rows)
from memsieve.store.ids import new_id
from memsieve.times import now_iso

if TYPE_CHECKING:
    from memsieve.text.passages import Part


#: Seqs bound in one statement: under SQLite's smallest limit of 999 variables
#: (builds before 3.32), so a large write or read is split, never refused.
SEQ_BATCH = 900

#: Joins each memory ``m`` to the version ``v`` that held at a time (the first
#: param): the earliest superseded version the store still knew after that
#: time. No such version (NULL) means the row's current text held then.
VERSION_AT = (
    "LEFT JOIN memory_versions v ON v.seq = (SELECT w.seq FROM memory_versions w"
    " WHERE w.memory_seq = m.seq AND w.known_to > %s ORDER BY w.known_to, w.seq LIMIT 1)"
)

#: Which memories were visible at a time (four params, all that time): known
#: to the store then, not yet deleted, and valid then. A purged memory is
#: visible at no time: its texts and vectors are gone.
VISIBLE_AT = (
    "m.created_at <= %s AND (m.expired_at IS NULL OR m.expired_at > %s)"
    " AND (m.valid_from IS NULL OR m.valid_from <= %s) AND (m.valid_to IS NULL OR m.valid_to > %s)"
    f" AND m.text_hash <> '{PURGED_HASH}'"
)


def in_force(as_of: str | None) -> tuple[str, list[str]]:
    """The condition (and its parameters) on ``merges`` rows in force now, or at ``as_of``: made by
    then and not undone by then."""
    if as_of is None:
        return " AND undone_at IS NULL", []
    return " AND created_at <= %s AND (undone_at IS NULL OR undone_at > %s)", [as_of, as_of]


class SqlRecords:
    """The SQL that is the same on every store: records, history, rejections, links, counters,
    faults, and the reads of memories by seq and at a point in time.

    A store supplies the dialect: ``_q`` (run one statement), ``_TRUE`` and
    ``_FALSE`` (its boolean literals), ``_in`` and ``_in_text`` (a ``column IN (...)``
    test of integers or of texts),
    ``_vector`` and ``_vector_param`` (an embedding read back, and one to
    bind) and ``_insert_seq`` (insert and return the new seq).
    """

    _TRUE = "TRUE"
    _FALSE = "FALSE"
    # The store's own: where it is, whether it is closed, and whether a write transaction is open.
    path: str = ""
    _closed = False
    _in_tx = False

    def _q(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _in(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:  # pragma: no cover
        """SQL testing that ``column`` is one of ``values``, and its params."""
        raise NotImplementedError

    def _in_text(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:  # pragma: no cover
        """SQL testing that the text ``column`` is one of ``values``, and its params."""
        raise NotImplementedError

    def _vector(self, raw: Any) -> np.ndarray:  # pragma: no cover
        """One stored embedding as a (d,) float32 array."""
        raise NotImplementedError

    def _vector_param(self, vector: np.ndarray) -> Any:  # pragma: no cover
        """A (d,) float32 embedding as this store binds it."""
        raise NotImplementedError

    def _insert_seq(self, sql: str, params: Sequence[Any]) -> int:  # pragma: no cover
        """Run an INSERT INTO memories and return the new row's seq."""
        raise NotImplementedError

    # ---- scope state -----------------------------------------------------------

    def ensure_scope_row(self, scope: Scope, *, now: str | None = None) -> ScopeRow:
        """The scope's state, inserting an empty row for a scope never written (inside a transaction);
        ``now``: its creation time (default: the time it is inserted)."""
        row = self.read_scope(scope)
        if row is None:
            now = now_iso() if now is None else now
            self._q(
                "INSERT INTO scopes(scope_key, user_id, agent_id, run_id, created_at) VALUES (%s,%s,%s,%s,%s)"
                " ON CONFLICT (scope_key) DO NOTHING",
                (scope.key, scope.user_id, scope.agent_id, scope.run_id, now),
            )
            return ScopeRow(revision=0, dim=None, gate_state=None, sage_tau=None)
        return row

    def read_scope(self, scope: Scope) -> ScopeRow | None:
        row = self._q("SELECT revision, dim, gate_state, sage_tau FROM scopes WHERE scope_key = %s",
                      (scope.key,)).fetchone()
        if row is None:
            return None
        return ScopeRow(revision=int(row[0]), dim=None if row[1] is None else int(row[1]),
                        gate_state=None if row[2] is None else bytes(row[2]), sage_tau=row[3])

    def peek_revision(self, scope: Scope) -> int | None:
        row = self._q("SELECT revision FROM scopes WHERE scope_key = %s", (scope.key,)).fetchone()
        return None if row is None else int(row[0])

    def save_scope(self, scope: Scope, *, revision: int, dim: int, gate_state: bytes, sage_tau: float | None) -> None:
        self._q(
            "UPDATE scopes SET revision = %s, dim = %s, gate_state = %s, sage_tau = %s WHERE scope_key = %s",
            (int(revision), int(dim), bytes(gate_state), nan_to_none(sage_tau), scope.key),
        )

    def scope_keys(self) -> list[str]:
        # Sorted here, by code point: the same order on every store and collation.
        return sorted(str(r[0]) for r in self._q("SELECT scope_key FROM scopes"))

    #: (scope key, revision) the memories this transaction inserts are written with, and their
    #: seqs (``stamp_inserts``); the stores clear both when a transaction begins and ends.
    _stamp: tuple[str, int] | None = None
    _stamped: set[int] | None = None

    def stamp_inserts(self, scope: Scope, revision: int) -> None:
        """Write the memories this transaction inserts in ``scope`` with ``revision``, the one
        ``mark_changed`` will be called with: they need no update after (a statement less on an
        add). Lasts until the transaction ends.

        Raises:
            ClosedError: the store is closed.
            StoreError: no write transaction is open.
        """
        if self._closed:
            raise ClosedError(f"the store {self.path!r}")
        if not self._in_tx:
            raise StoreError("stamp_inserts outside a write transaction; this is a bug in memsieve")
        self._stamp, self._stamped = (scope.key, int(revision)), set()

    def _clear_stamp(self) -> None:
        self._stamp = self._stamped = None

    def mark_changed(self, scope: Scope, seqs: Sequence[int], revision: int) -> None:
        if self._stamped and self._stamp == (scope.key, int(revision)):
            seqs = [s for s in seqs if s not in self._stamped]
        if not seqs:
            return
        self._for_seqs("UPDATE memories SET changed_rev = %s WHERE scope_key = %s AND", "seq", seqs,
                       before=(int(revision), scope.key), fetch=False)

    def changes_since(self, scope: Scope, revision: int, dim: int) -> ChangesRow:
        """Memories of the scope changed after ``revision``; a row of another width stays zero.

        Inactive rows are only removed, so neither their vector nor their text
        is read (a purged row has neither).
        """
        rows = self._q(
            f"SELECT seq, is_active, CASE WHEN is_active = {self._TRUE} THEN embedding END, share,"
            f" CASE WHEN is_active = {self._TRUE} THEN text ELSE '' END FROM memories WHERE scope_key = %s"
            " AND changed_rev > %s ORDER BY seq", (scope.key, int(revision)), binary=True).fetchall()
        matrix = np.zeros((len(rows), dim), dtype=np.float32)
        for i, r in enumerate(rows):
            v = self._vector(r[2])
            if v.shape[0] == dim:
                matrix[i] = v
        return ChangesRow(seqs=np.array([r[0] for r in rows], dtype=np.int64),
                          active=np.array([bool(r[1]) for r in rows], dtype=bool), matrix=matrix,
                          shares=np.array([none_to_nan(r[3]) for r in rows], dtype=np.float64),
                          texts=[str(r[4]) for r in rows],
                          parts=self.parts_of([int(r[0]) for r in rows if r[1]], dim))

    # ---- passages of long memories (migration 10) ------------------------------

    def scope_parts(self, scope: Scope, dim: int) -> PartsRow:
        """The passage rows of the scope's active memories, by seq then part; a row of another width is left out."""
        rows = self._q(
            "SELECT p.memory_seq, p.part, p.embedding FROM memory_parts p JOIN memories m ON m.seq = p.memory_seq"
            f" WHERE m.scope_key = %s AND m.is_active = {self._TRUE} ORDER BY p.memory_seq, p.part",
            (scope.key,), binary=True).fetchall()
        return self._parts_row(rows, dim)

    def parts_of(self, seqs: Sequence[int], dim: int) -> PartsRow:
        """The part rows (passages, sentence keys) of these memories, by seq then part."""
        rows = self._for_seqs("SELECT memory_seq, part, embedding FROM memory_parts WHERE", "memory_seq", seqs,
                              binary=True)
        return self._parts_row(sorted(rows, key=lambda r: (int(r[0]), int(r[1]))), dim)

    def version_parts_of(self, versions: Sequence[int], dim: int) -> PartsRow:
        """The part rows these superseded texts had (``memory_versions`` seqs), under their memories' seqs."""
        rows = self._for_seqs("SELECT memory_seq, part, embedding FROM version_parts WHERE", "version_seq",
                              versions, binary=True)
        return self._parts_row(sorted(rows, key=lambda r: (int(r[0]), int(r[1]))), dim)

    def _parts_row(self, rows: Sequence[Any], dim: int) -> PartsRow:
        vectors = [(int(r[0]), int(r[1]), self._vector(r[2])) for r in rows]
        vectors = [v for v in vectors if v[2].shape[0] == dim]
        if not vectors:
            return PartsRow.empty(dim)
        return PartsRow(seqs=np.array([v[0] for v in vectors], dtype=np.int64),
                        parts=np.array([v[1] for v in vectors], dtype=np.int64),
                        matrix=np.ascontiguousarray(np.stack([v[2] for v in vectors]), dtype=np.float32))

    def _put_parts(self, seq: int, parts: Sequence["Part"], *, fresh: bool = False) -> None:
        """Make ``parts`` the memory's part rows (none: it has none); ``fresh``: a memory inserted
        in this transaction, which has no part rows to replace."""
        if not fresh:
            self._q("DELETE FROM memory_parts WHERE memory_seq = %s", (int(seq),))
        for p in parts:
            self._q("INSERT INTO memory_parts(memory_seq, part, start_char, end_char, embedding)"
                    " VALUES (%s,%s,%s,%s,%s)",
                    (int(seq), int(p.index), int(p.start), int(p.end), self._vector_param(p.vector)))

    # ---- memories: writes --------------------------------------------------------

    def insert_memory(self, scope: Scope, *, text: str, text_hash: str, embedding: np.ndarray, share: float,
                      metadata: dict[str, Any], sources: list[str], valid_from: str | None,
                      now: str, parts: Sequence["Part"] = ()) -> tuple[int, str]:
        memory_id = new_id()
        utc, offset = split_offset(valid_from or now)
        # The offset column is named only when there is an offset: a time in UTC is written by the
        # statement every schema since step 1 takes.
        extra, marks = (", valid_from_offset", ",%s") if offset is not None else ("", "")
        stamp = self._stamp if self._stamp is not None and self._stamp[0] == scope.key else None
        if stamp is not None:
            extra, marks = extra + ", changed_rev", marks + ",%s"
        seq = self._insert_seq(
            "INSERT INTO memories(id, scope_key, text, text_hash, embedding, share, metadata, source, sources,"
            f" last_seen_at, valid_from, created_at{extra}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s{marks})",
            (
                memory_id, scope.key, text, text_hash, self._vector_param(embedding), nan_to_none(share),
                json.dumps(metadata), sources[0] if sources else None, json.dumps(sources), now,
                utc, now, *((offset,) if offset is not None else ()), *((stamp[1],) if stamp is not None else ()),
            ),
        )
        if stamp is not None and self._stamped is not None:
            self._stamped.add(seq)
        if parts:
            self._put_parts(seq, parts, fresh=True)
        return seq, memory_id

    def touch_memory(self, seq: int, *, sources: list[str], now: str) -> None:
        """A NOOP folded into this memory: count it, and keep where it came from."""
        row = self._q("SELECT sources FROM memories WHERE seq = %s", (seq,)).fetchone()
        merged = merged_sources(json.loads(row[0]) if row else [], sources)
        self._q("UPDATE memories SET seen_count = seen_count + 1, last_seen_at = %s, sources = %s WHERE seq = %s",
                (now, json.dumps(merged), seq))

    def update_memory_text(self, seq: int, *, text: str, text_hash: str, embedding: np.ndarray, now: str,
                           parts: Sequence["Part"] = ()) -> None:
        """Replace the memory's text, embedding and passages, keeping the outgoing text and embedding as a
        version (for ``as_of``); the outgoing passages go."""
        self._record_version(seq, now=now)
        self._q("UPDATE memories SET text = %s, text_hash = %s, embedding = %s, updated_at = %s WHERE seq = %s",
                (text, text_hash, self._vector_param(embedding), now, seq))
        self._put_parts(seq, parts)

    def soft_delete(self, seq: int, *, now: str, valid_to: str | None) -> None:
        self._q(
            f"UPDATE memories SET is_active = {self._FALSE}, expired_at = %s, valid_to = COALESCE(%s, valid_to, %s)"
            " WHERE seq = %s",
            (now, split_offset(valid_to)[0], now, seq),
        )

    # ---- memories: reads --------------------------------------------------

    def get(self, memory_id: str) -> MemoryItem:
        row = self._q(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = %s", (memory_id,)).fetchone()
        if row is None:
            raise NotFoundError.no_memory(memory_id)
        return memory_item(row)

    def get_all(self, scope: Scope, *, include_inactive: bool, limit: int | None) -> list[MemoryItem]:
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope_key = %s"
        if not include_inactive:
            sql += f" AND m.is_active = {self._TRUE}"
        sql += " ORDER BY m.seq"
        if limit is not None:
            sql += f" LIMIT {sql_limit(limit)}"
        return [memory_item(r) for r in self._q(sql, (scope.key,))]

    def active_by_hash(self, scope: Scope, text_hash: str) -> tuple[int, str] | None:
        row = self._q(
            f"SELECT seq, id FROM memories WHERE scope_key = %s AND text_hash = %s AND is_active = {self._TRUE}"
            " ORDER BY seq LIMIT 1",
            (scope.key, text_hash),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def actives_by_hash(self, scope: Scope, text_hash: str) -> list[tuple[int, str]]:
        """Every active memory of the scope with this text hash, (seq, id) by seq."""
        rows = self._q(
            f"SELECT seq, id FROM memories WHERE scope_key = %s AND text_hash = %s AND is_active = {self._TRUE}"
            " ORDER BY seq",
            (scope.key, text_hash),
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def memory_row(self, memory_id: str) -> MemoryRow:
        row = self._q("SELECT seq, scope_key, text, embedding, share, is_active FROM memories WHERE id = %s",
                      (memory_id,), binary=True).fetchone()
        if row is None:
            raise NotFoundError.no_memory(memory_id)
        return MemoryRow(seq=int(row[0]), scope_key=str(row[1]), text=str(row[2]),
                         embedding=np.array(self._vector(row[3]), dtype=np.float32), share=none_to_nan(row[4]),
                         is_active=bool(row[5]))

    def ids_for_seqs(self, seqs: Sequence[int]) -> dict[int, str]:
        return {int(s): str(i) for s, i in self._for_seqs("SELECT seq, id FROM memories WHERE", "seq", seqs)}

    def embeddings_for_seqs(self, seqs: Sequence[int]) -> dict[int, np.ndarray]:
        """The current embedding of each memory found, a (d,) float32 copy; a purged memory has none."""
        rows = self._for_seqs("SELECT seq, embedding FROM memories WHERE", "seq", seqs, binary=True)
        vectors = ((int(r[0]), self._vector(r[1])) for r in rows)
        return {s: np.array(v, dtype=np.float32) for s, v in vectors if v.shape[0]}

    def items_for_seqs(self, seqs: Sequence[int]) -> dict[int, MemoryItem]:
        rows = self._for_seqs(f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE", "m.seq", seqs)
        return {int(r[0]): memory_item(r[1:]) for r in rows}

    def _for_seqs(self, head: str, column: str, seqs: Sequence[int], *, before: Sequence[Any] = (),
                  fetch: bool = True, binary: bool = False) -> list[Any]:
        """Run ``head`` + a test that ``column`` is one of ``seqs``, in batches; the rows of every batch."""
        unique = list(dict.fromkeys(int(s) for s in seqs))
        rows: list[Any] = []
        for start in range(0, len(unique), SEQ_BATCH):
            where, params = self._in(column, unique[start:start + SEQ_BATCH])
            result = self._q(f"{head} {where}", [*before, *params], binary=binary)
            if fetch:
                rows.extend(result.fetchall())
        return rows

    # ---- memories as they were -------------------------------------------------

    def items_at(self, seqs: Sequence[int], as_of: str) -> dict[int, MemoryItem]:
        """The memories with these seqs, each with the text it had at ``as_of`` (ISO time); none purged."""
        columns = MEMORY_COLUMNS.replace("m.text,", "COALESCE(v.text, m.text),", 1)
        rows = self._for_seqs(f"SELECT m.seq, {columns} FROM memories m {VERSION_AT}"
                              f" WHERE m.text_hash <> '{PURGED_HASH}' AND", "m.seq", seqs, before=(as_of,))
        return {int(r[0]): memory_item(r[1:]) for r in rows}

    def candidates(self, scope: Scope, *, as_of: str | None) -> CandidatesRow:
        """The memories visible at ``as_of`` (None: active now) with the text and embedding they had then."""
        if as_of is None:
            rows = self._q(
                "SELECT m.seq, m.embedding, m.metadata, m.text, -1 FROM memories m"
                f" WHERE m.scope_key = %s AND m.is_active = {self._TRUE} ORDER BY m.seq",
                (scope.key,), binary=True).fetchall()
        else:
            # No version known after as_of: the text then is today's (every text change keeps one).
            rows = self._q(
                "SELECT m.seq, COALESCE(v.embedding, m.embedding), m.metadata, COALESCE(v.text, m.text),"
                f" COALESCE(v.seq, -1) FROM memories m {VERSION_AT}"
                f" WHERE m.scope_key = %s AND {VISIBLE_AT} ORDER BY m.seq",
                (as_of, scope.key, as_of, as_of, as_of, as_of), binary=True).fetchall()
            if retired := self._retired_at(scope, as_of):
                rows = [r for r in rows if int(r[0]) not in retired]
        return CandidatesRow(
            seqs=np.array([r[0] for r in rows], dtype=np.int64),
            matrix=stack_rows([self._vector(r[1]) for r in rows], where=f"scope {scope.key!r}"),
            texts=[str(r[3]) for r in rows], metadata=[json.loads(r[2]) for r in rows],
            versions=np.array([int(r[4]) for r in rows], dtype=np.int64))

    def _merges_in_force(self, scope: Scope, *, as_of: str | None = None) -> list[tuple[str, list[str]]]:
        """(kept id, member ids) of the scope's merges in force now, or at ``as_of`` (made by then and
        not undone by then), oldest first."""
        when, at = in_force(as_of)
        return [(str(kept), [str(m) for m in json.loads(members)]) for kept, members in self._q(
            f"SELECT kept_id, member_ids FROM merges WHERE scope_key = %s{when} ORDER BY created_at",
            (scope.key, *at)).fetchall()]

    def _seqs_of_ids(self, scope: Scope, ids: Collection[str]) -> dict[str, int]:
        """Memory id -> seq, of the ids the scope holds (purged ones too)."""
        wanted = sorted(set(ids))
        out: dict[str, int] = {}
        for start in range(0, len(wanted), SEQ_BATCH):
            where, params = self._in_text("id", wanted[start:start + SEQ_BATCH])
            out.update((str(i), int(s)) for i, s in self._q(
                f"SELECT id, seq FROM memories WHERE scope_key = %s AND {where}", (scope.key, *params)).fetchall())
        return out

    def _retired_at(self, scope: Scope, as_of: str) -> set[int]:
        """The seqs of the memories merges in force at ``as_of`` had retired. An undo since puts a
        member back as it was, its expiry cleared, so its row no longer says it was retired then;
        the merge's record does (a merge still in force expired its members already)."""
        members = {m for kept, ids in self._merges_in_force(scope, as_of=as_of) for m in ids if m != kept}
        return set(self._seqs_of_ids(scope, members).values()) if members else set()

    def _record_version(self, seq: int, *, now: str) -> None:
        """Keep the memory's current text, embedding and parts as a version the store knew until ``now``."""
        self._q(
            "INSERT INTO memory_versions(memory_seq, text, text_hash, embedding, known_from, known_to)"
            " SELECT seq, text, text_hash, embedding, COALESCE(updated_at, created_at), %s FROM memories"
            " WHERE seq = %s", (now, seq))
        self._q(
            "INSERT INTO version_parts(version_seq, memory_seq, part, embedding)"
            " SELECT (SELECT MAX(v.seq) FROM memory_versions v WHERE v.memory_seq = %s), p.memory_seq, p.part,"
            " p.embedding FROM memory_parts p WHERE p.memory_seq = %s", (seq, seq))

    # ---- history -------------------------------------------------------------

    def add_history(self, memory_id: str, scope: Scope, *, event: str, old_text: str | None,
                    new_text: str | None, layer: str, reason: str, now: str,
                    extra: dict[str, Any] | None = None) -> None:
        self._q(
            "INSERT INTO history(memory_id, scope_key, event, old_text, new_text, layer, reason, extra, created_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (memory_id, scope.key, event, old_text, new_text, layer, reason, json.dumps(extra or {}), now),
        )

    def history(self, memory_id: str) -> list[HistoryEntry]:
        rows = self._q(
            "SELECT memory_id, event, old_text, new_text, layer, reason, created_at, extra FROM history"
            " WHERE memory_id = %s ORDER BY seq",
            (memory_id,),
        ).fetchall()
        return [HistoryEntry(memory_id=r[0], event=r[1], old_text=r[2], new_text=r[3], layer=r[4], reason=r[5],
                             created_at=r[6], extra=json.loads(r[7])) for r in rows]

    # ---- rejections ----------------------------------------------------------

    def add_rejection(self, scope: Scope, *, text: str, sources: list[str], metadata: dict[str, Any],
                      layer: str, novelty: float, tau: float, delta: float, kappa: float,
                      nearest_id: str | None, nearest_cos: float, reason: str, valid_from: str | None,
                      now: str, information: float = math.nan) -> str:
        """Record a refused candidate; ``information`` is the gate's information term (nan: not computed)."""
        rejection_id = new_id()
        utc, offset = split_offset(valid_from)
        self._q(
            "INSERT INTO rejections(id, scope_key, text, source, metadata, layer, novelty, tau, delta, kappa,"
            " nearest_id, nearest_cos, reason, valid_from, valid_from_offset, created_at, information)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (
                rejection_id, scope.key, text, json.dumps(sources) if sources else None, json.dumps(metadata),
                layer, nan_to_none(novelty), nan_to_none(tau), nan_to_none(delta), nan_to_none(kappa),
                nearest_id, nan_to_none(nearest_cos), reason, utc, offset, now, nan_to_none(information),
            ),
        )
        return rejection_id

    def rejection(self, rejection_id: str) -> tuple[Rejection, str, str | None]:
        """The rejection, its scope key, and its valid_from in the offset it was given in."""
        row = self._q(f"SELECT {REJECTION_COLUMNS}, valid_from, valid_from_offset FROM rejections WHERE id = %s",
                      (rejection_id,)).fetchone()
        if row is None:
            raise NotFoundError.no_rejection(rejection_id)
        return rejection_record(row[:-2]), row[2], in_offset(row[-2], None if row[-1] is None else int(row[-1]))

    def rejections(self, scope: Scope, *, since: str | None, layer: str | None, limit: int | None) -> list[Rejection]:
        sql = f"SELECT {REJECTION_COLUMNS} FROM rejections WHERE scope_key = %s"
        params: list[Any] = [scope.key]
        if since is not None:
            sql += " AND created_at >= %s"
            params.append(since)
        if layer is not None:
            sql += " AND layer = %s"
            params.append(layer)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {sql_limit(limit)}"
        return [rejection_record(r) for r in self._q(sql, params)]

    def _folds_leave(self, where: str, params: Sequence[Any]) -> None:
        """Count, per scope, the rejections ``where`` selects as leaving search (``folds_signature``);
        run before the statement that makes them leave."""
        self._q(f"UPDATE scopes SET folds_left = folds_left + 1 WHERE scope_key IN"
                f" (SELECT scope_key FROM rejections WHERE {where})", params)

    def mark_restored(self, rejection_id: str, memory_id: str, now: str) -> None:
        self._folds_leave("id = %s", (rejection_id,))
        self._q("UPDATE rejections SET restored_memory_id = %s, restored_at = %s WHERE id = %s",
                (memory_id, now, rejection_id))

    # ---- links, counters, faults ---------------------------------------------

    def add_link(self, memory_id: str, linked_id: str, *, kind: str, cosine: float, now: str) -> None:
        self._q(
            "INSERT INTO links(memory_id, linked_id, kind, cosine, created_at) VALUES (%s,%s,%s,%s,%s)"
            " ON CONFLICT DO NOTHING",
            (memory_id, linked_id, kind, nan_to_none(cosine), now),
        )

    def links(self, memory_id: str) -> list[tuple[str, str, float | None]]:
        return [(r[0], r[1], r[2]) for r in self._q(
            "SELECT linked_id, kind, cosine FROM links WHERE memory_id = %s"
            " UNION ALL SELECT memory_id, kind, cosine FROM links WHERE linked_id = %s", (memory_id, memory_id))]

    def version_links(self, memory_ids: Sequence[str],
                      kinds: Sequence[str] = ("updates", "supersedes")) -> list[tuple[str, str, str]]:
        """Every link of one of ``kinds`` with either end among ``memory_ids``: [(memory_id, linked_id, kind)].

        One statement per batch of ids (each id is bound twice, once per end,
        so a batch holds half of SEQ_BATCH); sorted by code point, so both
        stores return the same list.
        """
        unique = list(dict.fromkeys(str(i) for i in memory_ids))
        wanted = list(dict.fromkeys(str(k) for k in kinds))
        if not unique or not wanted:
            return []
        found: set[tuple[str, str, str]] = set()
        step = SEQ_BATCH // 2
        for start in range(0, len(unique), step):
            batch = unique[start:start + step]
            kind_in, kind_params = self._in_text("kind", wanted)
            from_in, from_params = self._in_text("memory_id", batch)
            to_in, to_params = self._in_text("linked_id", batch)
            rows = self._q(f"SELECT memory_id, linked_id, kind FROM links WHERE {kind_in} AND ({from_in} OR {to_in})",
                           [*kind_params, *from_params, *to_params])
            found.update((str(r[0]), str(r[1]), str(r[2])) for r in rows)
        return sorted(found)

    def bump(self, scope: Scope, event: str, layer: str) -> None:
        self._q(
            "INSERT INTO counters(scope_key, event, layer, n) VALUES (%s,%s,%s,1)"
            " ON CONFLICT (scope_key, event, layer) DO UPDATE SET n = counters.n + 1",
            (scope.key, event, layer),
        )

    def counters(self, scope: Scope) -> list[tuple[str, str, int]]:
        return [(r[0], r[1], int(r[2])) for r in self._q(
            "SELECT event, layer, n FROM counters WHERE scope_key = %s", (scope.key,))]

    def add_fault(self, scope: Scope, *, kind: str, detail: str, raw: str | None, now: str) -> None:
        self._q("INSERT INTO faults(scope_key, kind, detail, raw, created_at) VALUES (%s,%s,%s,%s,%s)",
                (scope.key, kind, detail, raw, now))

    def faults(self, scope: Scope) -> list[dict[str, Any]]:
        return [{"kind": r[0], "detail": r[1], "raw": r[2], "created_at": r[3]} for r in self._q(
            "SELECT kind, detail, raw, created_at FROM faults WHERE scope_key = %s ORDER BY seq", (scope.key,))]

    # ---- counts and housekeeping ---------------------------------------------

    def count_active(self, scope: Scope) -> int:
        return int(self._q("SELECT COUNT(*) FROM memories WHERE scope_key = %s AND is_active",
                           (scope.key,)).fetchone()[0])

    def count_rejections(self, scope: Scope) -> int:
        return int(self._q("SELECT COUNT(*) FROM rejections WHERE scope_key = %s", (scope.key,)).fetchone()[0])
