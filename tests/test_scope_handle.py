"""``Memory.scope(...)``: a handle with the scope bound, equal to the keyword calls in every method."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile import HashEmbedder, snapshot
from memsieve import (AsyncMemory, AsyncScopedMemory, ClosedError, Memory, NotFoundError, Scope, ScopedMemory,
                      ScopeError)
from memsieve.parts import LLM

IDS = ("user_id", "agent_id", "run_id")
#: Every method of the handle: Memory's scoped methods, the ids bound.
METHODS = ("add", "add_many", "search", "context", "get", "get_all", "history", "update", "delete", "forget",
           "restore", "rejections", "faults", "stats", "consolidate", "merges", "unconsolidate", "links",
           "gate_trace", "purge")

TEXTS = [
    "Ana moved to Lisbon in March.",
    "Ana works as a nurse at the city hospital.",
    "Ana moved to Lisbon in March.",  # exact duplicate: NOOP on the exact layer
    "Ana relocated to Lisbon in March.",  # a rewording: the gate decides
    "Ana's sister Rita lives in Porto.",
    "Ana is allergic to peanuts.",
]
BULK = ["Ana started learning the cello.", {"content": "Ana's cat is called Miso.", "valid_from": "2024-05-01",
                                            "metadata": {"topic": "pets"}, "source": "chat-7"},
        "Ana started learning the cello."]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[0-9.:+Z-]*")


def canon(value, ids):
    """``value`` with ids numbered by first appearance, times and file sizes dropped, floats exact."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: canon(v, ids) for k, v in value.items() if not k.endswith("_at") and k != "store_bytes"}
    if isinstance(value, (list, tuple)):
        return [canon(v, ids) for v in value]
    if isinstance(value, float):
        return "nan" if math.isnan(value) else value.hex()  # bit for bit
    if isinstance(value, str):
        value = _UUID.sub(lambda m: f"#{ids.setdefault(m.group(), len(ids))}", value)
        return _TIME.sub("<time>", value)
    return value


def scenario(call):
    """Every handle method once or more, through ``call(name, *args, **kwargs)``; the results in order."""
    out = [call("add", t, source=f"turn{i}") for i, t in enumerate(TEXTS)]
    out.append(call("add", [{"role": "user", "content": "I prefer tea over coffee."}], metadata={"k": 1}))
    out.append(call("add_many", BULK, batch_size=2))
    items = call("get_all")
    first, second = items[0].id, items[1].id
    out += [items, call("get", first), call("links", first)]
    out.append(call("update", second, "Ana works as a surgeon at the city hospital.", reason="promoted"))
    out.append(call("delete", items[-1].id))
    out.append(call("history", second))
    out.append(call("forget", "please forget that Ana is allergic to peanuts", dry_run=True))
    out.append(call("forget", "please forget that Ana is allergic to peanuts"))
    rejections = call("rejections")
    out += [rejections, call("rejections", layer="exact", limit=5)]
    out.append(call("restore", rejections[0].id))
    out.append(call("consolidate", dry_run=True))
    report = call("consolidate")
    out += [report, call("merges")]
    if report.merges:
        out.append(call("unconsolidate", call("merges")[0].id))
        out.append(call("merges", include_undone=True))
    for mode in ("hybrid", "dense", "keyword"):
        out.append(call("search", "where does Ana live", limit=3, mode=mode))
    out.append(call("search", "Ana's job", current_only=True, filters={"role": "user"}))
    out.append(call("context", "where does Ana live", limit=4, order="time", date_format="long"))
    out += [call("get_all", include_inactive=True), call("faults"), call("stats"), call("gate_trace")]
    return out


def test_every_handle_method_is_memorys_without_the_ids():
    for name in METHODS:
        want = [p for p in inspect.signature(getattr(Memory, name)).parameters.values() if p.name not in IDS]
        got = list(inspect.signature(getattr(ScopedMemory, name)).parameters.values())
        assert [(p.name, p.kind, p.default) for p in got] == [(p.name, p.kind, p.default) for p in want], name
        assert getattr(ScopedMemory, name).__doc__.startswith(f"``Memory.{name}``"), name
    public = {n for n, v in vars(ScopedMemory).items() if callable(v) and not n.startswith("_")}
    assert public == set(METHODS)


