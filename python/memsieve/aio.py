"""``memsieve.AsyncMemory``: every ``Memory`` method as a coroutine.

An async agent server must not block its event loop on an embedding or a
SQLite transaction, so each call runs on a small thread pool. Nothing else
happens here: the wrappers are generated from ``Memory``'s own methods (their
signatures and docstrings are the sync ones, as ``inspect.signature`` and
``help()`` show), and concurrency is the library's own, since one ``Memory``
already serializes writes per scope and shares its store connection under a
lock (see memsieve.gate.cache). Errors are the same ``MemsieveError`` types,
raised from the ``await``.

``await AsyncMemory.scope(user_id=...)`` gives an ``AsyncScopedMemory``: the
coroutine forms of a ``ScopedMemory``'s methods, on the same pool.

Example:
    >>> async with AsyncMemory("mem.db") as mem:   # doctest: +SKIP
    ...     decisions = await mem.add("I moved to Lisbon", user_id="ana")
    ...     ana = await mem.scope(user_id="ana")
    ...     hits = await ana.search("where does ana live")
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from memsieve.errors import ClosedError, ConfigError
from memsieve.inputs import check_count, check_progress
from memsieve.memory import Memory
from memsieve.scope import Scope
from memsieve.scoped import ScopedMemory

P = ParamSpec("P")
R = TypeVar("R")

#: Threads per AsyncMemory unless told otherwise: writes of one scope serialize
#: anyway, and the ONNX embedder uses its own threads, so a few are enough.
DEFAULT_MAX_WORKERS = 4


def _coroutine(method: Callable[Concatenate[Any, P], R], *, wrapped: str = "memory", stoppable: bool = False
               ) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]:
    """The coroutine form of a ``Memory`` (or ``ScopedMemory``) method, run on the pool.

    The method is looked up by name on the wrapped instance (the attribute
    ``wrapped`` of the async object) at call time, so a subclass of ``Memory``
    gets its own override.

    A thread cannot be stopped from outside: a cancelled call runs on to its
    end and its result is dropped. A ``stoppable`` method (``add_many``, which
    commits chunk by chunk and calls ``progress`` after each) finishes the
    chunk it is writing and starts no other: the chunks written stay.
    """
    name = method.__name__

    @functools.wraps(method)
    async def call(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        bound = getattr(getattr(self, wrapped), name)
        if not stoppable:
            return await self._run(functools.partial(bound, *args, **kwargs))
        stop = threading.Event()
        kwargs["progress"] = _stopping(kwargs.get("progress"), stop)
        try:
            return await self._run(functools.partial(bound, *args, **kwargs))
        except asyncio.CancelledError:
            stop.set()  # read by the thread after its current chunk
            raise

    # What help() and inspect show: the sync parameters, an awaitable result.
    sig = inspect.signature(method)
    call.__signature__ = sig.replace(  # type: ignore[attr-defined]
        return_annotation=f"Awaitable[{_annotation(sig.return_annotation)}]")
    call.__doc__ = f"``await`` form of ``{method.__qualname__}``, run on the pool.\n\n{inspect.getdoc(method) or ''}"
    return call


class _Cancelled(Exception):
    """Raised in a cancelled bulk add's thread, at its next chunk, to end it there."""


def _stopping(progress: Any, stop: threading.Event) -> Callable[[int], None]:
    """A progress callback that ends the bulk add once ``stop`` is set, then calls ``progress``."""
    check_progress(progress, takes="a count")  # refused here, before the pool, as the sync call refuses it

    def each_chunk(done: int) -> None:
        if stop.is_set():
            raise _Cancelled("the awaiting task was cancelled")
        if progress is not None:
            progress(done)

    return each_chunk


def _annotation(ann: Any) -> str:
    if ann is inspect.Signature.empty:
        return "Any"
    return ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))


