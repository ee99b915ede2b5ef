"""Running an embed call's batches side by side, one ONNX Runtime thread each.

One MiniLM batch does not keep two cores busy: ONNX Runtime splits each
operator of a small (batch, ~40 tokens) input across its intra-op threads,
and the threads then wait for each other at every one of the model's few
hundred operators. Measured on a 2-vCPU EPYC (benches/RESULTS.md, "Write
path"): one text per call on both cores costs 5.5-8 ms; batches of 4-8 texts
on one core cost 5.6-5.9 ms of CPU per text, and two such batches run at once
finish in about half the wall time. Bigger batches lose again (16 texts: 6.7
ms of CPU per text), as the activations outgrow the core's L2 cache.

So a call with many texts runs its batches on ``workers`` threads, each
calling a session that uses one intra-op thread; ``session.run`` releases the
GIL and is safe to call from several threads. A batch's rows do not depend on
which thread ran it or on the other batches (every op is row-wise or per
text), so the vectors equal the sequential path's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

_T = TypeVar("_T")

#: A batch holds at most this many (padded) tokens, so that its activations
#: stay within one core's L2 cache (4-8 LoCoMo turns of ~40 tokens).
TOKENS_PER_BATCH = 256
#: A batch is cut before a text that would pad the rows already taken by more than this many
#: tokens in all. An add() embeds a turn with its sentence keys, each shorter than the turn: in
#: one batch every key was padded to the turn's length, and two batches run side by side on the
#: workers. Measured on 2 vCPUs (benches/RESULTS.md, "Batches cut at padding"): LoCoMo turns with
#: their keys, 17.0 ms an add() in one batch, 12.5-13.5 ms cut at 0-12 tokens, 13.3-13.7 at 24;
#: bulk batches of sorted lengths pad little and are cut as before.
CALL_TOKENS = 8


def plan_batches(lengths: Sequence[int], *, batch_size: int, tokens: int = TOKENS_PER_BATCH,
                 call_tokens: int = CALL_TOKENS) -> list[np.ndarray]:
    """Row indices of each ONNX call for texts of these token counts, longest batch first.

    Texts are sorted by token count, so a batch pads little, and cut so that
    one holds at most ``batch_size`` texts and ``tokens`` padded tokens (a
    longer text goes alone), and before a text that would pad the rows taken
    by more than ``call_tokens`` tokens in all, what a call of its own costs
    (a short text's sentence keys are not padded to the text's own length).
    The longest batches come first, so that workers
    taking them in turn end a call on short ones together, not one waiting
    while the other runs the longest batch last.

    Args:
        lengths: n token counts.
        batch_size: most texts per batch.
        tokens: most padded tokens (texts times the longest one's count) per batch.
        call_tokens: the padding, in tokens over the rows already taken, that a new batch is
            started rather than paid.

    Returns:
        int64 index arrays that together hold each of range(n) once.
    """
    order = np.argsort(np.asarray(lengths), kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        end = start + 1
        # Sorted ascending, so the last row taken sets the padded width.
        while (end < len(order) and end - start < batch_size
               and (end - start + 1) * lengths[order[end]] <= tokens
               and (end - start) * (lengths[order[end]] - lengths[order[end - 1]]) <= call_tokens):
            end += 1
        batches.append(order[start:end])
        start = end
    return sorted(batches, key=lambda rows: -len(rows) * lengths[rows[-1]])


def default_workers() -> int:
    """Threads that run batches at once: the CPUs this process may use, at most 4.

    Beyond 4, a MiniLM batch of a few texts is too small to be worth a core's
    hand-off, and a process sharing a large machine should not claim all of it.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


class BatchWorkers:
    """A lazily started thread pool that maps a function over batches, the calling thread among
    the workers.

    The caller takes batches too, from the same queue as the pool's threads, rather than sleep
    until they finish: one hand-off fewer per call, and a thread that sleeps through an
    embedding wakes, on a virtual machine, to cold caches. Measured on 2 vCPUs
    (benches/RESULTS.md, "The caller embeds too"): ``add()`` 2-4% faster end to end, the
    embedding being the faster part; the write after it is as slow as before (ONNX Runtime's
    own work leaves the caches as cold as a sleep does). The pool holds ``workers - 1`` threads.

    The pool is remade in a forked child (a child inherits the pool object but
    none of its threads, and would wait forever on the first batch).

    Args:
        workers: threads that run batches at once, the caller's included; 1 runs every batch on
            the calling thread.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def map(self, fn: Callable[[Any], _T], batches: Sequence[Any]) -> list[_T]:
        """``[fn(b) for b in batches]``, run by the caller and the pool when there is more than one batch.

        Each thread takes the next batch not yet taken, in order (the plans put the longest
        first), so the threads end together. The first exception a batch raises, in batch
        order, is raised here after every other batch has finished (none is left running
        against a closed session).
        """
        if self.workers <= 1 or len(batches) <= 1:
            return [fn(b) for b in batches]
        pool = self._ready()
        results: list[Any] = [None] * len(batches)
        errors: list[BaseException | None] = [None] * len(batches)
        taken = iter(range(len(batches)))
        take = threading.Lock()

        def drain() -> None:
            while True:
                with take:
                    i = next(taken, None)
                if i is None:
                    return
                try:
                    results[i] = fn(batches[i])
                except BaseException as exc:  # kept for the caller, in batch order
                    errors[i] = exc

        helpers = [pool.submit(drain) for _ in range(min(self.workers, len(batches)) - 1)]
        drain()
        for helper in helpers:
            # Every batch is taken once the caller's drain returns. A helper still queued (the
            # pool busy with another call's batches, e.g. add_many's batch ahead while a
            # decision embeds) has nothing left to do: cancelled, it is not waited for.
            if not helper.cancel():
                helper.result()
        for error in errors:
            if error is not None:
                raise error
        return results

    def _ready(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                self._pool = ThreadPoolExecutor(max_workers=max(1, self.workers - 1),
                                                thread_name_prefix="memsieve-embed")
                self._pid = os.getpid()
            return self._pool

    def close(self) -> None:
        """Stop the threads (they are idle between calls); a later ``map`` starts new ones."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pid == os.getpid():
            pool.shutdown(wait=True)
