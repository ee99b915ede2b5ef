"""MemsieveStore: LangGraph's BaseStore on memsieve, inside a real StateGraph and on its own."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp

from memsieve import GateConfig, Memory
from memsieve.errors import InvalidInputError, MemsieveError
from memsieve.integrations.langgraph import MemsieveStore, namespace_user, scope_namespace
from memsieve.scope import Scope

LISBON = "Ana moved to Lisbon in March 2024."
NURSE = "Her job: nurse at the children's hospital."
CELLO = "Cello lessons every Thursday evening."


@pytest.fixture()
def mem(tmp_path, embedder):
    m = Memory(tmp_path / "lg.db", embedder=embedder)
    yield m
    m.close()


@pytest.fixture()
def store(mem):
    return MemsieveStore(mem, fields=["text"])


class State(TypedDict, total=False):
    user: str
    said: str
    question: str
    stored: bool
    recalled: list[str]


@dataclass
class Ctx:
    user: str


def test_a_state_graph_node_writes_and_reads_memories(store, mem):
    def remember(state: State, runtime: Runtime[Ctx]) -> State:
        ns = ("memories", runtime.context.user)
        runtime.store.put(ns, f"turn-{len(runtime.store.search(ns, limit=100))}", {"text": state["said"]})
        return {"stored": runtime.store.last_decisions[-1].stored}

    def recall(state: State, runtime: Runtime[Ctx]) -> State:
        hits = runtime.store.search(("memories", runtime.context.user), query=state["question"], limit=1)
        return {"recalled": [h.value["text"] for h in hits]}

    graph = StateGraph(State, context_schema=Ctx)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=store)

    ask = "the city Ana moved to"
    out = [app.invoke({"said": text, "question": ask}, context=Ctx(user="ana")) for text in (LISBON, NURSE, LISBON)]
    assert [o["stored"] for o in out] == [True, True, False]  # the repeat was refused by the gate
    assert out[-1]["recalled"] == [LISBON]
    assert sorted(m.text for m in mem.get_all(user_id="memories/ana")) == sorted([LISBON, NURSE])
    rejection = mem.rejections(user_id="memories/ana")
    assert [r.text for r in rejection] == [LISBON] and rejection[0].layer == "exact"
    # the other user's namespace is another scope
    other = app.invoke({"said": CELLO, "question": "what instrument"}, context=Ctx(user="bo"))
    assert other["stored"] and other["recalled"] == [CELLO]
    assert store.list_namespaces() == [("memories", "ana"), ("memories", "bo")]


def test_put_get_keeps_the_key_and_reports_the_gate(store, mem):
    ns = ("people", "ana")
    store.put(ns, "home", {"text": LISBON, "year": 2024})
    (first,) = store.last_decisions
    assert (first.namespace, first.key, first.stored) == (ns, "home", True)
    assert first.decisions[0].event == "ADD" and first.decisions[0].reason
    item = store.get(ns, "home")
    assert (item.key, item.namespace, item.value) == ("home", ns, {"text": LISBON, "year": 2024})
    (row,) = mem.get_all(user_id="people/ana")
    assert row.id == first.decisions[0].memory_id and row.metadata["langgraph"]["key"] == "home"
    assert row.sources == ["home"]

    store.put(ns, "again", {"text": LISBON, "year": 2025})
    (dup,) = store.last_decisions
    assert dup.stored is False and dup.decisions[0].event == "NOOP" and dup.decisions[0].rejection_id
    assert store.get(ns, "again") is None
    # the rejection keeps the value: restoring it makes the key hold it after all
    restored = mem.restore(dup.decisions[0].rejection_id)
    assert store.get(ns, "again").value == {"text": LISBON, "year": 2025}
    assert restored.metadata["langgraph"]["key"] == "again"


def test_put_to_a_held_key_replaces_its_memory_with_history(store, mem):
    ns = ("people", "ana")
    store.put(ns, "home", {"text": LISBON})
    old = store.get(ns, "home")
    old_id = store.last_decisions[0].decisions[0].memory_id
    store.put(ns, "home", {"text": "Ana moved to Porto in May 2025."})
    (put,) = store.last_decisions
    assert put.stored and put.replaced == [old_id]
    new = store.get(ns, "home")
    assert new.value == {"text": "Ana moved to Porto in May 2025."}
    assert new.created_at == old.created_at and new.updated_at > old.updated_at
    assert mem.get(old_id).is_active is False
    assert "replaced by a put to key 'home'" in mem.history(old_id)[-1].reason
    store.delete(ns, "home")
    assert store.get(ns, "home") is None and store.list_namespaces() == []
    assert mem.history(put.decisions[0].memory_id)[-1].event == "DELETE"  # soft: still readable


def test_a_put_to_a_held_key_embeds_its_value_once_and_fails_whole(tmp_path, table_embedder):
    with Memory(tmp_path / "once.db", embedder=table_embedder) as m:
        store = MemsieveStore(m, fields=["text"])
        ns = ("people", "ana")
        store.put(ns, "home", {"text": LISBON})
        calls = table_embedder.calls
        store.put(ns, "home", {"text": "Ana moved to Porto in May 2025."})
        assert table_embedder.calls - calls == 1
        assert store.get(ns, "home").value == {"text": "Ana moved to Porto in May 2025."}

        def broken(texts):
            raise RuntimeError("the model file is gone")

        table_embedder.embed = broken
        with pytest.raises(MemsieveError, match="the model file is gone"):
            store.put(ns, "home", {"text": "Ana moved to Faro in June 2026."})
        assert store.get(ns, "home").value == {"text": "Ana moved to Porto in May 2025."}


def test_search_queries_every_namespace_under_the_prefix(store):
    store.put(("people", "ana"), "home", {"text": LISBON})
    store.put(("people", "ana"), "job", {"text": NURSE})
    store.put(("people", "bo"), "music", {"text": CELLO})
    store.put(("people", "bo"), "quiet", {"text": "Bo keeps a diary about Lisbon trams."}, index=False)
    hits = store.search(("people",), query="which instrument does someone play", limit=4)
    assert hits[0].key == "music" and all(h.score is not None for h in hits)
    assert "quiet" not in {h.key for h in store.search(("people",), query="Lisbon trams diary", limit=10)}
    assert "quiet" in {h.key for h in store.search(("people", "bo"), limit=10)}  # still there without a query
    assert {h.key for h in store.search(("people", "ana"), query="anything", limit=10)} == {"home", "job"}
    assert len(store.search(("people",), query="Ana", limit=2)) == 2
    everything = store.search(("people",), limit=10)
    assert len(everything) == 4 and everything == sorted(everything, key=lambda h: h.updated_at, reverse=True)
    assert [h.key for h in store.search(("people",), limit=2, offset=1)] == [h.key for h in everything[1:3]]


def test_filters_honour_every_documented_operator(store):
    ns = ("notes",)
    rows = {"a": {"text": "Fishing boats crowd the harbour at dawn.", "stars": 1, "tag": "sea", "meta": {"lang": "en"}},
            "b": {"text": "Snow closes the mountain pass in January.", "stars": 3, "tag": "hill",
                  "meta": {"lang": "pt"}},
            "c": {"text": "The old library lends rare books on Saturdays.", "stars": 5, "tag": "town"},
            "d": {"text": "Farmers sell cheese at the Friday market.", "stars": "many"}}
    for key, value in rows.items():
        store.put(ns, key, value)
    assert all(p.stored for p in store.last_decisions) and len(store.search(ns, limit=10)) == 4

    def keys(flt, query=None):
        return sorted(h.key for h in store.search(ns, filter=flt, query=query, limit=10))

    assert keys({"tag": "sea"}) == ["a"] and keys({"tag": {"$eq": "hill"}}) == ["b"]
    assert keys({"tag": {"$ne": "sea"}}) == ["b", "c", "d"]  # a missing field is not equal
    # As in LangGraph's InMemoryStore: order operators compare floats, and "many" is none, so they fail.
    with pytest.raises(InvalidInputError, match=r"operator '\$gt' compares numbers, and 'many' is none"):
        keys({"stars": {"$gt": 1}})
    with pytest.raises(InvalidInputError, match="compares numbers"):
        keys({"stars": {"$gte": 1}}, query="library books")  # whichever items the ranking reaches
    store.put(ns, "d", {"text": "Farmers sell cheese at the Friday market.", "stars": "4"})
    assert keys({"stars": {"$gt": 1}}) == ["b", "c", "d"]  # "4" reads as 4.0
    assert keys({"stars": {"$gte": 3}}) == ["b", "c", "d"] and keys({"stars": {"$lt": 3}}) == ["a"]
    assert keys({"stars": {"$lte": 3, "$gt": 1}}) == ["b"] and keys({"stars": {"$gt": "2.5"}}) == ["b", "c", "d"]
    assert keys({"meta.lang": "pt"}) == [] and keys({"meta": {"lang": "en"}}) == ["a"]  # a key, not a path
    assert keys({"tag": None}) == ["d"] and keys({"stars": 1.0}) == ["a"]  # a missing key reads as None
    assert keys({"stars": {"$gte": 1}}, query="library books") == ["a", "b", "c", "d"]
    assert store.search(ns, filter={"stars": {"$gte": 1}}, query="library books", limit=1)[0].key == "c"
    with pytest.raises(InvalidInputError, match=r"unknown operator '\$in'"):
        store.search(ns, filter={"tag": {"$in": ["sea"]}})


def test_list_namespaces_matches_prefix_suffix_depth_and_pages(store, mem):
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
               ("x_y", "v1")]:
        store.put(ns, "k", {"text": f"Item stored under {'/'.join(ns)}."})
    mem.add("A memory written without the store.", user_id="plain")
    mem.add("A memory of an agent scope.", user_id="plain", agent_id="bot")
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("*", "i")) == [("a", "b", "d", "i")]
    assert ("plain",) in store.list_namespaces() and len(store.list_namespaces()) == 7
    assert store.list_namespaces(limit=2, offset=1) == store.list_namespaces()[1:3]
    assert store.list_namespaces(max_depth=1) == [("a",), ("plain",), ("x_y",)]


def test_memories_written_directly_are_items_and_labels_round_trip(store, mem):
    decision = mem.add(NURSE, user_id="team/ana")[0]
    item = store.get(("team", "ana"), decision.memory_id)
    assert item.value == {"text": NURSE} and item.key == decision.memory_id
    odd = ("a/b", "ç %", "x")
    assert scope_namespace(Scope.of(user_id=namespace_user(odd))) == odd
    store.put(odd, "k", {"text": LISBON})
    assert odd in store.list_namespaces() and ("a", "b", "ç %", "x") not in store.list_namespaces()
    assert store.get(odd, "k").value == {"text": LISBON}


def test_bad_input_is_typed_and_a_batch_runs_all_or_nothing(store, mem):
    ns = ("people", "ana")
    store.put(ns, "home", {"text": LISBON})
    with pytest.raises(InvalidNamespaceError):
        store.put(("bad.label",), "k", {"text": "x"})
    with pytest.raises(MemsieveError) as caught:  # a batch op bypasses BaseStore's own checks; ours catch it
        store.batch([PutOp(("ok",), "k", {"text": "fine"}), PutOp(("bad.label",), "k", {"text": "x"})])
    assert isinstance(caught.value, InvalidNamespaceError)
    assert store.list_namespaces() == [ns]  # the good op did not run either
    with pytest.raises(InvalidInputError, match="none of the fields"):
        store.put(ns, "home", {"body": "no text field"})
    assert store.get(ns, "home").value == {"text": LISBON}  # the held value survives a refused put
    with pytest.raises(InvalidInputError, match="none of the fields"):  # a bad value anywhere: no op runs
        store.batch([PutOp(ns, "new", {"text": "A fine new fact."}), PutOp(ns, "home", {"body": 1})])
    assert store.get(ns, "new") is None
    with pytest.raises(InvalidInputError, match="mapping"):
        store.batch([PutOp(ns, "k", ["not", "a", "mapping"])])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="value"):
        store.put(ns, "k", {"text": "fine", "when": object()})
    with pytest.raises(NotImplementedError):
        store.put(ns, "k", {"text": "fine"}, ttl=5)
    with pytest.raises(InvalidInputError, match="fields"):
        MemsieveStore(mem, fields="text")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="Memory or the path or URL"):
        MemsieveStore(42)  # type: ignore[arg-type]
    assert [m.text for m in mem.get_all(user_id="people/ana")] == [LISBON]


def test_abatch_and_the_async_methods(store):
    ns = ("async", "ana")

    async def main():
        await asyncio.gather(store.aput(ns, "home", {"text": LISBON}), store.aput(ns, "job", {"text": NURSE}),
                             store.aput(ns, "music", {"text": CELLO}))
        got = await store.aget(ns, "job")
        hits = await store.asearch(ns, query="the city Ana moved to", limit=1)
        both = await store.abatch([GetOp(ns, "music"), SearchOp(ns, filter={"text": LISBON})])
        await store.adelete(ns, "music")
        return got, hits, both, await store.alist_namespaces(), await store.aget(ns, "music")

    got, hits, (music, filtered), names, gone = asyncio.run(main())
    assert isinstance(store, BaseStore)
    assert got.value == {"text": NURSE} and [h.key for h in hits] == ["home"]
    assert music.value == {"text": CELLO} and [h.key for h in filtered] == ["home"]
    assert names == [ns] and gone is None


def test_the_gated_text_is_read_from_the_value(mem):
    store = MemsieveStore(mem)  # the default reading: the first of text, content, memory, data; else JSON
    ns = ("reading",)
    store.put(ns, "a", {"kind": "note", "content": LISBON})
    store.put(ns, "b", {"kind": "note", "memory": "", "data": NURSE})  # an empty string is passed over
    store.put(ns, "c", {"food": "ramen", "level": 3})
    store.put(ns, "d", {"body": {"title": "Cello recital", "when": "Thursday"}}, index=["body.title", "body.when"])
    texts = {m.metadata["langgraph"]["key"]: m.text for m in mem.get_all(user_id="reading")}
    assert texts == {"a": LISBON, "b": NURSE, "c": '{"food":"ramen","level":3}', "d": "Cello recital\nThursday"}
    assert store.get(ns, "c").value == {"food": "ramen", "level": 3}
    with pytest.raises(InvalidInputError, match=r"none of the fields \['title'\]"):
        store.put(ns, "e", {"body": "x"}, index=["title"])


def test_without_the_extra_the_import_names_the_install():
    import subprocess
    import sys

    code = ("import sys\nsys.modules['langgraph'] = None  # as if LangGraph were not installed\n"
            "try:\n    import memsieve.integrations.langgraph\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.startswith("ConfigError the langgraph integration needs 'langgraph'")
    assert 'pip install "memsieve[langgraph]"' in out


def test_an_async_graph_uses_abatch(store, mem):
    async def remember(state: State, runtime: Runtime[Ctx]) -> State:
        ns = ("memories", runtime.context.user)
        await runtime.store.aput(ns, state["said"][:12], {"text": state["said"]})
        hits = await runtime.store.asearch(ns, query=state["question"], limit=1)
        return {"stored": runtime.store.last_decisions[-1].stored, "recalled": [h.value["text"] for h in hits]}

    app = StateGraph(State, context_schema=Ctx).add_node(remember).add_edge(START, "remember").compile(store=store)

    async def main():
        first = await app.ainvoke({"said": LISBON, "question": "the city Ana moved to"}, context=Ctx(user="ana"))
        second = await app.ainvoke({"said": CELLO, "question": "the city Ana moved to"}, context=Ctx(user="ana"))
        return first, second

    first, second = asyncio.run(main())
    assert first["stored"] and second["stored"] and second["recalled"] == [LISBON]
    assert sorted(m.text for m in mem.get_all(user_id="memories/ana")) == sorted([LISBON, CELLO])


def test_racing_puts_to_one_key_leave_one_item(store, mem):
    import threading

    ns = ("race",)
    values = [f"Fact {i}: the ferry leaves pier {i} at {i + 6} o'clock." for i in range(6)]
    threads = [threading.Thread(target=store.put, args=(ns, "ferry", {"text": v})) for v in values]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    held = store.memories(ns, "ferry")
    assert len(held) == 1 and store.get(ns, "ferry").value["text"] in values
    # every earlier value is soft-deleted with the replacement reason, none lost
    gone = [m for m in mem.get_all(user_id="race", include_inactive=True) if not m.is_active]
    assert len(gone) == len(values) - 1
    assert all("replaced by a put to key 'ferry'" in mem.history(m.id)[-1].reason for m in gone)


def test_on_postgres(pg_url, embedder):
    with Memory(pg_url, embedder=embedder) as pg:
        store = MemsieveStore(pg)
        store.put(("memories", "ana"), "home", {"text": LISBON, "year": 2024})
        store.put(("memories", "ana"), "again", {"text": LISBON, "year": 2025})
        store.put(("memories", "bo"), "music", {"text": CELLO, "year": 2023})
        assert [p.stored for p in store.last_decisions] == [True]  # the last batch: bo's put
        assert store.get(("memories", "ana"), "again") is None
        assert store.list_namespaces(prefix=("memories",)) == [("memories", "ana"), ("memories", "bo")]
        hits = store.search(("memories",), query="the city Ana moved to", filter={"year": {"$lte": 2024}})
        assert [h.key for h in hits] == ["home", "music"]


# ---- opening from a path or URL ------------------------------------------------


def test_a_store_opened_from_a_path_owns_its_memory(tmp_path):
    from memsieve import ClosedError

    for target in (str(tmp_path / "by-str.db"), tmp_path / "by-path.db"):
        with MemsieveStore(target) as store:
            store.put(("people", "ana"), "home", {"text": LISBON})
            assert store.get(("people", "ana"), "home").value == {"text": LISBON}
        with pytest.raises(ClosedError):
            store.memory.get_all(user_id="people/ana")
        store.close()  # a second close is harmless
        with Memory(target) as again:
            assert [m.text for m in again.get_all(user_id="people/ana")] == [LISBON]


def test_closing_a_store_leaves_a_memory_passed_in_open(mem):
    with MemsieveStore(mem) as store:
        store.put(("people", "ana"), "home", {"text": LISBON})
    assert [m.text for m in mem.get_all(user_id="people/ana")] == [LISBON]


def test_from_conn_string_passes_memory_options_and_closes_after_the_block(tmp_path, embedder):
    from memsieve import ClosedError, GateConfig

    path = tmp_path / "cs.db"
    with MemsieveStore.from_conn_string(str(path), fields=["note"], embedder=embedder,
                                        gate=GateConfig(profile="none")) as store:
        assert store.memory.embedder is embedder and store.fields == ("note",)
        store.put(("people", "ana"), "a", {"note": LISBON})
        store.put(("people", "ana"), "b", {"note": LISBON + "!"})  # the gate is off: a near repeat is stored too
        assert sorted(i.key for i in store.search(("people", "ana"))) == ["a", "b"]
    with pytest.raises(ClosedError):
        store.memory.get_all(user_id="people/ana")
    with Memory(path, embedder=embedder) as again:
        assert len(again.get_all(user_id="people/ana")) == 2


def test_from_conn_string_refuses_bad_fields_before_opening_a_database(tmp_path):
    path = tmp_path / "never.db"
    with pytest.raises(InvalidInputError, match="fields"):
        with MemsieveStore.from_conn_string(path, fields="note"):  # type: ignore[arg-type]
            pass
    assert not path.exists()


# ---- the same puts and searches as LangGraph's InMemoryStore --------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from conftest import TableEmbedder  # noqa: E402

LABELS = ["users", "u1", "u2", "*", "**", "%2A", "a b", "Ü", "x%y", "users*", "-", "?"]
FIELD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False),
                         st.sampled_from(["1", "2.5", " 2 ", "abc", "", "-1e0", "inf", "a.b", "*"]),
                         st.lists(st.integers(0, 2), max_size=2), st.fixed_dictionaries({"n": st.integers(0, 2)}))
OPERANDS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False),
                     st.sampled_from(["1", "2.5", "abc", "0", "-2"]))
CONDITION = st.one_of(
    FIELD_VALUES,
    st.dictionaries(st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), OPERANDS, min_size=1, max_size=2),
    st.fixed_dictionaries({"n": st.one_of(st.integers(0, 2), st.fixed_dictionaries({"$gte": st.integers(0, 2)}))}))
NAMESPACES = st.lists(st.sampled_from(LABELS), min_size=1, max_size=3).map(tuple)
PUT = st.tuples(NAMESPACES, st.sampled_from(["k1", "k2", "k3"]),
                st.dictionaries(st.sampled_from(["x", "y", "a.b"]), FIELD_VALUES, max_size=3))
SEARCH = st.tuples(st.lists(st.sampled_from(LABELS), max_size=2).map(tuple),
                   st.one_of(st.none(), st.dictionaries(st.sampled_from(["x", "y", "a.b", "z"]), CONDITION,
                                                        min_size=1, max_size=2)))


def _outcome(store, prefix, flt):
    """The (namespace, key) set a search returns, or "error" when it fails on the filter."""
    try:
        hits = store.search(prefix, filter=flt, limit=1000)
    except (ValueError, TypeError, OverflowError, InvalidInputError):
        return "error"
    return {(h.namespace, h.key) for h in hits}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(puts=st.lists(PUT, min_size=1, max_size=8), searches=st.lists(SEARCH, min_size=1, max_size=6))
def test_search_agrees_with_langgraphs_in_memory_store(puts, searches):
    # Every put is stored (no gate); texts are unique so none is a duplicate of another.
    ours = MemsieveStore(Memory(":memory:", embedder=TableEmbedder(), gate=GateConfig(profile="none")), fields=["text"])
    theirs = InMemoryStore()
    try:
        for i, (ns, key, value) in enumerate(puts):
            value = {**value, "text": f"note number {i} under {'/'.join(ns)} at {key}"}
            ours.put(ns, key, value)
            theirs.put(ns, key, value)
        for prefix, flt in searches:
            assert _outcome(ours, prefix, flt) == _outcome(theirs, prefix, flt), (prefix, flt)
        assert _outcome(ours, ("*",), None) == _outcome(theirs, ("*",), None)
    finally:
        ours.memory.close()


def test_a_star_in_a_search_prefix_is_a_label(store):
    for ns in [("users", "ana"), ("users", "ben"), ("users", "*"), ("*",)]:
        store.put(ns, "k", {"text": f"A note kept under {'/'.join(ns)}."})
    assert {h.namespace for h in store.search(("*",))} == {("*",)}
    assert {h.namespace for h in store.search(("users", "*"))} == {("users", "*")}
    assert len(store.search(("users",))) == 3
    assert store.list_namespaces(prefix=("users", "*")) == [("users", "*"), ("users", "ana"), ("users", "ben")]


# ---- sixth review: a failed put, a refused batch, other writers' metadata, unchecked sizes ----------------------

class FlakyEmbedder:
    """A real embedder that fails on texts holding FAIL, as an unreachable embedding service would."""

    def __init__(self, inner):
        self.inner, self.dim, self.name = inner, 384, "flaky"

    def embed(self, texts):
        if any("FAIL" in t for t in texts):
            raise ConnectionError("embedding service unreachable")
        return self.inner.embed(texts)


def test_a_put_that_fails_to_embed_leaves_the_old_item(tmp_path, embedder):
    from memsieve.errors import EmbedderError

    with Memory(tmp_path / "flaky.db", embedder=FlakyEmbedder(embedder)) as m:
        store = MemsieveStore(m)
        store.put(("memories", "ana"), "address", {"text": "Ana lives at 12 Rua Augusta, Lisbon."})
        with pytest.raises(EmbedderError):
            store.put(("memories", "ana"), "address", {"text": "Ana lives at 7 Baker Street FAIL"})
        assert store.get(("memories", "ana"), "address").value == {"text": "Ana lives at 12 Rua Augusta, Lisbon."}


@pytest.mark.parametrize("bad", [SearchOp(("memories",), query="  "), SearchOp(("memories",), limit=-1),
                                 SearchOp(("memories",), offset=-1), SearchOp(("memories",), limit="ten")])
def test_a_batch_with_a_bad_search_writes_nothing(store, bad):
    with pytest.raises(MemsieveError):
        store.batch([PutOp(("memories", "ana"), "job", {"text": NURSE}), bad])
    assert store.get(("memories", "ana"), "job") is None


def test_list_namespaces_checks_its_sizes(store):
    from langgraph.store.base import ListNamespacesOp

    store.put(("memories", "ana"), "job", {"text": NURSE})
    for bad in (ListNamespacesOp(limit=-1), ListNamespacesOp(offset=-1), ListNamespacesOp(max_depth=0)):
        with pytest.raises(InvalidInputError):
            store.batch([bad])
    assert store.list_namespaces() == [("memories", "ana")]


def test_another_writers_metadata_breaks_no_read(store, mem):
    store.put(("memories", "ana"), "job", {"text": NURSE})
    mem.add(CELLO, user_id=namespace_user(("memories", "ana")),
            metadata={"langgraph": {"key": "hobby", "value": {"text": CELLO}, "created_at": "yesterday"}})
    assert {it.key for it in store.search(("memories",))} == {"job", "hobby"}
    assert store.get(("memories", "ana"), "hobby").value == {"text": CELLO}


def test_a_lone_surrogate_label_is_a_namespace_error_and_holds_nothing(store):
    from memsieve.integrations.langgraph import NamespaceError

    with pytest.raises(NamespaceError):
        store.put(("memories", "an\ud800a"), "job", {"text": NURSE})
    assert store.get(("memories", "an\ud800a"), "job") is None


@pytest.mark.parametrize("key", ["", "   ", 7, "k" * 2001])
def test_a_bad_key_is_named_as_a_key(store, key):
    with pytest.raises(InvalidInputError, match="a put's key must be"):
        store.batch([PutOp(("memories", "ana"), key, {"text": NURSE})])
