"""Who may take one of a server process's memory threads now.

The memory runs its calls on a small pool of threads (memsieve.aio, ``DEFAULT_MAX_WORKERS``).
A tenant whose calls are slow (a consolidation of a large scope, a batch of long texts) or wait
on one scope's lock holds a thread for each call it has in flight. A key therefore runs at most
``per_key`` calls at once, and a key's second and later calls never take the last free thread:
that one stays for a key that has nothing running. So two slow tenants leave a thread to everyone
else, and only as many slow tenants as there are threads can fill a process; a key's other calls
wait on the event loop, holding no thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable


class ThreadShares:
    """Admits a key's calls to a pool of ``threads`` threads, ``per_key`` at once at most.

    A key with no call running is always admitted (its call may still queue for a thread, in
    order); one with some running is admitted while it has fewer than ``per_key`` and at least two
    threads are free.

    Args:
        threads: the pool's size (>= 1).
        per_key: the most calls of one key in flight (>= 1).
    """

    def __init__(self, *, threads: int, per_key: int) -> None:
        if threads < 1 or per_key < 1:
            raise ValueError(f"threads and per_key must be at least 1, got {threads} and {per_key}")
        self.threads, self.per_key = threads, per_key
        self._running: dict[Hashable, int] = {}
        self._total = 0
        self._changed: asyncio.Condition | None = None

    def running(self, key: Hashable) -> int:
        """How many calls of ``key`` are in flight."""
        return self._running.get(key, 0)

    @property
    def total(self) -> int:
        """How many calls are in flight, every key's."""
        return self._total

    def _may_start(self, key: Hashable) -> bool:
        mine = self._running.get(key, 0)
        return mine == 0 or (mine < self.per_key and self._total < self.threads - 1)

    @contextlib.asynccontextmanager
    async def of(self, key: Hashable) -> AsyncIterator[None]:
        """Wait for ``key``'s turn, hold it for the ``async with`` block."""
        if self._changed is None:
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            await changed.wait_for(lambda: self._may_start(key))
            self._running[key] = self._running.get(key, 0) + 1
            self._total += 1
        try:
            yield
        finally:
            async with changed:
                left = self._running[key] - 1
                if left:
                    self._running[key] = left
                else:
                    del self._running[key]
                self._total -= 1
                changed.notify_all()
