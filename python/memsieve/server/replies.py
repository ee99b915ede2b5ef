"""Idempotent writes: a write sent with ``Idempotency-Key: K`` runs once per (API key, K).

A client that sent a write and got no answer (a timeout, a dropped
connection, a killed server) cannot know whether it landed; with a key it can
simply send it again:

- the first request claims K in the store's ``replies`` table, runs, and keeps
  its answer there when it succeeded (a 2xx), or releases K when it failed
  (so that a retry runs it);
- a retry with the same K and the same request (method, path, query and body,
  by SHA-256) gets the kept answer, with ``Idempotent-Replayed: true``;
- a retry while the first is still running gets 409 (ReplyPendingError): retry
  in a moment;
- K sent with another request gets 422 (ReplyMismatchError).

The claim is in the store, so every server process on one PostgreSQL sees it.
While its request runs, the holder refreshes the claim every ``HEARTBEAT_S``;
a claim not refreshed for ``STALE_S`` belonged to a server that died mid-way
(a kill -9, a lost machine), and the next retry takes it over, seconds after
the death rather than after the longest a write could take. The write path's
exact dedup then keeps a write that did land from being stored twice. Kept answers quote texts, so a purge in
their scope deletes them (memsieve.store.sql_replies), and they expire after
``KEEP_S``.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from memsieve.errors import InvalidInputError
from memsieve.server.errors import ReplyMismatchError, ReplyPendingError

#: How long an answer is kept for a retry.
KEEP_S = 24 * 3600
#: How often a running request refreshes its claim: a write may run for minutes (an LLM step).
HEARTBEAT_S = 5.0
#: A claim not refreshed for this long (six heartbeats) belonged to a server that died; a retry takes it over.
STALE_S = 30.0
_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: The header of an answer that was kept, not made now.
REPLAYED = {"idempotent-replayed": "true"}


def check_key(value: str | None) -> str | None:
    """The request's Idempotency-Key, checked (None: the request has none).

    Raises:
        InvalidInputError: not 1-128 characters of letters, digits and ``. _ : -``.
    """
    if value is None:
        return None
    if not _KEY.fullmatch(value):
        raise InvalidInputError(f"the Idempotency-Key header takes 1-128 letters, digits, '.', '_', ':' or '-', got "
                                f"{value[:40]!r}; send a UUID")
    return value


def fingerprint(method: str, path: str, query: bytes, body: bytes) -> str:
    """SHA-256 of what makes two requests the same request."""
    h = hashlib.sha256()
    for part in (method.encode(), path.encode(), query, body):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat()


class Replies:
    """One server process's door to the store's kept answers."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._expired_at = 0.0

    async def run(self, *, key_name: str, idem_key: str, scope_key: str | None, request_print: str,
                  produce: Callable[[], Awaitable[tuple[int, bytes]]]) -> tuple[int, bytes, bool]:
        """(status, body, replayed): the kept answer of ``idem_key``, or ``produce()``'s, kept when a 2xx.

        Raises:
            ReplyPendingError: the first request with this key is still running.
            ReplyMismatchError: the key was used for another request.
        """
        now = time.time()
        if now - self._expired_at > 3600:  # once an hour per process is enough for a day's keep
            self._expired_at = now
            await asyncio.to_thread(self.store.expire_replies, _iso(now - KEEP_S))
        held = await asyncio.to_thread(self.store.claim_reply, key_name, idem_key, scope_key=scope_key,
                                       fingerprint=request_print, now=_iso(now), stale_before=_iso(now - STALE_S))
        if held is not None:
            if held.fingerprint != request_print:
                raise ReplyMismatchError(f"the Idempotency-Key {idem_key!r} was used for another request (another "
                                         "method, path or body); make a new key for a new request")
            if held.status is None:
                started = datetime.fromisoformat(held.created_at)
                age = (datetime.now(timezone.utc) - started) / timedelta(seconds=1)
                raise ReplyPendingError(f"a request with the Idempotency-Key {idem_key!r} is still running "
                                        f"(its server was heard from {age:.0f} s ago); retry in a moment to get "
                                        "its answer")
            return held.status, (held.body or "").encode("utf-8"), True
        beat = asyncio.create_task(self._heartbeat(key_name, idem_key))
        try:
            status, body = await produce()
        except BaseException:
            beat.cancel()
            await asyncio.to_thread(self.store.drop_reply, key_name, idem_key)
            raise
        beat.cancel()
        if 200 <= status < 300:
            await asyncio.to_thread(self.store.keep_reply, key_name, idem_key, status=status,
                                    body=body.decode("utf-8"))
        else:
            await asyncio.to_thread(self.store.drop_reply, key_name, idem_key)
        return status, body, False

    async def _heartbeat(self, key_name: str, idem_key: str) -> None:
        """Refresh the claim while its request runs, so that no retry takes it over from a live server."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await asyncio.to_thread(self.store.touch_reply, key_name, idem_key, now=_iso(time.time()))
            except Exception as exc:  # the store is away: the request itself will fail or answer
                sys.stderr.write(f"memsieve serve: could not refresh the claim of an Idempotency-Key: {exc}\n")
                sys.stderr.flush()
