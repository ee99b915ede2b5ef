"""A scope's ranking is its own: other scopes' writes never change it.

Property: for any contents of scope A and any query, the results of
``search`` (ids and scores, in order) in every mode, plain, filtered and
point-in-time (``as_of``), are
identical before and after any sequence of adds, updates and deletes in other
scopes, on each store. Other scopes include scopes that share A's user id
(``user_id="a", agent_id="x"`` is a different triple), the case a filter on one
column alone would get wrong.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import HashEmbedder
from memsieve import GateConfig, Memory
from memsieve.eval.arms import search_modes
from memsieve.inputs import now_iso

# A small vocabulary, so that texts of different scopes share words: a global
# word statistic (document frequency, average length) would show up in A's scores.
WORDS = ["banana", "apple", "trip", "paris", "2023", "7:40", "sister", "moved", "lisbon", "book",
         "support", "group", "yesterday", "painting", "555-0202", "run", "running", "cat"]
SCOPE_A = {"user_id": "a"}
OTHERS = [{"user_id": "b"}, {"user_id": "a", "agent_id": "x"}, {"user_id": "a", "run_id": "r1"},
          {"agent_id": "a"}, {"user_id": "c", "agent_id": "x", "run_id": "r1"}]
TAGS = ["red", "blue"]

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
doc = st.tuples(text, st.sampled_from(TAGS))
op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(OTHERS) - 1), st.lists(doc, min_size=1, max_size=30)),
    st.tuples(st.just("update"), st.integers(0, 10_000), text),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.just("")),
)


def ranking(mem: Memory, query: str, as_of: str) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """(mode, variant) -> [(id, score)] of scope A, every mode: plain, filtered, and at a point in time."""
    out = {}
    variants: dict[str, dict] = {"plain": {}, "filtered": {"filters": {"tag": "red"}}, "as_of": {"as_of": as_of}}
    for mode in search_modes():
        for name, kwargs in variants.items():
            hits = mem.search(query, **SCOPE_A, mode=mode, limit=10, **kwargs)
            out[(mode, name)] = [(h.id, h.score) for h in hits]
    return out


def add_docs(mem: Memory, docs: list[tuple[str, str]], scope: dict[str, str]) -> list[str]:
    ids = []
    for t, tag in docs:
        ids += [d.memory_id for d in mem.add(t, **scope, metadata={"tag": tag}) if d.memory_id]
    return ids


def check_isolation(target: str | Path, a_docs, before_ops, after_ops, query: str) -> None:
    mem = Memory(target, embedder=HashEmbedder(), gate=GateConfig(profile="none"))
    try:
        add_docs(mem, a_docs, SCOPE_A)
        others = [mid for scope in OTHERS for mid in add_docs(mem, [("apple trip", "red")], scope)]
        apply_ops(mem, before_ops, others)  # other scopes already hold data before the first search
        then = now_iso()
        first = ranking(mem, query, then)
        apply_ops(mem, after_ops, others)
        second = ranking(mem, query, then)
    finally:
        mem.close()
    assert any(first.values()), "scope A must have results for the property to say anything"
    for key in first:
        assert second[key] == first[key], f"scope A's {key} ranking changed after other scopes' writes"


def apply_ops(mem: Memory, ops, others: list[str]) -> None:
    for kind, where, payload in ops:
        if kind == "add":
            others += add_docs(mem, payload, OTHERS[where])
        elif others and kind == "update":
            target = mem.get(others[where % len(others)])
            if target.is_active:
                mem.update(target.id, payload)
        elif others:
            mem.delete(others[where % len(others)])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a_docs=st.lists(doc, min_size=1, max_size=12), before=st.lists(op, max_size=3),
       after=st.lists(op, min_size=1, max_size=4), query=text)
def test_other_scopes_writes_never_change_a_scopes_ranking_sqlite(a_docs, before, after, query):
    with tempfile.TemporaryDirectory() as tmp:
        check_isolation(Path(tmp) / "iso.db", a_docs, before, after, query)


def test_other_scopes_writes_never_change_a_scopes_ranking_postgres(pg_server):
    # The server is a session fixture; each example gets its own fresh schema.
    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(a_docs=st.lists(doc, min_size=1, max_size=12), before=st.lists(op, max_size=3),
           after=st.lists(op, min_size=1, max_size=4), query=text)
    def prop(a_docs, before, after, query):
        check_isolation(pg_server.create_schema(), a_docs, before, after, query)

    prop()


def test_three_hundred_banana_notes_elsewhere_leave_a_scopes_keyword_ranking_alone(tmp_path):
    # The issue's own example, fixed: writing many notes of one word into scope B.
    mem = Memory(tmp_path / "banana.db", embedder=HashEmbedder(), gate=GateConfig(profile="none"))
    try:
        add_docs(mem, [("banana bread recipe", "red"), ("apple pie with banana", "red"),
                       ("trip to paris", "blue"), ("banana trip", "blue")], SCOPE_A)
        then = now_iso()
        first = ranking(mem, "banana trip", then)
        mem.add([f"banana note {i}" for i in range(300)], user_id="b")
        second = ranking(mem, "banana trip", then)
    finally:
        mem.close()
    assert len(first[("keyword", "plain")]) == 4
    assert second == first
