"""memsieve.server.shares: a key's calls take at most ``per_key`` of a process's memory threads, and a
key's second and later calls never the last free one, so two slow tenants cannot fill a process of
four threads (review finding: with a plain cap of two calls per key, they could); lengthy calls, every
key's together, leave a thread too, so four tenants consolidating at once cannot fill it either."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.server.shares import ThreadShares


async def _hold(shares: ThreadShares, key: str, started: list[str], release: asyncio.Event, *,
                lengthy: bool = False) -> None:
    async with shares.of(key, lengthy=lengthy):
        started.append(key)
        await release.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_two_slow_keys_leave_a_thread_for_a_third():
    async def main() -> list[str]:
        shares, started, release = ThreadShares(threads=4, per_key=2), [], asyncio.Event()
        tasks = [asyncio.create_task(_hold(shares, k, started, release)) for k in ("ana", "bob", "ana", "bob")]
        await _settle()
        assert sorted(started) == ["ana", "ana", "bob"]  # bob's second would take the last thread
        carl = asyncio.create_task(_hold(shares, "carl", started, release))
        await _settle()
        assert started[-1] == "carl" and shares.total == 4
        release.set()
        await asyncio.gather(*tasks, carl)
        assert shares.total == 0 and shares.running("ana") == 0
        return started

    assert asyncio.run(main()).count("bob") == 2  # bob's second ran once a thread came free


def test_four_keys_with_lengthy_calls_leave_a_thread_for_a_quick_one():
    async def main() -> None:
        shares, started, release = ThreadShares(threads=4, per_key=2), [], asyncio.Event()
        slow = [asyncio.create_task(_hold(shares, k, started, release, lengthy=True)) for k in "abcd"]
        await _settle()
        assert started == ["a", "b", "c"] and shares.lengthy == 3  # d's consolidation waits, holding no thread
        quick = asyncio.create_task(_hold(shares, "e", started, release))
        await _settle()
        assert started[-1] == "e" and shares.total == 4
        release.set()
        await asyncio.gather(*slow, quick)
        assert started.count("d") == 1 and shares.lengthy == 0 and shares.total == 0

    asyncio.run(main())


def test_a_keys_calls_wait_for_its_own_share():
    async def main() -> None:
        shares, started, release = ThreadShares(threads=8, per_key=2), [], asyncio.Event()
        tasks = [asyncio.create_task(_hold(shares, "ana", started, release)) for _ in range(5)]
        await _settle()
        assert started == ["ana", "ana"] and shares.running("ana") == 2
        release.set()
        await asyncio.gather(*tasks)
        assert len(started) == 5

    asyncio.run(main())


def test_a_keys_first_call_is_never_held_back():
    async def main() -> None:
        shares, started, release = ThreadShares(threads=2, per_key=2), [], asyncio.Event()
        tasks = [asyncio.create_task(_hold(shares, k, started, release)) for k in ("a", "b", "c")]
        await _settle()
        # more keys than threads: each gets its one call in, to queue for a thread in order
        assert sorted(started) == ["a", "b", "c"]
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(main())


def test_a_call_that_fails_gives_its_share_back():
    async def main() -> None:
        shares = ThreadShares(threads=4, per_key=1)
        with pytest.raises(RuntimeError):
            async with shares.of("ana"):
                raise RuntimeError("the call failed")
        assert shares.running("ana") == 0 and shares.total == 0
        async with shares.of("ana"):
            assert shares.running("ana") == 1

    asyncio.run(main())


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        ThreadShares(threads=0, per_key=1)


@settings(max_examples=60, deadline=None)
@given(threads=st.integers(1, 6), per_key=st.integers(1, 4),
       calls=st.lists(st.tuples(st.sampled_from("abcde"), st.booleans()), min_size=1, max_size=20))
def test_no_key_runs_more_than_its_share_and_extras_leave_a_thread(threads, per_key, calls):
    async def main() -> None:
        shares, release = ThreadShares(threads=threads, per_key=per_key), asyncio.Event()
        seen: list[tuple[int, int, int]] = []  # (the key's calls, every call, lengthy calls) running at each start

        async def call(key: str, lengthy: bool) -> None:
            async with shares.of(key, lengthy=lengthy):
                seen.append((shares.running(key), shares.total, shares.lengthy))
                await release.wait()

        tasks = [asyncio.create_task(call(k, lengthy)) for k, lengthy in calls]
        await _settle()
        for mine, total, lengthy in seen:
            assert mine <= per_key
            # a key's extra call started only with a thread left over for a key with none running
            assert mine == 1 or total <= threads - 1
            # lengthy calls, every key's together, leave a thread (a pool of one has none to leave)
            assert lengthy <= max(1, threads - 1)
        # a quick call of a key with nothing running is never held back by lengthy ones
        quick = [k for k, lengthy in calls if not lengthy]
        assert {k for k in quick if all(key != k or not lengthy for key, lengthy in calls)} <= {
            k for k in "abcde" if shares.running(k)}
        release.set()
        await asyncio.gather(*tasks)
        assert shares.total == 0

    asyncio.run(main())
