"""memsieve.AsyncMemory: the sync API as coroutines, on a thread pool, with the same results and errors."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from memsieve import AsyncMemory, Memory
from memsieve.errors import ClosedError, ConfigError, InvalidTextError, MemsieveError, NotFoundError, ScopeError

TEXTS = [
    "Ana moved to Lisbon in March.",
    "Ana works as a nurse at the city hospital.",
    "Ana moved to Lisbon in March.",  # an exact duplicate: a NOOP on the exact layer
    "Ana's sister Rita lives in Porto.",
    "Ana is allergic to peanuts.",
    "Ana started learning the cello.",
]

WRAPPED = ("add", "search", "context", "get", "get_all", "update", "delete", "history", "links", "restore",
           "consolidate", "unconsolidate", "rejections", "faults", "forget", "stats", "gate_trace", "embed")


def _shape(decisions):
    return [(d.event, d.layer, d.text, d.rejection_id is not None) for d in decisions]


def test_signatures_and_docs_are_memorys():
    for name in WRAPPED:
        sync, coro = getattr(Memory, name), getattr(AsyncMemory, name)
        assert inspect.iscoroutinefunction(coro), name
        assert list(inspect.signature(coro).parameters) == list(inspect.signature(sync).parameters), name
        assert inspect.signature(coro).return_annotation.startswith("Awaitable["), name
        assert (inspect.getdoc(sync) or "") in coro.__doc__ and f"Memory.{name}" in coro.__doc__, name


def test_results_equal_the_sync_api(tmp_path, embedder):
    sync = Memory(tmp_path / "s.db", embedder=embedder)

    async def scenario():
        async with AsyncMemory(tmp_path / "a.db", embedder=embedder) as amem:
            got = [await amem.add(t, user_id="ana", source=f"turn{i}") for i, t in enumerate(TEXTS)]
            hits = await amem.search("where does Ana live", user_id="ana", limit=3)
            ctx = await amem.context("where does Ana live", user_id="ana", limit=3)
            rej = await amem.rejections(user_id="ana")
            items = await amem.get_all(user_id="ana")
            stats = await amem.stats(user_id="ana")
            return got, hits, ctx, rej, items, stats

    got, hits, ctx, rej, items, stats = asyncio.run(scenario())
    want = [sync.add(t, user_id="ana", source=f"turn{i}") for i, t in enumerate(TEXTS)]
    assert [_shape(d) for d in got] == [_shape(d) for d in want]
    assert any(d.event == "NOOP" for ds in got for d in ds)
    want_hits = sync.search("where does Ana live", user_id="ana", limit=3)
    assert [(h.text, round(h.score, 6)) for h in hits] == [(h.text, round(h.score, 6)) for h in want_hits]
    assert ctx == sync.context("where does Ana live", user_id="ana", limit=3) and len(ctx.splitlines()) == 3
    assert [r.text for r in rej] == [r.text for r in sync.rejections(user_id="ana")]
    assert sorted(i.text for i in items) == sorted(i.text for i in sync.get_all(user_id="ana"))
    assert stats["events"] == sync.stats(user_id="ana")["events"]
    sync.close()


def test_concurrent_coroutines_keep_the_store_consistent_and_the_loop_free(tmp_path, embedder):
    texts = [f"Team fact number {i % 12}: the build runs on machine {i % 12}." for i in range(36)]

    async def scenario():
        ticks = 0
        done = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0)

        async with AsyncMemory(tmp_path / "c.db", embedder=embedder, max_workers=4) as amem:
            tick = asyncio.create_task(ticker())
            writes = [amem.add(t, user_id="team") for t in texts]
            other = [amem.add(f"Private note {i} about the garden.", user_id="solo") for i in range(6)]
            reads = [amem.search("which machine runs the build", user_id="team", limit=5) for _ in range(6)]
            results = await asyncio.gather(*writes, *other, *reads)
            done.set()
            await tick
            decisions = [d for ds in results[: len(texts)] for d in ds]
            return ticks, decisions, await amem.stats(user_id="team"), await amem.get_all(user_id="solo")

    ticks, decisions, stats, solo = asyncio.run(scenario())
    assert ticks > len(texts), "the event loop was blocked while the calls ran"
    added = [d.text for d in decisions if d.event == "ADD"]
    assert len(added) == len(set(added)), "a text was added twice by racing coroutines"
    assert {d.text for d in decisions if d.event == "ADD"} <= set(texts)
    counts = {e: sum(d.event == e for d in decisions) for e in ("ADD", "UPDATE", "NOOP", "DELETE")}
    assert stats["events"] == {e: n for e, n in counts.items() if n}
    assert stats["active_memories"] == counts["ADD"] - counts["DELETE"]
    assert len(solo) == 6


def test_calls_run_off_the_event_loop_thread(tmp_path, embedder):
    seen: list[str] = []

    class Recording(Memory):
        def get_all(self, **kwargs):
            seen.append(threading.current_thread().name)
            return super().get_all(**kwargs)

    async def scenario():
        amem = AsyncMemory.wrap(Recording(tmp_path / "r.db", embedder=embedder), max_workers=2)
        await amem.add("A fact.", user_id="u")
        items = await amem.get_all(user_id="u")
        await amem.close()
        return items

    items = asyncio.run(scenario())
    assert [i.text for i in items] == ["A fact."]
    assert seen and seen[0].startswith("memsieve") and seen[0] != threading.main_thread().name


@pytest.mark.parametrize("call", [
    ("add", ("",), {"user_id": "u"}),
    ("add", ("text",), {}),
    ("get", ("no-such-id",), {}),
    ("search", ("q",), {"user_id": "u", "limit": 0}),
    ("restore", ("no-such-rejection",), {}),
    ("update", ("no-such-id", "new text"), {}),
])
def test_errors_are_the_same_memsieve_errors(tmp_path, embedder, call):
    name, args, kwargs = call
    sync = Memory(tmp_path / "s.db", embedder=embedder)
    with pytest.raises(MemsieveError) as want:
        getattr(sync, name)(*args, **kwargs)
    sync.close()

    async def scenario():
        async with AsyncMemory(tmp_path / "a.db", embedder=embedder) as amem:
            with pytest.raises(MemsieveError) as got:
                await getattr(amem, name)(*args, **kwargs)
            await amem.add("still works", user_id="u")  # an error leaves the AsyncMemory usable
            return got, await amem.get_all(user_id="u")

    got, items = asyncio.run(scenario())
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)
    assert [i.text for i in items] == ["still works"]


def test_error_types_are_specific(tmp_path, embedder):
    async def scenario():
        async with AsyncMemory(tmp_path / "a.db", embedder=embedder) as amem:
            for coro, kind in ((amem.add("", user_id="u"), InvalidTextError), (amem.get("zz"), NotFoundError),
                               (amem.add("x"), ScopeError)):
                with pytest.raises(kind):
                    await coro

    asyncio.run(scenario())


def test_close_waits_for_running_calls_then_refuses(tmp_path, embedder):
    async def scenario():
        amem = AsyncMemory(tmp_path / "w.db", embedder=embedder, max_workers=3)
        pending = [asyncio.ensure_future(amem.add(f"Fact {i} about the harbour.", user_id="u")) for i in range(5)]
        await asyncio.sleep(0)  # the adds are submitted to the pool
        await amem.close()
        results = await asyncio.gather(*pending)
        with pytest.raises(ClosedError):
            await amem.search("harbour", user_id="u")
        await amem.close()  # twice is allowed
        return results

    results = asyncio.run(scenario())
    assert all(len(r) == 1 for r in results)
    with Memory(tmp_path / "w.db", embedder=embedder) as again:
        assert len(again.get_all(user_id="u")) == sum(r[0].event == "ADD" for r in results) > 0


@pytest.mark.parametrize("workers", [0, -1, True, 2.5])
def test_bad_max_workers_is_a_config_error(tmp_path, workers):
    with pytest.raises(ConfigError, match="max_workers"):
        AsyncMemory(tmp_path / "x.db", max_workers=workers)
    with pytest.raises(ConfigError, match="AsyncMemory.wrap"):
        AsyncMemory.wrap("not a memory")  # type: ignore[arg-type]


def test_consolidate_and_undo_as_coroutines(tmp_path, embedder):
    from memsieve import GateConfig

    texts = ["Ana moved to Lisbon in March 2024.", "Ana moved to Lisbon in March of 2024.",
             "Cello lessons every Thursday evening."]
    sync = Memory(tmp_path / "s.db", embedder=embedder, gate=GateConfig(profile="none"))
    for t in texts:
        sync.add(t, user_id="ana")
    want = sync.consolidate(user_id="ana")
    sync.close()

    async def scenario():
        async with AsyncMemory(tmp_path / "a.db", embedder=embedder, gate=GateConfig(profile="none")) as amem:
            for t in texts:
                await amem.add(t, user_id="ana")
            report = await amem.consolidate(user_id="ana")
            merged = len(await amem.get_all(user_id="ana"))
            back = await amem.unconsolidate(report.merges[0].id, user_id="ana")
            return report, merged, back, len(await amem.get_all(user_id="ana"))

    got, merged, back, after = asyncio.run(scenario())
    assert (got.active_before, got.active_after, got.pairs, len(got.merges)) == \
        (want.active_before, want.active_after, want.pairs, len(want.merges))
    assert (got.active_before, len(got.merges), merged) == (3, 1, 2)  # the two Lisbon sentences merged
    assert back and {m.text for m in back} <= set(texts) and after == 3  # undo gives the active set back