def test_no_handle_method_takes_a_scope_id(tmp_path):
    for name in METHODS:
        assert not set(inspect.signature(getattr(ScopedMemory, name)).parameters) & set(IDS), name
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        with pytest.raises(TypeError):
            mem.scope(user_id="ana").add("text", user_id="bob")  # type: ignore[call-arg]
        assert mem.get_all(user_id="bob") == []


def test_the_handle_decides_and_returns_what_the_keyword_calls_do(tmp_path, embedder):
    with Memory(tmp_path / "kw.db", embedder=embedder) as kw, Memory(tmp_path / "h.db", embedder=embedder) as hm:
        ana = hm.scope(user_id="ana", agent_id="helper")
        by_keywords = scenario(lambda name, *a, **k: getattr(kw, name)(*a, user_id="ana", agent_id="helper", **k))
        by_handle = scenario(lambda name, *a, **k: getattr(ana, name)(*a, **k))
    got, want = canon(by_handle, {}), canon(by_keywords, {})
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"call {i} differs"
    events = {d["event"] for d in want[0] + want[2] + want[3]}
    assert "ADD" in events and "NOOP" in events  # the scenario reaches more than one branch


def test_the_async_handle_returns_what_the_sync_one_does(tmp_path, embedder):
    with Memory(tmp_path / "s.db", embedder=embedder) as sync:
        want = canon(scenario(lambda name, *a, **k: getattr(sync.scope(user_id="ana"), name)(*a, **k)), {})
    amem = AsyncMemory(tmp_path / "a.db", embedder=embedder)
    ana = asyncio.run(amem.scope(user_id="ana"))
    assert isinstance(ana, AsyncScopedMemory) and ana.scope == Scope.of("ana")
    got = canon(scenario(lambda name, *a, **k: asyncio.run(getattr(ana, name)(*a, **k))), {})
    assert got == want
    asyncio.run(amem.close())
    with pytest.raises(ClosedError):
        asyncio.run(ana.get_all())
    with pytest.raises(ClosedError):
        asyncio.run(amem.scope(user_id="ana"))


def test_the_async_handle_has_the_sync_handles_signatures():
    for name in METHODS:
        sync, coro = getattr(ScopedMemory, name), getattr(AsyncScopedMemory, name)
        assert inspect.iscoroutinefunction(coro), name
        assert inspect.signature(coro).parameters == inspect.signature(sync).parameters, name
        assert f"ScopedMemory.{name}" in coro.__doc__, name


def _other_scopes_records(mem):
    """Bob's memory, rejection and merge ids, and an id of ana's."""
    bob = mem.scope(user_id="bob")
    bob.add(["Bob plays the trumpet.", "Bob plays the trumpet."])
    bob.restore(bob.rejections()[0].id)  # a second copy, for a merge
    merge = bob.consolidate().merges[0]
    [ana_added] = mem.scope(user_id="ana").add("Ana plays the piano.")
    return bob.get_all()[0].id, bob.rejections()[0].id, merge.id, ana_added.memory_id


