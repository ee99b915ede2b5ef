"""Who may take one of a server process's memory threads now.

The memory runs its calls on a small pool of threads (memsieve.aio, ``DEFAULT_MAX_WORKERS``).
A tenant whose calls are slow (a consolidation of a large scope, a batch of long texts) or wait
on one scope's lock holds a thread for each call it has in flight. A key therefore runs at most
``per_key`` calls at once, and a key's second and later calls never take the last free thread:
that one stays for a key that has nothing running. So two slow tenants leave a thread to everyone
else; a key's other calls wait on the event loop, holding no thread.

Calls that may run long by what they are (a batch, a consolidation, a purge, a forget) take at
most ``threads - 1`` threads between them, every key's together: however many tenants send them
at once, one thread stays for the quick calls (a search, a get, one add), which would otherwise
queue behind them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable


class ThreadShares:
    """Admits a key's calls to a pool of ``threads`` threads, ``per_key`` at once at most.

    A key with no call running is always admitted (its call may still queue for a thread, in
    order); one with some running is admitted while it has fewer than ``per_key`` and at least two
    threads are free. A lengthy call is admitted, besides, only while fewer than
    ``max(1, threads - 1)`` lengthy calls are in flight.

    Args:
        threads: the pool's size (>= 1).
        per_key: the most calls of one key in flight (>= 1).
    """

    def __init__(self, *, threads: int, per_key: int) -> None:
        if threads < 1 or per_key < 1:
            raise ValueError(f"threads and per_key must be at least 1, got {threads} and {per_key}")
        self.threads, self.per_key = threads, per_key
        self.lengthy_most = max(1, threads - 1)
        self._running: dict[Hashable, int] = {}
        self._total = 0
        self._lengthy = 0
        self._changed: asyncio.Condition | None = None

    def running(self, key: Hashable) -> int:
        """How many calls of ``key`` are in flight."""
        return self._running.get(key, 0)

    @property
    def total(self) -> int:
        """How many calls are in flight, every key's."""
        return self._total

    @property
    def lengthy(self) -> int:
        """How many lengthy calls are in flight, every key's."""
        return self._lengthy

    def _may_start(self, key: Hashable, lengthy: bool) -> bool:
        if lengthy and self._lengthy >= self.lengthy_most:
            return False
        mine = self._running.get(key, 0)
        return mine == 0 or (mine < self.per_key and self._total < self.threads - 1)

    @contextlib.asynccontextmanager
    async def of(self, key: Hashable, *, lengthy: bool = False) -> AsyncIterator[None]:
        """Wait for ``key``'s turn, hold it for the ``async with`` block. ``lengthy``: a call that
        may run long by what it is (memsieve.server.api.Endpoint.lengthy)."""
        if self._changed is None:
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            await changed.wait_for(lambda: self._may_start(key, lengthy))
            self._running[key] = self._running.get(key, 0) + 1
            self._total += 1
            self._lengthy += lengthy
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
                self._lengthy -= lengthy
                changed.notify_all()
