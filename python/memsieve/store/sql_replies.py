"""The REST service's kept answers to idempotent writes (table ``replies``, migration step 11).

A write sent with an ``Idempotency-Key`` first claims the key (a row with no
status); when it has been answered, the answer is kept on that row. A retry
with the same key finds the row: the kept answer if there is one, else "still
running". A claim's ``created_at`` is when its holder was last heard from: the
holder refreshes it while its request runs (``touch_reply``), so a claim not
refreshed since ``stale_before`` belonged to a request that died (a killed
server) and is taken over; the write path's exact dedup then keeps a write
that did land from being added twice.
"""

from __future__ import annotations

from memsieve.store.base import KeptReply
from memsieve.store.sql_records import SqlRecords


class SqlReplies(SqlRecords):
    """``claim_reply``, ``touch_reply``, ``keep_reply``, ``drop_reply`` and ``expire_replies`` on the shared SQL."""

    def claim_reply(self, key_name: str, idem_key: str, *, scope_key: str | None, fingerprint: str, now: str,
                    stale_before: str) -> KeptReply | None:
        """Claim ``idem_key`` for a request; None when this request holds it, else what holds it."""
        claimed = self._q(
            "INSERT INTO replies(key_name, idem_key, scope_key, fingerprint, status, body, created_at)"
            " VALUES (%s,%s,%s,%s,NULL,NULL,%s) ON CONFLICT (key_name, idem_key) DO NOTHING RETURNING key_name",
            (key_name, idem_key, scope_key, fingerprint, now)).fetchone()
        if claimed is not None:
            return None
        taken = self._q(
            "UPDATE replies SET fingerprint = %s, scope_key = %s, created_at = %s WHERE key_name = %s"
            " AND idem_key = %s AND status IS NULL AND created_at < %s AND fingerprint = %s RETURNING key_name",
            (fingerprint, scope_key, now, key_name, idem_key, stale_before, fingerprint)).fetchone()
        if taken is not None:
            return None
        row = self._q("SELECT fingerprint, status, body, created_at FROM replies WHERE key_name = %s"
                      " AND idem_key = %s", (key_name, idem_key)).fetchone()
        if row is None:  # expired between the two statements: claim again
            return self.claim_reply(key_name, idem_key, scope_key=scope_key, fingerprint=fingerprint, now=now,
                                    stale_before=stale_before)
        return KeptReply(str(row[0]), None if row[1] is None else int(row[1]), row[2], str(row[3]))

    def keep_reply(self, key_name: str, idem_key: str, *, status: int, body: str) -> None:
        """Keep the answer of the request that holds ``idem_key``."""
        self._q("UPDATE replies SET status = %s, body = %s WHERE key_name = %s AND idem_key = %s",
                (int(status), body, key_name, idem_key))

    def drop_reply(self, key_name: str, idem_key: str) -> None:
        """Release a claim whose request failed before writing, so that a retry runs it."""
        self._q("DELETE FROM replies WHERE key_name = %s AND idem_key = %s", (key_name, idem_key))

    def touch_reply(self, key_name: str, idem_key: str, *, now: str) -> None:
        """Mark a running claim as heard from at ``now``; an answered one keeps its time (its expiry)."""
        self._q("UPDATE replies SET created_at = %s WHERE key_name = %s AND idem_key = %s AND status IS NULL",
                (now, key_name, idem_key))

    def expire_replies(self, before: str) -> None:
        """Forget the answers kept since before ``before``."""
        self._q("DELETE FROM replies WHERE created_at < %s", (before,))

    def _scrub_replies(self, scope_key: str, ids: set[str]) -> None:
        """A purge deletes the kept answers of its scope and any that name a purged id: they quote texts.

        A claim still running holds no answer yet, and is kept: the purge's own request holds one, and a
        retry of the purge must be answered with it, not run again (a forget matched anew may reach
        other memories)."""
        self._q("DELETE FROM replies WHERE scope_key = %s AND status IS NOT NULL", (scope_key,))
        for found in ids:
            self._q("DELETE FROM replies WHERE status IS NOT NULL AND body LIKE %s", (f"%{found}%",))
