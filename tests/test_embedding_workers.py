"""Batches of one embed call run side by side (memsieve.embedding.workers): the
vectors are the same, bit for bit, as one text per call or one batch at a time."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from memsieve import ConfigError
from memsieve.embedding import OnnxEmbedder
from memsieve.embedding.workers import BatchWorkers, default_workers, plan_batches

# Short and long texts, so that the calls cut batches both by count and by padded size.
TEXTS = [f"Turn {i}: I went hiking near the lake with my dog and we saw {i} ducks." for i in range(30)] + [
    "ok", "", "Thanks!",
    " ".join(f"word{i}" for i in range(180)),  # one text past the per-batch token budget on its own
    "My grandmother taught me how to bake bread when I was little, and I still use her recipe. " * 4,
]


@pytest.fixture(scope="module")
def one_by_one() -> np.ndarray:
    single = OnnxEmbedder(workers=1)
    return np.vstack([single.embed([t]) for t in TEXTS])


@pytest.mark.parametrize("options", [{"workers": 2}, {"workers": 3, "batch_size": 5}, {"workers": 1},
                                     {"workers": 2, "batch_size": 64}, {"workers": 1, "batch_size": 1}])
def test_batches_in_parallel_give_the_one_text_per_call_vectors_bit_for_bit(one_by_one, options):
    out = OnnxEmbedder(**options).embed(TEXTS)
    assert out.shape == (len(TEXTS), 384) and out.dtype == np.float32
    np.testing.assert_array_equal(out, one_by_one)


def test_workers_is_checked():
    with pytest.raises(ConfigError, match="workers must be an int >= 1, got 0"):
        OnnxEmbedder(workers=0)
    assert 1 <= OnnxEmbedder().workers <= 4 and default_workers() >= 1


def test_a_failing_batch_raises_after_the_others_finished():
    done = []

    def work(b):
        if b == 2:
            raise ValueError("batch 2 is bad")
        done.append(b)
        return b * 10

    pool = BatchWorkers(2)
    assert pool.map(work, [0, 1, 3]) == [0, 10, 30]
    with pytest.raises(ValueError, match="batch 2 is bad"):
        pool.map(work, [4, 2, 5, 6])
    assert sorted(done) == [0, 1, 3, 4, 5, 6]  # none was abandoned mid-way
    pool.close()
    assert pool.map(work, [7, 8]) == [70, 80]  # a closed pool starts again


def _embed_in_child(embedder, queue):
    queue.put(embedder.embed(TEXTS).tobytes())


def test_a_forked_child_embeds_with_a_pool_of_its_own(one_by_one):
    emb = OnnxEmbedder(workers=2)
    emb.embed(TEXTS)  # the parent's pool threads exist now; a child inherits none of them
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_embed_in_child, args=(emb, queue))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=30)
    assert child.exitcode == 0
    np.testing.assert_array_equal(np.frombuffer(got, dtype=np.float32).reshape(len(TEXTS), 384), one_by_one)


def test_batch_plans_cover_every_text_once_within_both_caps_longest_first():
    lengths = [12, 300, 40, 3, 40, 41, 7, 90, 12, 12, 60, 2, 33, 33, 33, 33, 33, 33, 33, 33]
    batches = plan_batches(lengths, batch_size=5, tokens=128)
    assert sorted(int(i) for rows in batches for i in rows) == list(range(len(lengths)))
    widths = [max(lengths[i] for i in rows) for rows in batches]
    for rows, width in zip(batches, widths):
        assert len(rows) <= 5
        assert len(rows) * width <= 128 or len(rows) == 1  # a text past the budget goes alone
    costs = [len(rows) * width for rows, width in zip(batches, widths)]
    assert costs == sorted(costs, reverse=True) and [int(i) for i in batches[0]] == [1]
    assert plan_batches([], batch_size=8) == []


def test_a_batch_is_cut_before_a_text_that_would_pad_the_rows_taken_past_a_calls_worth():
    # An add() of a 40-token turn and its two sentence keys: the keys are not padded to 40.
    assert [sorted(int(i) for i in rows) for rows in plan_batches([40, 12, 10], batch_size=32)] == [[0], [1, 2]]
    # Lengths a few tokens apart still share a batch, as a bulk call's sorted lengths do.
    assert len(plan_batches([30, 31, 31, 32, 33], batch_size=32, call_tokens=8)) == 1
    # Without the cut (a call costing more than any padding) they are one batch, as before.
    assert len(plan_batches([40, 12, 10], batch_size=32, call_tokens=10**9)) == 1


@given(st.lists(st.integers(1, 300), max_size=60), st.integers(0, 64))
def test_no_batch_pads_its_earlier_rows_by_more_than_a_calls_worth_at_any_cut(lengths, call_tokens):
    batches = plan_batches(lengths, batch_size=16, call_tokens=call_tokens)
    assert sorted(int(i) for rows in batches for i in rows) == list(range(len(lengths)))
    for rows in batches:
        got = [lengths[i] for i in rows]
        assert got == sorted(got)
        for k in range(1, len(got)):  # each row taken padded the k rows before it by this much
            assert k * (got[k] - got[k - 1]) <= call_tokens


def test_the_caller_takes_batches_beside_workers_minus_one_pool_threads():
    import threading
    import time

    ran: dict[int, int] = {}

    def work(b):
        time.sleep(0.02)  # long enough that the pool thread takes some batches too
        ran[b] = threading.get_ident()
        return b

    pool = BatchWorkers(2)
    assert pool.map(work, list(range(8))) == list(range(8))
    threads = set(ran.values())
    assert threading.get_ident() in threads  # the caller did not sleep through the call
    assert len(threads) == 2  # and one pool thread ran the rest beside it
    pool.close()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=0, max_value=12), workers=st.integers(min_value=1, max_value=4),
       bad=st.sets(st.integers(min_value=0, max_value=11), max_size=3))
def test_every_batch_runs_once_and_the_first_failure_in_batch_order_is_raised(n, workers, bad):
    import threading

    runs: list[int] = []
    lock = threading.Lock()

    def work(b):
        with lock:
            runs.append(b)
        if b in bad:
            raise ValueError(f"batch {b}")
        return b * 2

    pool = BatchWorkers(workers)
    failing = sorted(b for b in bad if b < n)
    try:
        if failing:
            with pytest.raises(ValueError, match=f"^batch {failing[0]}$"):
                pool.map(work, list(range(n)))
        else:
            assert pool.map(work, list(range(n))) == [2 * b for b in range(n)]
        if workers > 1 and n > 1:
            assert sorted(runs) == list(range(n))  # each once, none abandoned mid-way after a failure
        else:  # on the calling thread alone: in order, up to the first failure
            assert runs == list(range(failing[0] + 1 if failing else n))
    finally:
        pool.close()


def test_a_call_made_while_the_pool_runs_another_does_not_wait_for_it():
    """A decision embeds a few texts while ``add_many``'s batch ahead holds the pool's thread: the
    second call's queued helper has nothing left once its caller took every batch, so it is
    cancelled and the call returns without waiting for the first call's batches."""
    import threading
    import time

    release = threading.Event()
    started = threading.Event()

    def slow(b):
        started.set()
        release.wait(5)
        return b

    pool = BatchWorkers(2)
    first = threading.Thread(target=pool.map, args=(slow, [0, 1]))
    first.start()
    started.wait(5)
    time.sleep(0.05)  # both of the first call's batches taken: the caller's and the pool thread's
    t0 = time.perf_counter()
    assert pool.map(lambda b: b * 3, [1, 2, 3]) == [3, 6, 9]
    waited = time.perf_counter() - t0
    release.set()
    first.join(5)
    assert not first.is_alive()
    assert waited < 2.0  # not held until the first call's batches were released
    pool.close()