def test_by_id_calls_refuse_another_scopes_ids(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        memory_id, rejection_id, merge_id, _ = _other_scopes_records(mem)
        for ana in (mem.scope(user_id="ana"), mem.scope(user_id="bob", agent_id="x")):
            before = snapshot(path)
            calls = {"get": lambda: ana.get(memory_id), "history": lambda: ana.history(memory_id),
                     "links": lambda: ana.links(memory_id), "update": lambda: ana.update(memory_id, "Bob sings."),
                     "delete": lambda: ana.delete(memory_id), "restore": lambda: ana.restore(rejection_id),
                     "unconsolidate": lambda: ana.unconsolidate(merge_id)}
            for name, call in calls.items():
                with pytest.raises(NotFoundError) as refused:
                    call()
                unknown_id = "0" * 36
                unknown = {"restore": lambda: ana.restore(unknown_id),
                           "unconsolidate": lambda: ana.unconsolidate(unknown_id)}.get(name, lambda: ana.get(unknown_id))
                with pytest.raises(NotFoundError) as missing:
                    unknown()
                # an id of another scope reads exactly as an unknown one
                assert str(refused.value).replace(memory_id, "ID").replace(rejection_id, "ID").replace(
                    merge_id, "ID") == str(missing.value).replace(unknown_id, "ID"), name
            assert snapshot(path) == before  # nothing was written
        assert mem.scope(user_id="bob").get(memory_id).id == memory_id


def test_memory_links_takes_an_optional_scope(tmp_path):
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        memory_id, *_ = _other_scopes_records(mem)
        assert mem.links(memory_id) == mem.links(memory_id, user_id="bob") == mem.scope(user_id="bob").links(memory_id)
        with pytest.raises(NotFoundError):
            mem.links(memory_id, user_id="ana")


@pytest.mark.parametrize("ids", [{}, {"user_id": ""}, {"user_id": "  "}, {"user_id": 5}, {"agent_id": "a\x00b"},
                                 {"run_id": "r" * 300}, {"user_id": "ok", "agent_id": "\ud800"}])
def test_a_bad_scope_fails_when_the_handle_is_made(tmp_path, ids):
    path = tmp_path / "m.db"
    with Memory(path, embedder=HashEmbedder()) as mem:
        before = snapshot(path)
        with pytest.raises(ScopeError):
            mem.scope(**ids)
        amem = AsyncMemory.wrap(mem)
        with pytest.raises(ScopeError):
            asyncio.run(amem.scope(**ids))
        assert snapshot(path) == before


def test_scope_ids_are_keywords_only(tmp_path):
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        with pytest.raises(TypeError):
            mem.scope("ana")  # type: ignore[misc]


@settings(max_examples=60, deadline=None)
@given(st.none() | st.text(max_size=8), st.none() | st.text(max_size=8), st.none() | st.text(max_size=8))
def test_the_handle_is_made_exactly_when_the_scope_is_valid(user_id, agent_id, run_id):
    mem = Memory.__new__(Memory)  # scope() reads no part of the Memory: no store is needed
    try:
        want = Scope.of(user_id, agent_id, run_id)
    except ScopeError:
        with pytest.raises(ScopeError):
            mem.scope(user_id=user_id, agent_id=agent_id, run_id=run_id)
        return
    handle = mem.scope(user_id=user_id, agent_id=agent_id, run_id=run_id)
    assert handle.scope == want and handle.memory is mem
    assert handle.scope.is_normalized


def test_the_handle_writes_under_the_normalized_ids(tmp_path):
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        handle = mem.scope(user_id=" ana\n")
        [d] = handle.add("Ana plays the piano.")
        assert repr(handle) == "ScopedMemory(user_id='ana')"
        assert [m.id for m in mem.get_all(user_id="ana")] == [d.memory_id]
        assert mem.get(d.memory_id).user_id == "ana"


class FakeClient:
    """A ready LLM client (memsieve.parts.LLM) that extracts one fact per line and counts its calls."""

    config = None

    def __init__(self) -> None:
        self.extracted: list[str] = []

    def complete(self, messages, *, schema, name):
        raise AssertionError("the band's CRUD step is not reached in this test")

    def extract_facts(self, text):
        self.extracted.append(text)
        return [line.split(": ", 1)[-1].strip() for line in text.splitlines()]

    def usage_dict(self):
        return {"calls": len(self.extracted), "prompt_tokens": 0, "completion_tokens": 0, "faults": 0}


def test_a_ready_llm_client_is_used_as_given(tmp_path):
    client = FakeClient()
    assert isinstance(client, LLM)
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(), llm=client) as mem:
        assert mem.llm is client
        decisions = mem.scope(user_id="ana").add([{"role": "user", "content": "Ana plays the piano."}], infer=True)
        assert [(d.event, d.text) for d in decisions] == [("ADD", "Ana plays the piano.")]
        assert client.extracted == ["user: Ana plays the piano."]
        assert mem.stats(user_id="ana")["llm"]["calls"] == 1