class AsyncMemory:
    """A ``Memory`` whose methods are coroutines; same arguments, results and errors.

    Args:
        path: as for ``Memory`` (SQLite file, ``":memory:"``, ``postgresql://``
            URL, or None for the default path).
        max_workers: threads that run the calls (at least 1).
        **options: any keyword option of ``Memory`` (``embedder``, ``gate``,
            ``llm``, ...).

    Use ``AsyncMemory.wrap(memory)`` to share a ``Memory`` already open with
    synchronous code. Either way ``close()`` closes the ``Memory``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_workers: int = DEFAULT_MAX_WORKERS,
                 **options: Any) -> None:
        self._pool = self._make_pool(max_workers)
        try:
            self.memory = Memory(path, **options)
        except BaseException:
            self._pool.shutdown(wait=False)
            raise
        self._closed = False
        self._closing: asyncio.Future[None] | None = None

    @classmethod
    def wrap(cls, memory: Memory, *, max_workers: int = DEFAULT_MAX_WORKERS) -> "AsyncMemory":
        """An AsyncMemory over an open ``Memory`` (which it then closes on ``close()``)."""
        if not isinstance(memory, Memory):
            raise ConfigError(f"AsyncMemory.wrap needs a memsieve.Memory, got {type(memory).__name__}")
        self = cls.__new__(cls)
        self._pool = cls._make_pool(max_workers)
        self.memory = memory
        self._closed = False
        self._closing = None
        return self

    @staticmethod
    def _make_pool(max_workers: int) -> ThreadPoolExecutor:
        workers = check_count(max_workers, name="max_workers", minimum=1)
        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memsieve")

    async def _run(self, call: Callable[[], R]) -> R:
        if self._closed:  # the pool is gone; say so as Memory would
            raise ClosedError("this AsyncMemory")
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    add = _coroutine(Memory.add)
    add_many = _coroutine(Memory.add_many, stoppable=True)
    search = _coroutine(Memory.search)
    context = _coroutine(Memory.context)
    get = _coroutine(Memory.get)
    get_all = _coroutine(Memory.get_all)
    update = _coroutine(Memory.update)
    delete = _coroutine(Memory.delete)
    history = _coroutine(Memory.history)
    links = _coroutine(Memory.links)
    restore = _coroutine(Memory.restore)
    consolidate = _coroutine(Memory.consolidate)
    unconsolidate = _coroutine(Memory.unconsolidate)
    merges = _coroutine(Memory.merges)
    rejections = _coroutine(Memory.rejections)
    faults = _coroutine(Memory.faults)
    forget = _coroutine(Memory.forget)
    purge = _coroutine(Memory.purge)
    finish_erasure = _coroutine(Memory.finish_erasure)
    compact = _coroutine(Memory.compact)
    stats = _coroutine(Memory.stats)
    scopes = _coroutine(Memory.scopes)
    gate_trace = _coroutine(Memory.gate_trace)
    embed = _coroutine(Memory.embed)

    async def scope(self, *, user_id: str | None = None, agent_id: str | None = None,
                    run_id: str | None = None) -> "AsyncScopedMemory":
        """This memory with one scope bound, as coroutines: ``ana = await amem.scope(user_id="ana")``.

        A coroutine like every other method here, though it only checks the
        ids (on the event loop: there is nothing to wait for); see ``Memory.scope``.

        Raises:
            ScopeError: no id is given or one is malformed; checked here, once.
            ClosedError: this AsyncMemory is closed.
        """
        if self._closed:
            raise ClosedError("this AsyncMemory")
        return AsyncScopedMemory(self.memory.scope(user_id=user_id, agent_id=agent_id, run_id=run_id),
                                 run=self._run)

    async def close(self) -> None:
        """Stop taking calls, wait for those already submitted, then close the ``Memory``.

        Closing twice is allowed; every other call afterwards raises ClosedError.
        """
        if self._closing is None:
            self._closed = True  # refuse new calls first, then let the running ones finish
            self._closing = asyncio.ensure_future(asyncio.to_thread(self._finish))
        # Shielded: a caller cancelled while waiting (a timeout) leaves the closing to run to its
        # end, and a second close() waits for that same end.
        await asyncio.shield(self._closing)

    def _finish(self) -> None:
        self._pool.shutdown(wait=True)
        self.memory.close()

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncScopedMemory:
    """A ``ScopedMemory`` whose methods are coroutines, run on its ``AsyncMemory``'s pool.

    Made by ``await AsyncMemory.scope(user_id=..., ...)``; closing that AsyncMemory
    makes every call here raise ClosedError.

    Args:
        handle: the synchronous handle whose methods are wrapped.
        run: runs a call on the AsyncMemory's pool (refusing it once closed).
    """

    def __init__(self, handle: ScopedMemory, *, run: Callable[[Callable[[], Any]], Awaitable[Any]]) -> None:
        self.handle = handle
        self._run = run

    @property
    def scope(self) -> Scope:
        """The bound scope (its ids normalized)."""
        return self.handle.scope

    def __repr__(self) -> str:
        return f"Async{self.handle!r}"

    add = _coroutine(ScopedMemory.add, wrapped="handle")
    add_many = _coroutine(ScopedMemory.add_many, wrapped="handle", stoppable=True)
    search = _coroutine(ScopedMemory.search, wrapped="handle")
    context = _coroutine(ScopedMemory.context, wrapped="handle")
    get = _coroutine(ScopedMemory.get, wrapped="handle")
    get_all = _coroutine(ScopedMemory.get_all, wrapped="handle")
    update = _coroutine(ScopedMemory.update, wrapped="handle")
    delete = _coroutine(ScopedMemory.delete, wrapped="handle")
    history = _coroutine(ScopedMemory.history, wrapped="handle")
    links = _coroutine(ScopedMemory.links, wrapped="handle")
    restore = _coroutine(ScopedMemory.restore, wrapped="handle")
    consolidate = _coroutine(ScopedMemory.consolidate, wrapped="handle")
    unconsolidate = _coroutine(ScopedMemory.unconsolidate, wrapped="handle")
    merges = _coroutine(ScopedMemory.merges, wrapped="handle")
    rejections = _coroutine(ScopedMemory.rejections, wrapped="handle")
    faults = _coroutine(ScopedMemory.faults, wrapped="handle")
    forget = _coroutine(ScopedMemory.forget, wrapped="handle")
    purge = _coroutine(ScopedMemory.purge, wrapped="handle")
    stats = _coroutine(ScopedMemory.stats, wrapped="handle")
    gate_trace = _coroutine(ScopedMemory.gate_trace, wrapped="handle")
