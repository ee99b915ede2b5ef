"""``MemsieveStore``: LangGraph's long-term memory interface (``BaseStore``) on memsieve.

LangGraph's own stores keep whatever is put; this one sends every ``put``
through memsieve's write gate, so a value that only repeats what a namespace
already holds is recorded as a rejection (auditable, restorable) instead of
stored twice. Needs the ``memsieve[langgraph]`` extra.

Mapping:
    - A namespace is one memsieve scope: its ``user_id`` is the labels,
      each percent-encoded, joined by ``/`` (``("memories", "ana")`` is the
      user ``memories/ana``, and a memory written with ``user_id="ana"`` is
      in the namespace ``("ana",)``). Scopes with an agent or run id are not
      namespaces of this store.
    - An item is one memory. Its text (what is gated, embedded and searched)
      is the value's first string among ``text``, ``content``, ``memory``,
      ``data`` (else the whole value as compact JSON), or, with ``fields``,
      the fields named (dotted paths; ``"$"`` is the whole value as JSON).
      Plain text matters: JSON values look alike to the embedder, so the gate
      and freshness would take them for versions of one another. The value itself, the key and the
      item's first creation time are kept in the memory's metadata under
      ``"langgraph"``. A memory written without the store (by ``Memory.add``
      or ``memsieve mcp``) reads as an item whose key is its id and whose
      value is ``{"text": ...}``.
    - ``put`` to a key that holds an item soft-deletes that memory (its
      history says why) and gates the new value, in one transaction
      (``Memory.add(replaces=...)``): the old memory goes first, and a
      failing embedder or write leaves it in place. After a NOOP the key
      holds nothing; the decision says why and names the rejection that
      ``Memory.restore`` stores after all. ``BaseStore.put`` returns None,
      so the decisions of the last batch are in ``store.last_decisions``.
    - ``search`` with a query is memsieve's default search in every namespace
      under the prefix (a literal prefix: ``"*"`` is a label, as in LangGraph's
      InMemoryStore; ``list_namespaces`` patterns are where it is a wildcard), each namespace's results in memsieve's order, the
      lists merged by their next memory's cosine to the query; without a
      query, items newest first.
      ``filter`` applies to the values as InMemoryStore applies it (see
      memsieve.integrations.store_filters).
      An item put with ``index=False`` is stored (and gated) but left out of
      searches with a query.

Finding a key reads the namespace's memories, so ``get`` and ``put`` cost
grows with the namespace; TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from memsieve.errors import InvalidInputError, MemsieveError, ScopeError, short_repr
from memsieve.integrations import require_extra
from memsieve.inputs import MAX_SOURCE_CHARS, check_limit, check_metadata, check_storable, check_text, is_blank
from memsieve.plain import plain
from memsieve.integrations.store_filters import check_filter, lookup, matches, pattern_matches
from memsieve.memory import Memory
from memsieve.records import Decision, MemoryItem
from memsieve.scope import Scope

require_extra("langgraph", extra="langgraph")

from langgraph.store.base import (  # noqa: E402  (after the extra check, for its message)
    BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp,
    validate_op_namespace)

META = "langgraph"
#: Where the default reading of a value finds its text, in this order.
TEXT_FIELDS: tuple[str, ...] = ("text", "content", "memory", "data")
#: The least depth of a query search; offsets within it page through one ranking.
RANK_DEPTH = 100


class NamespaceError(InvalidInputError, InvalidNamespaceError):
    """A namespace this store cannot hold (both a memsieve and a LangGraph error)."""


@dataclass(frozen=True)
class PutDecision:
    """What one ``put`` did.

    Attributes:
        namespace: the item's namespace.
        key: the item's key.
        stored: whether the key now holds the value (False after a NOOP).
        decisions: the write gate's decisions for the value's text.
        replaced: ids of the memories the key held before, now soft-deleted.
    """

    namespace: tuple[str, ...]
    key: str
    stored: bool
    decisions: list[Decision]
    replaced: list[str] = field(default_factory=list)


def namespace_user(namespace: Sequence[str]) -> str:
    """The user id of the scope that holds a namespace (see the module docstring).

    Raises:
        ScopeError: a label holds a lone surrogate, which no store can hold (nor percent-encode).
    """
    try:
        return "/".join(quote(label, safe="") for label in namespace)
    except UnicodeEncodeError:
        raise ScopeError(f"the namespace {short_repr(tuple(namespace))} holds a lone surrogate, which memsieve "
                         "can neither store nor encode; decode its labels with errors='replace'") from None


def scope_namespace(scope: Scope) -> tuple[str, ...] | None:
    """The namespace a scope holds, or None for a scope with an agent or run id."""
    if scope.user_id is None or scope.agent_id is not None or scope.run_id is not None:
        return None
    return tuple(unquote(label) for label in scope.user_id.split("/"))


class MemsieveStore(BaseStore):
    """A LangGraph ``BaseStore`` whose writes go through memsieve's write gate.

    ``MemsieveStore("memories.db")`` (a path or a ``postgresql://`` URL)
    opens a ``Memory`` with the default options and closes it on
    :meth:`close` or at the end of a ``with`` block;
    :meth:`from_conn_string` does the same with options, as LangGraph's
    ``PostgresStore.from_conn_string`` does.

    Args:
        memory: the ``memsieve.Memory`` to read and write (the caller closes
            it), or the path or URL of the database to open one on.
        fields: dotted paths of the value whose texts, joined by newlines,
            are gated and searched; ``"$"`` is the whole value as JSON. None
            (the default) takes the first of TEXT_FIELDS the value holds as a
            string. ``put(..., index=[...])`` names the fields for one item.
    """

    def __init__(self, memory: Memory | str | os.PathLike[str], *, fields: Sequence[str] | None = None) -> None:
        checked = None if fields is None else _check_fields(fields)  # before a file is opened for nothing
        self._owns_memory = isinstance(memory, (str, os.PathLike))
        if self._owns_memory:
            memory = Memory(memory)  # type: ignore[arg-type]
        if not isinstance(memory, Memory):
            raise InvalidInputError(
                f"MemsieveStore needs a memsieve.Memory or the path or URL of a database, got "
                f"{type(memory).__name__}; pass Memory(...) or a path such as 'memories.db'")
        self.memory = memory
        self.fields = checked
        self.last_decisions: list[PutDecision] = []
        # One writer at a time per Memory, whichever store it puts through: a put reads the key's
        # memories, then replaces them.
        self._write_lock = _put_lock(memory)

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str | os.PathLike[str], *, fields: Sequence[str] | None = None,
                         **memory_options: Any) -> Iterator["MemsieveStore"]:
        """A store on a new ``Memory`` for the block, closed after it (as ``PostgresStore.from_conn_string``).

        ::

            with MemsieveStore.from_conn_string("memories.db", embedder=my_embedder) as store:
                graph = builder.compile(store=store)

        Args:
            conn_string: a SQLite path or a ``postgresql://`` URL.
            fields: as for the constructor.
            **memory_options: keyword options of ``memsieve.Memory`` (``embedder``,
                ``gate``, ``llm``, ...).

        Yields:
            The store; its Memory is closed when the block ends.
        """
        if fields is not None:
            _check_fields(fields)
        memory = Memory(conn_string, **memory_options)
        try:
            store = cls(memory, fields=fields)
        except BaseException:
            memory.close()
            raise
        store._owns_memory = True
        try:
            yield store
        finally:
            store.close()

    def close(self) -> None:
        """Close the Memory if this store opened it; a Memory passed in stays open for its caller."""
        if self._owns_memory:
            self._owns_memory = False  # a second close (close() inside a with block) finds nothing to do
            self.memory.close()

    def __enter__(self) -> "MemsieveStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- BaseStore -----------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; every op is checked before any runs.

        Checked: each op's namespace (as the scope id it becomes), each put's
        key, value and text as they will be stored, and each search's filter
        against the values under its prefix now and those the batch puts
        there, so a refused batch writes nothing."""
        # Each op's fields as plain values (memsieve.plain): a str or dict subclass in a
        # namespace, key or value has none of its own methods called.
        # (A list-namespaces op's match conditions are named tuples of langgraph's own: kept.)
        ops = [op._replace(**{f: plain(getattr(op, f)) for f in op._fields if f != "match_conditions"})
               if isinstance(op, tuple) and hasattr(op, "_replace") else op for op in ops]
        texts: dict[int, str] = {}
        for i, op in enumerate(ops):
            _check_op(op)
            _check_namespace_scope(op)
            if isinstance(op, PutOp) and op.value is not None:
                texts[i] = self._checked_text(op)
        if any(isinstance(op, PutOp) for op in ops):
            self._check_searches(ops)
        results: list[Result] = []
        puts: list[PutDecision] = []
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                results.append(None)
                outcome = self._put(op, texts.get(i))
                if outcome is not None:
                    puts.append(outcome)
        if puts:
            self.last_decisions = puts
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on a worker thread, so the event loop is never blocked."""
        return await asyncio.to_thread(self.batch, list(ops))

    # ---- reading -------------------------------------------------------------

    def memories(self, namespace: tuple[str, ...], key: str) -> list[MemoryItem]:
        """The active memories that hold ``key`` in ``namespace``, newest first (normally one)."""
        found = [m for m in self.memory.get_all(user_id=namespace_user(namespace)) if _key_of(m) == key]
        return sorted(found, key=lambda m: (m.created_at, m.id), reverse=True)  # one order for every reader

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        if not namespace or not _storable(namespace):  # no put there can succeed: it holds no items
            return None
        held = self.memories(namespace, key)
        return _item(held[0], namespace) if held else None

    def _items_under(self, namespaces: list[tuple[str, ...]]) -> list[Item]:
        """Every item of the given namespaces, in their order."""
        return [_item(m, ns) for ns in namespaces for m in self.memory.get_all(user_id=namespace_user(ns))]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        flt = check_filter(op.filter)
        namespaces = self._namespaces(prefix=op.namespace_prefix)
        # Every item under the prefix meets the filter, with a query too: an operator that cannot compare a
        # value fails the search whichever items the ranking reaches, as in LangGraph's InMemoryStore.
        items = [_search_item(it, None) for it in self._items_under(namespaces) if matches(it.value, flt)]
        if op.query is None:
            items.sort(key=lambda it: it.updated_at, reverse=True)
            return items[op.offset: op.offset + op.limit]
        want = op.offset + op.limit
        lists = [self._ranked(op.query, ns, flt, want=want) for ns in namespaces]
        return self._merge(op.query, [x for x in lists if x])[op.offset: want]

    def _ranked(self, query: str, namespace: tuple[str, ...], flt: dict[str, Any], *,
                want: int) -> list[tuple[str, SearchItem]]:
        """memsieve's default search of one namespace, the filter and ``index=False`` applied, ``want`` long.

        memsieve's order depends on how deep it searches (freshness lists a
        newer version of a fact before it), so every page is cut from a
        search at least RANK_DEPTH deep: pages within it never overlap.
        """
        depth = max(want, RANK_DEPTH)
        while True:
            hits = self.memory.search(query, limit=depth, user_id=namespace_user(namespace))
            kept = [(h.text, _search_item(_item(h, namespace), h.score)) for h in hits
                    if _meta(h).get("indexed", True)]
            kept = [(text, it) for text, it in kept if matches(it.value, flt)]
            if len(kept) >= want or len(hits) < depth:  # enough, or the namespace is exhausted
                return kept[:want]
            depth *= 4  # the filter dropped hits: look deeper

    def _merge(self, query: str, lists: list[list[tuple[str, SearchItem]]]) -> list[SearchItem]:
        """One ranking from several namespaces' own rankings, each kept in memsieve's order.

        Scores of different scopes' searches are not comparable (hybrid
        fusion normalizes per search), so the lists are merged by the cosine
        of each list's next memory to the query: a k-way merge that never
        reorders a namespace's own results.
        """
        if len(lists) <= 1:
            return [it for _, it in lists[0]] if lists else []
        vectors = self.memory.embed([query, *(text for ranked in lists for text, _ in ranked)])
        cosines = iter((vectors[1:] @ vectors[0]).tolist())
        cos_of = [[next(cosines) for _ in ranked] for ranked in lists]
        heads = [0] * len(lists)
        out: list[SearchItem] = []
        while True:
            live = [i for i, ranked in enumerate(lists) if heads[i] < len(ranked)]
            if not live:
                return out
            best = max(live, key=lambda i: cos_of[i][heads[i]])
            out.append(lists[best][heads[best]][1])
            heads[best] += 1

    def _namespaces(self, *, prefix: Sequence[str] = ()) -> list[tuple[str, ...]]:
        """Namespaces that hold at least one active memory, sorted, under ``prefix``."""
        out = set()
        for key in self.memory.store.scope_keys():
            namespace = scope_namespace(Scope.from_key(key))
            if namespace is not None and namespace[: len(prefix)] == tuple(prefix):  # literal: "*" is a label
                if self.memory.get_all(user_id=namespace_user(namespace), limit=1):
                    out.add(namespace)
        return sorted(out)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names = self._namespaces()  # the patterns below are where "*" matches any label
        for cond in op.match_conditions or ():
            names = [n for n in names if pattern_matches(n, cond.path, at=cond.match_type)]
        if op.max_depth is not None:
            names = sorted({n[: op.max_depth] for n in names})
        return names[op.offset: op.offset + op.limit]

    # ---- writing -------------------------------------------------------------

    def _checked_text(self, op: PutOp) -> str:
        """The text a put gates, with its value checked as it will be stored (inside the memory's metadata,
        with the key): done for the whole batch before any op runs, and before a put deletes what its
        key held."""
        assert op.value is not None
        check_metadata(_stored_meta(op.key, dict(op.value), indexed=op.index is not False,
                                    created="2000-01-01T00:00:00+00:00"), where="value")
        _check_key(op.key)
        return check_text(self._text(dict(op.value), op.index), where="the value's text",
                          max_chars=self.memory.max_text_chars)

    def _check_searches(self, ops: list[Op]) -> None:
        """A search's filter must compare every value it will meet (an operator that cannot compare one fails
        the search): checked before a batch that writes runs, against the values under each search's
        prefix now and those the batch puts."""
        put_values = [(op.namespace, dict(op.value)) for op in ops if isinstance(op, PutOp) and op.value is not None]
        for op in ops:
            if not isinstance(op, SearchOp) or not op.filter:
                continue
            flt = check_filter(op.filter)
            prefix = tuple(op.namespace_prefix)
            for item in self._items_under(self._namespaces(prefix=op.namespace_prefix)):
                matches(item.value, flt)
            for ns, value in put_values:
                if tuple(ns[: len(prefix)]) == prefix:
                    matches(value, flt)

    def _put(self, op: PutOp, text: str | None) -> PutDecision | None:
        with self._write_lock:
            held = self.memories(op.namespace, op.key)
            if op.value is None or text is None:
                for m in held:
                    self.memory.delete(m.id, reason=f"deleted through the LangGraph store (key {op.key!r})")
                return None
            value = dict(op.value)
            created = min((_meta(m).get("created_at", m.created_at) for m in held), default=None)
            meta = _stored_meta(op.key, value, indexed=op.index is not False, created=created)
            # Checked as it will be stored (the kept creation time included) before the item it
            # replaces is deleted: a refused put leaves the old item in place.
            check_metadata(meta, where=f"the value put to key {op.key!r}")
            # The old item goes in the transaction that gates the new value, before it (the gate would
            # fold the new value into it); a failing embedder or write leaves it in place.
            decisions = self.memory.add(text, metadata=meta, source=op.key, user_id=namespace_user(op.namespace),
                                        replaces=[m.id for m in held],
                                        replace_reason=f"replaced by a put to key {op.key!r} of the LangGraph store")
            stored = any(d.event == "ADD" or (d.event == "DELETE" and d.added_id) for d in decisions)
            replaced = [m.id for m in held] + self._one_per_key(op.namespace, op.key)
            return PutDecision(op.namespace, op.key, stored, decisions, replaced)

    def _one_per_key(self, namespace: tuple[str, ...], key: str) -> list[str]:
        """After a put, the key's newest memory is its item and any other goes: two puts of one key that ran
        at once through other Memory objects or processes (which no lock here orders) each read the old
        item, and both added. Each put then keeps the newest, so both leave the same one. Returns the ids
        this put removed."""
        held = self.memories(namespace, key)  # newest first
        removed = []
        for m in held[1:]:
            try:
                self.memory.delete(m.id, reason=f"replaced by a later put to key {key!r} of the LangGraph store")
            except MemsieveError:
                continue  # the other put removed it first
            removed.append(m.id)
        return removed

    def _text(self, value: dict[str, Any], index: Any) -> str:
        fields = _check_fields(index) if isinstance(index, list) else self.fields
        if fields is None:
            first = next((value[f] for f in TEXT_FIELDS if isinstance(value.get(f), str) and value[f].strip()), None)
            return first if first is not None else _compact(value)
        parts = []
        for path in fields:
            found = value if path == "$" else lookup(value, path)
            if isinstance(found, str):
                parts.append(found)
            elif isinstance(found, (dict, list, int, float, bool)):
                parts.append(_compact(found))
        if not parts:
            raise InvalidInputError(f"the value {short_repr(value)} has none of the fields {list(fields)} "
                                    "to remember; pass fields= to MemsieveStore or index=[...] to put")
        return "\n".join(parts)


# ---- helpers -----------------------------------------------------------------


def _stored_meta(key: str, value: dict[str, Any], *, indexed: bool, created: str | None) -> dict[str, Any]:
    """The metadata a put stores its item in (the one shape, checked before and written by ``_put``)."""
    return {META: {"key": key, "value": value, "indexed": indexed, **({"created_at": created} if created else {})}}


def _check_namespace_scope(op: Any) -> None:
    """A put's namespace must make a scope id the memory accepts; refused as a namespace, before any op runs.
    (A get or a search there finds nothing, as in any namespace that holds no item.)"""
    if not isinstance(op, PutOp) or not op.namespace:
        return
    namespace = op.namespace
    try:
        Scope.of(user_id=namespace_user(namespace))
    except ScopeError as exc:
        raise NamespaceError(f"the namespace {short_repr(tuple(namespace))} cannot be stored: its labels, "
                             f"percent-encoded and joined by '/', make an id the memory refuses ({exc}); "
                             "use fewer or shorter labels") from None


def _storable(namespace: Sequence[str]) -> bool:
    """Whether a namespace makes a scope id the memory accepts (``_check_namespace_scope``)."""
    try:
        Scope.of(user_id=namespace_user(namespace))
    except ScopeError:
        return False
    return True


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _check_fields(fields: Any) -> tuple[str, ...]:
    if isinstance(fields, str) or not isinstance(fields, Sequence) or not fields \
            or not all(isinstance(f, str) and f for f in fields):
        raise InvalidInputError(f"fields must be a non-empty list of dotted paths (or '$'), got {short_repr(fields)}")
    return tuple(fields)


def _check_op(op: Any) -> None:
    """An op's namespace and value, checked before any op of the batch runs."""
    if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
        raise InvalidInputError(f"MemsieveStore.batch takes GetOp, PutOp, SearchOp or ListNamespacesOp, "
                                f"got {type(op).__name__}")
    try:
        validate_op_namespace(op)
    except InvalidNamespaceError as exc:
        raise NamespaceError(str(exc)) from exc
    if isinstance(op, PutOp):
        if not op.namespace:  # (BaseStore.put also refuses a first label "langgraph"; a batch may use it)
            raise NamespaceError("the empty namespace () cannot hold items; put into a namespace of one "
                                 "label or more, e.g. ('memories', user_id)")
        if op.value is not None and not isinstance(op.value, Mapping):
            raise InvalidInputError(f"a put's value must be a mapping, got {type(op.value).__name__}")
        if op.ttl is not None:
            raise InvalidInputError("MemsieveStore does not support TTLs; put without ttl")
    if isinstance(op, SearchOp):
        check_filter(op.filter)
        if op.query is not None:
            check_text(op.query, where="a search's query")
    if isinstance(op, (SearchOp, ListNamespacesOp)):
        check_limit(op.limit, where=f"a {type(op).__name__}'s limit")
        _check_size(op.offset, what=f"a {type(op).__name__}'s offset", minimum=0)
    if isinstance(op, ListNamespacesOp) and op.max_depth is not None:
        _check_size(op.max_depth, what="a ListNamespacesOp's max_depth", minimum=1)


