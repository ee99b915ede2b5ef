"""Concurrent puts of one key leave one item (review finding): puts through two MemsieveStores, on one Memory
or on two Memory objects over one database, each read the key's old item and each added, so the key held
two. The puts through one Memory share one lock now, and a put keeps only the key's newest memory after it
writes, so racing puts through separate Memory objects agree on the survivor."""

from __future__ import annotations

import threading

import pytest
from langgraph.store.base import PutOp

from memsieve import Memory
from memsieve.errors import InvalidInputError
from memsieve.integrations.langgraph import MemsieveStore, namespace_user

NS = ("users", "c")


def _race(stores, rounds):
    for r in range(rounds):
        barrier = threading.Barrier(len(stores))
        errors = []

        def put(store, n):
            try:
                barrier.wait()
                store.put(NS, "k", {"text": f"My favourite number is {1000 * (r + 1) + n}."})
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=put, args=(s, i)) for i, s in enumerate(stores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        items = stores[0].search(NS)
        assert [i.key for i in items] == ["k"], [i.value for i in items]
        assert all(len(s.memories(NS, "k")) == 1 for s in stores)


@pytest.mark.parametrize("shared", [True, False], ids=["one memory", "two memories"])
def test_racing_puts_of_one_key_leave_one_item(tmp_path, embedder, shared):
    first = Memory(tmp_path / "race.db", embedder=embedder)
    second = first if shared else Memory(tmp_path / "race.db", embedder=embedder)
    try:
        stores = [MemsieveStore(first, fields=["text"]), MemsieveStore(second, fields=["text"])]
        _race(stores, rounds=4)
        # every value the race replaced is kept, soft-deleted with its reason
        gone = [m for m in first.get_all(user_id=namespace_user(NS), include_inactive=True) if not m.is_active]
        assert len(gone) == 4 * 2 - 1
    finally:
        first.close()
        if not shared:
            second.close()


def test_a_key_blank_to_the_store_fails_the_batch_before_any_put(tmp_path, embedder):
    mem = Memory(tmp_path / "k.db", embedder=embedder)
    try:
        store = MemsieveStore(mem, fields=["text"])
        for blank in ["\u200b", " \u00a0 ", "\u2060"]:
            with pytest.raises(InvalidInputError, match="key"):
                store.batch([PutOp(NS, "good", {"text": "I keep bees in my garden."}),
                             PutOp(NS, blank, {"text": "I collect stamps."})])
            assert store.get(NS, "good") is None
    finally:
        mem.close()
