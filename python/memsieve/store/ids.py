"""Record ids: time-ordered UUIDs (version 7, RFC 9562).

A random (version 4) id puts every insert on a random leaf of the id index, and of every index
keyed by a memory id (``history``). Once a store outgrows the page cache, each of those inserts
reads a cold page: at 10 million memories on PostgreSQL that was most of what an ``add()`` cost
over the same call at 100 thousand. A version-7 id starts with its creation time in milliseconds,
so new ids land on the index's rightmost, already-cached leaves, and their text form sorts by
creation time. Ids stay opaque to callers: a 36-character UUID, unique across processes because
62 bits of each are random.

The time prefix says when a record was created, to the millisecond, to whoever holds the id; the
record's own ``created_at`` says the same, and an id is only ever shown to the tenant it belongs to.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

_COUNTER_BITS = 12  # the 12 "rand_a" bits hold a counter, so ids made in one millisecond still sort
_lock = threading.Lock()
_last_ms = 0
_counter = 0


def _next_stamp() -> tuple[int, int]:
    """(milliseconds, counter), strictly increasing within this process, even if the clock steps back."""
    global _last_ms, _counter
    now = time.time_ns() // 1_000_000
    with _lock:
        if now > _last_ms:
            _last_ms = now
            # A random start in the counter's lower half leaves room for many ids in one millisecond.
            _counter = int.from_bytes(os.urandom(2), "big") & ((1 << (_COUNTER_BITS - 1)) - 1)
        else:
            _counter += 1
            if _counter >> _COUNTER_BITS:
                _last_ms += 1  # borrow the next millisecond rather than repeat or reorder
                _counter = 0
        return _last_ms, _counter


def new_id() -> str:
    """A new time-ordered record id.

    Returns:
        A lowercase UUID string (version 7, RFC 9562 variant); ids made later in this process
        compare greater as strings and as UUIDs.
    """
    ms, counter = _next_stamp()
    tail = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = ((ms & ((1 << 48) - 1)) << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | tail
    return str(uuid.UUID(int=value))