def _check_size(value: Any, *, what: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInputError(f"{what} must be an integer of at least {minimum}, got {type(value).__name__} "
                                f"{short_repr(value)}")


def _put_lock(memory: Memory) -> threading.Lock:
    """The one lock of the puts through any MemsieveStore on ``memory``."""
    with _PUT_LOCKS_GUARD:
        lock = _PUT_LOCKS.get(memory)
        if lock is None:
            lock = _PUT_LOCKS[memory] = threading.Lock()
        return lock


_PUT_LOCKS: "weakref.WeakKeyDictionary[Memory, threading.Lock]" = weakref.WeakKeyDictionary()
_PUT_LOCKS_GUARD = threading.Lock()


def _check_key(key: Any) -> None:
    """A put's key: a non-blank string a store can hold, of at most MAX_SOURCE_CHARS (it is stored as the
    memory's source, which refuses what ``is_blank`` calls blank: checked here, before any op runs)."""
    if not isinstance(key, str) or is_blank(key) or len(key) > MAX_SOURCE_CHARS:
        raise InvalidInputError(f"a put's key must be a non-blank string of at most {MAX_SOURCE_CHARS:,} "
                                f"characters, got {type(key).__name__} {short_repr(key)}; pass e.g. key='address'")
    check_storable(key, where="a put's key")


def _meta(memory: Any) -> dict[str, Any]:
    meta = memory.metadata.get(META) if isinstance(memory.metadata, dict) else None
    return meta if isinstance(meta, dict) else {}


def _key_of(memory: Any) -> str:
    key = _meta(memory).get("key")
    return key if isinstance(key, str) else memory.id


def _item(memory: Any, namespace: tuple[str, ...]) -> Item:
    meta = _meta(memory)
    stored = meta.get("value")
    value: dict[str, Any] = stored if isinstance(stored, dict) else {"text": memory.text}
    updated = datetime.fromisoformat(memory.created_at)
    return Item(value=value, key=_key_of(memory), namespace=namespace, created_at=_created(meta, updated),
                updated_at=updated)


def _created(meta: dict[str, Any], updated: datetime) -> datetime:
    """The item's first put time as stored, or ``updated``: metadata written through Memory itself may
    hold anything under this key, and one bad time must not fail every read of the namespace."""
    created = meta.get("created_at")
    if isinstance(created, str):
        try:
            return datetime.fromisoformat(created)
        except ValueError:
            pass
    return updated


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at, score=score)
