"""The texts folded into memories, as search shows them and a request to forget reads them.

A NOOP's rejection record keeps the text it folded (``nearest_id`` is the memory it went into);
search shows the latest of those that say words their memory does not (memsieve.read.folded),
following the merges that retired a memory into another. Shared by the SQLite and PostgreSQL
stores, on top of ``SqlRecords``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memsieve.records import Folded
from memsieve.scope import Scope
from memsieve.store.base import sql_limit
from memsieve.store.sql_records import SEQ_BATCH, SqlRecords, in_force


class SqlFolds(SqlRecords):
    """Reads and marks of folded texts (``folds_into``, ``shown_folds``, ``forget_folds``) and the
    members merges retired into a memory (``retired_members``, ``retired_into``)."""

    def folds_into(self, scope: Scope, memory_ids: Sequence[str], *, newest: int,
                   as_of: str | None = None) -> dict[str, list[Folded]]:
        """Per memory, the latest ``newest`` texts folded into it and still held, newest first.

        A fold is a rejection whose ``nearest_id`` is the memory, not restored as a memory of its
        own, not named by a request to forget, and not purged (a purge empties its text).
        ``as_of`` keeps the folds the store had learned by then. One bounded read per memory, so
        a memory that thousands of texts were folded into ("thanks!") costs as much as one with
        ``newest``.
        """
        ids = list(dict.fromkeys(str(m) for m in memory_ids))
        if not ids or newest < 1:
            return {}
        when = "" if as_of is None else " AND created_at <= %s"
        one = ("SELECT * FROM (SELECT nearest_id, id, text, valid_from, valid_from_offset, created_at, source,"
               " metadata"
               " FROM rejections WHERE nearest_id = %s AND scope_key = %s AND restored_memory_id IS NULL"
               f" AND forgotten_at IS NULL AND text <> ''{when} ORDER BY seq DESC LIMIT {sql_limit(newest)}) AS f")
        params: list[Any] = []
        for memory_id in ids:
            params += [memory_id, scope.key] + ([] if as_of is None else [as_of])
        out: dict[str, list[Folded]] = {}
        for r in self._q(" UNION ALL ".join([one] * len(ids)), params):
            source = json.loads(r[6]) if r[6] else []
            out.setdefault(str(r[0]), []).append(Folded(
                id=str(r[1]), text=str(r[2]), valid_from=r[3], created_at=str(r[5]),
                valid_from_offset=None if r[4] is None else int(r[4]), source=source[0] if source else None,
                metadata=json.loads(r[7]) if r[7] else {}))
        return out

    def shown_folds(self, scope: Scope) -> list[tuple[str, str, str]]:
        """(rejection id, text, id of the memory it went into) of every fold of the scope that search
        may show (``folds_into``), whether its memory is active, retired into another by a merge, or
        inactive and to be restored: what a request to forget reads."""
        return [(str(r[0]), str(r[1]), str(r[2])) for r in self._q(
            "SELECT id, text, nearest_id FROM rejections WHERE scope_key = %s AND nearest_id IS NOT NULL"
            " AND restored_memory_id IS NULL AND forgotten_at IS NULL AND text <> '' ORDER BY seq", (scope.key,))]

    def folds_after(self, scope: Scope, after: int) -> list[tuple[int, str, int, str, dict[str, Any]]]:
        """(fold seq, text, seq of the memory it went into, created_at, metadata) of each fold of the
        scope search may show (``folds_into``) told after the fold ``after``, oldest first, exact
        duplicates aside (they say no word their memory does not): what keyword search reads a
        fold's words from (memsieve.read.fold_keys)."""
        return [(int(r[0]), str(r[1]), int(r[2]), str(r[3]), json.loads(r[4]) if r[4] else {}) for r in self._q(
            "SELECT r.seq, r.text, m.seq, r.created_at, r.metadata FROM rejections r JOIN memories m"
            " ON m.id = r.nearest_id WHERE r.scope_key = %s AND r.seq > %s AND r.nearest_id IS NOT NULL"
            " AND r.layer <> 'exact' AND r.restored_memory_id IS NULL AND r.forgotten_at IS NULL"
            " AND r.text <> '' ORDER BY r.seq", (scope.key, int(after)))]

    def folds_signature(self, scope: Scope) -> tuple[int, int]:
        """(the newest fold's seq, how many folds left search) of the scope, in two index reads: a
        fold told since raises the first, one restored, forgotten or purged the second."""
        row = self._q("SELECT (SELECT max(seq) FROM rejections WHERE scope_key = %s AND nearest_id IS NOT NULL"
                      " AND layer <> 'exact'), (SELECT folds_left FROM scopes WHERE scope_key = %s)",
                      (scope.key, scope.key)).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def forget_folds(self, named: Sequence[tuple[str, str]], *, now: str) -> None:
        """Mark folds, (rejection id, why) each, as named by a request to forget: they leave search;
        their records stay, the why added to their reason."""
        ids = [str(rejection_id) for rejection_id, _ in named]
        for start in range(0, len(ids), SEQ_BATCH):  # one count per batch, not per fold
            self._folds_leave(*self._in_text("id", ids[start:start + SEQ_BATCH]))
        for rejection_id, why in named:
            self._q("UPDATE rejections SET forgotten_at = %s, reason = reason || %s"
                    " WHERE id = %s AND forgotten_at IS NULL", (now, f"; forgotten on request: {why}",
                                                                 str(rejection_id)))

    def retired_members(self, scope: Scope, kept_ids: Sequence[str], *,
                        as_of: str | None = None) -> dict[str, str]:
        """Member id -> the one of ``kept_ids`` it was retired into by merges in force, at any depth
        (a merge may retire a memory kept by an earlier one): what search reads the folds of with
        the kept memory (memsieve.read.folded). One read per round of merges.

        ``as_of`` follows the merges in force then: made by that time and not undone by it. A
        memory merged away since was its own memory then, with its own folds."""
        frontier = {str(k): str(k) for k in kept_ids}
        seen = set(frontier)
        out: dict[str, str] = {}
        when, at = in_force(as_of)
        while frontier:
            marks = ",".join(["%s"] * len(frontier))
            rows = self._q(f"SELECT kept_id, member_ids FROM merges WHERE scope_key = %s{when}"
                           f" AND kept_id IN ({marks})", (scope.key, *at, *frontier)).fetchall()
            nxt: dict[str, str] = {}
            for kept, members in rows:
                for member in json.loads(members):
                    if member not in seen:
                        seen.add(member)
                        out[member] = nxt[member] = frontier[str(kept)]
            frontier = nxt
        return out

    def merges_signature(self, scope: Scope) -> tuple[int, int]:
        """(merges recorded, merges undone) of the scope: either moves when a consolidation merges or
        an undo takes a merge back, so a reading of ``retired_into`` kept with it is still true."""
        row = self._q("SELECT count(*), count(undone_at) FROM merges WHERE scope_key = %s", (scope.key,)).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def retired_into(self, scope: Scope, *, as_of: str | None = None) -> dict[int, int]:
        """Member seq -> the seq of the memory merges in force retired it into, at any depth (a
        memory kept by one merge and retired by a later one leads to the later one's): what keyword
        search reads a retired member's folds' words as (memsieve.read.fold_keys). ``as_of``: the
        merges in force then (``retired_members``)."""
        into: dict[str, str] = {}
        for kept, members in self._merges_in_force(scope, as_of=as_of):
            for member in members:
                if member != kept:
                    into[member] = kept
        top: dict[str, str] = {}
        for member in into:
            kept, seen = into[member], {member}
            while kept in into and kept not in seen:  # followed up the chain; a loop is not followed
                seen.add(kept)
                kept = into[kept]
            top[member] = kept
        seq_of = self._seqs_of_ids(scope, set(top) | set(top.values()))
        return {seq_of[m]: seq_of[k] for m, k in top.items() if m in seq_of and k in seq_of}
