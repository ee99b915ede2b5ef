"""The library against a hostile caller, fourth review: built-in subclasses whose own methods raise,
and writes that would make the store hold without bound (metadata, sources)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import InvalidInputError, InvalidTextError, Memory, MemsieveError
from memsieve.inputs import MAX_METADATA_CHARS, MAX_SOURCE_CHARS, MAX_SOURCES
from memsieve.plain import plain
from memsieve.write.candidates import MAX_BULK_METADATA_CHARS


def _boom(*args, **kwargs):
    raise RuntimeError("a caller's method ran")


_STR_METHODS = ["strip", "lower", "casefold", "split", "encode", "startswith", "endswith", "replace", "__len__",
                "__repr__", "__str__", "__format__", "__iter__", "__getitem__", "__contains__", "__add__", "__lt__",
                "isdigit", "join", "find", "rstrip", "lstrip", "__bool__"]
#: A str whose every method raises, but which can still be a dict key (hash and equality kept).
Hostile = type("Hostile", (str,), dict.fromkeys(_STR_METHODS, _boom))
#: ... and one that cannot even be hashed or compared.
Unhashable = type("Unhashable", (Hostile,), {"__hash__": _boom, "__eq__": _boom, "__ne__": _boom})
HostileInt = type("HostileInt", (int,), dict.fromkeys(
    ["__int__", "__index__", "__repr__", "__str__", "__format__", "__hash__", "__eq__", "__lt__", "__le__", "__gt__",
     "__ge__", "__bool__", "__float__", "__add__", "__sub__", "__neg__"], _boom))
HostileDict = type("HostileDict", (dict,), dict.fromkeys(
    ["items", "keys", "values", "__iter__", "__getitem__", "__len__", "__contains__", "get", "copy", "__repr__",
     "__eq__", "__bool__"], _boom))
HostileList = type("HostileList", (list,), dict.fromkeys(
    ["__iter__", "__getitem__", "__len__", "__repr__", "__contains__", "copy", "__bool__", "index"], _boom))


@pytest.fixture
def m(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as memory:
        memory.add("I drink green tea every morning.", user_id="ana")
        yield memory


CALLS = {
    "text": lambda m: m.add(Unhashable("I walk to work."), user_id="ana"),
    "scope id": lambda m: m.add("I walk to work.", user_id=Unhashable("ana")),
    "source": lambda m: m.add("I walk to work.", user_id="ana", source=Unhashable("chat:1")),
    "source list": lambda m: m.add("I walk to work.", user_id="ana", source=HostileList(["chat:1"])),
    "metadata key": lambda m: m.add("I walk to work.", user_id="ana", metadata=dict.fromkeys([Hostile("k")], 1)),
    "metadata dict": lambda m: m.add("I walk to work.", user_id="ana", metadata=HostileDict(k="v")),
    "metadata int": lambda m: m.add("I walk to work.", user_id="ana", metadata={"n": HostileInt(5)}),
    "messages": lambda m: m.add(HostileList([HostileDict(role=Hostile("user"), content=Hostile("I walk."))]),
                                user_id="ana"),
    "valid_from": lambda m: m.add("I walk to work.", user_id="ana", valid_from=Unhashable("2024-05-01")),
    "add_many": lambda m: m.add_many(HostileList([Unhashable("I walk."), HostileDict(content=Hostile("I run."))]),
                                     user_id="ana", batch_size=HostileInt(8)),
    "query": lambda m: m.search(Unhashable("tea"), user_id="ana", limit=HostileInt(3)),
    "filters": lambda m: m.search("tea", user_id="ana", filters=HostileDict(k="v")),
    "context": lambda m: m.context(Unhashable("tea"), user_id="ana", limit=HostileInt(2)),
    "get_all": lambda m: m.get_all(user_id=Unhashable("ana"), limit=HostileInt(2)),
    "forget": lambda m: m.forget(Unhashable("tea"), user_id="ana"),
    "scoped": lambda m: m.scope(user_id=Unhashable("ana")).search(Unhashable("tea"), limit=HostileInt(1)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_builtin_subclass_whose_methods_raise_is_read_as_the_value_it_holds(m, name):
    # None of the subclass's methods is called: the call succeeds as with plain values, or
    # fails with a MemsieveError; never with the caller's RuntimeError.
    try:
        CALLS[name](m)
    except MemsieveError:
        pass
    (after,) = m.add("I read a chapter before bed.", user_id="ana")  # and the Memory still works
    assert after.event == "ADD" and m.get(after.memory_id).text == "I read a chapter before bed."


def test_the_values_it_holds_are_what_is_stored(m):
    (d,) = m.add(Unhashable("I cycle on Sundays."), user_id=Unhashable("ana"), source=Unhashable("chat:7"),
                 metadata=HostileDict(mood=Hostile("calm"), n=HostileInt(3)))
    item = m.get(Unhashable(d.memory_id), user_id="ana")
    assert (item.text, item.source, item.metadata) == ("I cycle on Sundays.", "chat:7", {"mood": "calm", "n": 3})
    assert type(item.text) is str and type(item.metadata["n"]) is int


def test_a_hostile_id_reads_as_an_unknown_one(m):
    with pytest.raises(MemsieveError):
        m.get(Unhashable("no-such-id"))


json_values = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5)
                           | st.floats(allow_nan=False, allow_infinity=False),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                       max_size=3), max_leaves=12)


@settings(max_examples=80, deadline=None)
@given(json_values)
def test_plain_keeps_plain_values_as_they_are(value):
    assert plain(value) is value  # nothing to copy: the very object comes back


def _hostile(value):
    """The same value with every str, int, dict and list in it a subclass whose methods raise."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, str):
        return Hostile(value)
    if isinstance(value, int):
        return HostileInt(value)
    if isinstance(value, list):
        return HostileList(_hostile(v) for v in value)
    return HostileDict((Hostile(k), _hostile(v)) for k, v in value.items())


