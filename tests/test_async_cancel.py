"""Cancelling an ``AsyncMemory`` call: a bulk add stops after the chunk it is writing, whatever ran is whole.

A thread cannot be stopped from outside, so a cancelled coroutine used to leave its ``add_many``
running to the end on the pool, writing every chunk after the caller had given up. It now finishes
the chunk it is writing (one transaction) and starts no other.
A cancelled single call (``add``, ``search``) runs to its end, as one transaction, and its result is
dropped.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from memsieve import AsyncMemory, ConfigError, Memory
from tests.conftest import TableEmbedder


class SlowEmbedder(TableEmbedder):
    """A table embedder that takes ``delay`` seconds a call and tells when it has been called."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.called = threading.Event()

    def embed(self, texts):
        self.called.set()
        time.sleep(self.delay)
        return super().embed(texts)


ITEMS = [f"Fact number {i}: the harbour ferry leaves at dock {i}." for i in range(60)]


def _stored(path, embedder) -> int:
    with Memory(path, embedder=embedder) as m:
        return len(m.get_all(user_id="u"))


@pytest.mark.parametrize("scoped", [False, True])
def test_a_cancelled_bulk_add_stops_at_its_next_chunk(tmp_path, scoped):
    slow = SlowEmbedder(0.05)
    chunks_done: list[int] = []

    async def scenario() -> None:
        async with AsyncMemory(tmp_path / "m.db", embedder=slow, max_workers=2) as amem:
            target = await amem.scope(user_id="u") if scoped else amem
            options = {} if scoped else {"user_id": "u"}
            task = asyncio.ensure_future(target.add_many(ITEMS, batch_size=5, progress=chunks_done.append,
                                                         **options))
            while not chunks_done:  # the first chunk is written
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        # close() waited for the pool: the thread has ended

    asyncio.run(scenario())
    stored = _stored(tmp_path / "m.db", slow)
    # the chunk being written when the task was cancelled is finished (one transaction); none after it
    assert chunks_done and stored in (chunks_done[-1], chunks_done[-1] + 5), (stored, chunks_done)
    assert stored <= 20 < len(ITEMS)  # the bulk add stopped well before its end


def test_an_uncancelled_bulk_add_and_its_progress_are_unchanged(tmp_path):
    seen: list[int] = []

    async def scenario():
        async with AsyncMemory(tmp_path / "m.db", embedder=TableEmbedder()) as amem:
            return await amem.add_many(ITEMS[:12], user_id="u", batch_size=5, progress=seen.append)

    decisions = asyncio.run(scenario())
    assert len(decisions) == 12 and seen == [5, 10, 12]


def test_a_progress_that_cannot_take_a_count_is_refused_before_the_pool(tmp_path):
    async def scenario():
        async with AsyncMemory(tmp_path / "m.db", embedder=TableEmbedder()) as amem:
            with pytest.raises(ConfigError, match="progress"):
                await amem.add_many(ITEMS[:3], user_id="u", progress=lambda: None)
            return await amem.get_all(user_id="u")

    assert asyncio.run(scenario()) == []


def test_a_cancelled_single_add_is_whole_or_absent(tmp_path):
    slow = SlowEmbedder(0.3)

    async def scenario():
        async with AsyncMemory(tmp_path / "m.db", embedder=slow) as amem:
            task = asyncio.ensure_future(amem.add("The ferry to the island leaves at nine.", user_id="u"))
            while not slow.called.is_set():
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(scenario())
    with Memory(tmp_path / "m.db", embedder=slow) as m:
        held = m.get_all(user_id="u")
    assert [x.text for x in held] in ([], ["The ferry to the island leaves at nine."])
