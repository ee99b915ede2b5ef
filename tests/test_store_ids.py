"""Record ids are time-ordered UUIDs: unique, version 7, sorted by creation, even when the clock steps back."""

from __future__ import annotations

import threading
import time
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.store import ids


def _ms(value: str) -> int:
    return uuid.UUID(value).int >> 80


def test_ids_are_version_7_with_their_creation_time():
    before = time.time_ns() // 1_000_000
    made = [ids.new_id() for _ in range(2000)]
    after = time.time_ns() // 1_000_000
    assert len(set(made)) == len(made)
    for value in made:
        u = uuid.UUID(value)
        assert (u.version, u.variant) == (7, uuid.RFC_4122)
        assert str(u) == value  # the canonical lowercase form, 36 characters
    # A burst of more than the counter holds in one millisecond borrows the next one, so allow a little.
    assert before <= _ms(made[0]) and _ms(made[-1]) <= after + len(made) // 2048 + 1
    assert made == sorted(made)
    assert [uuid.UUID(v) for v in made] == sorted(uuid.UUID(v) for v in made)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=-5, max_value=3), min_size=1, max_size=60))
def test_ids_keep_increasing_whatever_the_clock_does(steps):
    # The clock stands still, jumps back or forward between calls: ids still only go up.
    clock = [time.time_ns() + 10**12]

    def fake_ns() -> int:
        return clock[0]

    original = ids.time.time_ns
    ids.time.time_ns = fake_ns
    try:
        made = []
        for step in steps:
            clock[0] += step * 1_000_000
            made.extend(ids.new_id() for _ in range(3))
    finally:
        ids.time.time_ns = original
    assert made == sorted(made) and len(set(made)) == len(made)


def test_a_frozen_clock_overflows_the_counter_into_the_next_millisecond(monkeypatch):
    frozen = time.time_ns() + 2 * 10**12
    monkeypatch.setattr(ids.time, "time_ns", lambda: frozen)
    made = [ids.new_id() for _ in range(10_000)]  # more than the 12-bit counter holds
    assert made == sorted(made) and len(set(made)) == len(made)
    assert _ms(made[-1]) > _ms(made[0])


def test_ids_from_many_threads_are_unique():
    out: list[list[str]] = [[] for _ in range(4)]

    def work(k: int) -> None:
        out[k].extend(ids.new_id() for _ in range(3000))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [v for chunk in out for v in chunk]
    assert len(set(every)) == len(every)
    assert all(chunk == sorted(chunk) for chunk in out)


def test_stored_ids_sort_in_the_order_things_were_written(mem):
    facts = ["the user keeps a kayak at the harbor", "the user's violin lesson is on tuesdays",
             "the bakery on main street sells rye bread", "the museum opens at nine"]
    added = [mem.add(text, user_id="u")[0].memory_id for text in facts]
    for _ in range(3):
        mem.add(facts[0], user_id="u")  # exact repeats: recorded as rejections
    refused = [r.id for r in sorted(mem.rejections(user_id="u"), key=lambda r: r.created_at)]
    assert len(added) == 4 and len(refused) == 3
    for made in (added, refused):
        assert all(uuid.UUID(v).version == 7 for v in made)
        assert made == sorted(made)