@settings(max_examples=80, deadline=None)
@given(json_values)
def test_plain_turns_a_hostile_copy_back_into_the_value(value):
    assert plain(_hostile(value)) == value


def test_a_list_that_holds_itself_is_passed_on_not_followed_forever():
    loop: list = []
    loop.append(loop)
    assert plain(loop) is loop


def test_metadata_and_sources_are_bounded_per_write(m):
    before = len(m.get_all(user_id="ana"))
    with pytest.raises(InvalidInputError, match="over the limit of 1,000,000"):
        m.add("I walk to work.", user_id="ana", metadata={"blob": "x" * MAX_METADATA_CHARS})
    with pytest.raises(InvalidInputError, match=f"over the limit of {MAX_SOURCES:,}"):
        m.add("I walk to work.", user_id="ana", source=[f"chat:{i}" for i in range(MAX_SOURCES + 1)])
    with pytest.raises(InvalidInputError, match="a source is an id"):
        m.add("I walk to work.", user_id="ana", source="s" * (MAX_SOURCE_CHARS + 1))
    # the call's metadata is stored with every item: 30 items of 400 kB would store 12 MB
    with pytest.raises(InvalidInputError, match="split the call"):
        m.add_many([f"Fact number {i} about walking." for i in range(30)], user_id="ana",
                   metadata={"blob": "x" * 400_000})
    with pytest.raises(InvalidInputError, match="item 0 metadata, merged"):
        m.add_many([{"content": "I walk.", "metadata": {"b": "y" * 600_000}}], user_id="ana",
                   metadata={"a": "x" * 600_000})
    assert len(m.get_all(user_id="ana")) == before  # nothing half-written
    # at the limits, a write goes in
    m.add("I walk to work.", user_id="ana", source=[f"chat:{i}" for i in range(MAX_SOURCES)],
          metadata={"blob": "x" * (MAX_METADATA_CHARS - 20)})
    assert MAX_BULK_METADATA_CHARS >= 10 * MAX_METADATA_CHARS


def test_the_langgraph_store_reads_hostile_op_fields_as_plain_values(tmp_path, embedder):
    from langgraph.store.base import PutOp, SearchOp

    from memsieve.integrations.langgraph import MemsieveStore

    with MemsieveStore(Memory(tmp_path / "s.db", embedder=embedder)) as store:
        ns = (Unhashable("notes"), Unhashable("ana"))
        assert store.batch([PutOp(ns, Unhashable("home"), HostileDict(text=Hostile("Ana lives in Lisbon."),
                                                                      floor=HostileInt(3)))]) == [None]
        assert store.get(("notes", "ana"), "home").value == {"text": "Ana lives in Lisbon.", "floor": 3}
        (found,) = store.batch([SearchOp((Unhashable("notes"),), filter=HostileDict(floor=HostileInt(3)),
                                         query=Unhashable("Lisbon"), limit=HostileInt(2))])
        assert [item.key for item in found] == ["home"]


class _Liar:
    """Says it is a str (its ``__class__``) but is none."""

    @property  # type: ignore[misc]
    def __class__(self):
        return str


class _SameById(str):
    """Two of these holding "a" are two dict keys, but one str."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


def test_what_plain_cannot_read_is_an_input_error_not_a_leak(m):
    import collections
    from collections.abc import Mapping

    class Unreadable(collections.UserList):
        def __iter__(self):
            raise RuntimeError("a caller's method ran")

        def __getitem__(self, i):
            raise RuntimeError("a caller's method ran")

    class Items(Mapping):
        def __init__(self, d):
            self.d = d

        def __getitem__(self, k):
            return Hostile(self.d[k])

        def __iter__(self):
            return iter(self.d)

        def __len__(self):
            return len(self.d)

    pair = collections.namedtuple("pair", "a b")
    before = len(m.get_all(user_id="ana"))
    for call, match in [
        (lambda: m.add(Unreadable(["I walk."]), user_id="ana"), "reading the messages raised RuntimeError"),
        (lambda: m.add_many(Unreadable(["I walk."]), user_id="ana"), "reading add_many's items raised"),
        (lambda: m.add(_Liar(), user_id="ana"), "says it is a str"),
        (lambda: m.add("I walk.", user_id="ana", metadata={_SameById("a"): 1, _SameById("a"): 2}), "same string"),
    ]:
        with pytest.raises(InvalidInputError, match=match):
            call()
    assert len(m.get_all(user_id="ana")) == before
    # a named tuple of hostile strings as sources, a mapping item of one's own: read as plain values
    (d,) = m.add("I swim on Mondays.", user_id="ana", source=pair(Unhashable("chat:1"), Unhashable("chat:2")))
    assert m.get(d.memory_id).sources == ["chat:1", "chat:2"]
    ((e,),) = m.add_many([Items({"content": "I swim on Fridays."})], user_id="ana")
    assert m.get(e.memory_id).text == "I swim on Fridays."


def test_a_list_of_messages_shares_the_bulk_metadata_bound(m):
    with pytest.raises(InvalidInputError, match="stored with each of its 30 texts"):
        m.add([f"Fact {i} about the tram." for i in range(30)], user_id="ana", metadata={"b": "x" * 400_000})


def test_a_langgraph_put_refused_at_the_limit_keeps_the_item_it_would_replace(tmp_path, embedder):
    from langgraph.store.base import GetOp, PutOp

    from memsieve.integrations.langgraph import MemsieveStore

    with MemsieveStore(Memory(tmp_path / "s.db", embedder=embedder)) as store:
        ns = ("notes", "ana")
        assert store.batch([PutOp(ns, "k", {"text": "Ana lives in Lisbon."})]) == [None]
        # a value that fits on a first put but not once the replaced item's creation time is kept
        big = {"text": "Ana lives in Porto.", "pad": "x" * (MAX_METADATA_CHARS - 120)}
        with pytest.raises(InvalidInputError):
            for _ in range(2):
                store.batch([PutOp(ns, "k", big)])
        (item,) = store.batch([GetOp(ns, "k")])
        assert item is not None and item.value["text"] in ("Ana lives in Lisbon.", "Ana lives in Porto.")


def test_a_role_is_a_name_not_a_way_past_the_metadata_bound(m):
    from memsieve.inputs import MAX_ROLE_CHARS

    with pytest.raises(InvalidTextError, match="over the limit of 100"):
        m.add([{"role": "r" * (MAX_ROLE_CHARS + 1), "content": "I walk to work."}], user_id="ana")
    with pytest.raises(InvalidTextError, match="item 0 role"):
        m.add_many([{"role": "r" * (MAX_ROLE_CHARS + 1), "content": "I walk to work."}], user_id="ana")
    (d,) = m.add([{"role": "tool:weather", "content": "It rained in Porto all week."}], user_id="ana")
    assert m.get(d.memory_id).metadata["role"] == "tool:weather"


def test_folding_thousands_of_sources_keeps_each_once_in_order():
    from memsieve.records import merged_sources

    first = [f"chat:{i}" for i in range(5000)]
    again = [f"chat:{i}" for i in range(2500, 7500)]
    merged = merged_sources(first, again, first[:10], limit=10_000)
    assert merged == [f"chat:{i}" for i in range(7500)]


def test_a_memory_folded_into_again_and_again_keeps_a_bounded_list_of_sources(m):
    from memsieve.records import MAX_MEMORY_SOURCES

    first = [f"chat:{i}" for i in range(600)]
    later = [f"chat:{i}" for i in range(600, 1200)]
    (a,) = m.add("Thanks, that helps a lot!", user_id="ana", source=first)
    (d,) = m.add("Thanks, that helps a lot!", user_id="ana", source=later)
    assert d.event == "NOOP" and d.memory_id == a.memory_id
    kept = m.get(a.memory_id).sources
    assert len(kept) == MAX_MEMORY_SOURCES == 1_000
    assert kept[:500] == first[:500] and kept[500:] == later[100:]
    # the sources the memory no longer lists are still findable, with the text, in the fold's record
    (rejection,) = [r for r in m.rejections(user_id="ana") if r.id == d.rejection_id]
    assert rejection.sources == later and rejection.text == "Thanks, that helps a lot!"
