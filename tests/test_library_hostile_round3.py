"""The library against a hostile caller, third review: a dry-run consolidation beside writes on other
threads, calls on a closed Memory, a second purge, options refused when the Memory is built rather than
at the first write, progress callbacks that cannot be called, and ids or sources of invisible characters."""

from __future__ import annotations

import threading

import pytest

from memsieve import (CallbackError, ClosedError, ConfigError, GateConfig, InvalidInputError, InvalidTextError,
                      Memory, ScopeError)


def test_a_dry_run_consolidation_beside_writes_breaks_none_of_them(tmp_path, embedder):
    m = Memory(tmp_path / "m.db", embedder=embedder)
    m.add_many([f"Fact {i}: my friend Person{i} likes thing{i} and thing{i + 1}." for i in range(120)],
               user_id="ana")
    stop, errors = threading.Event(), []

    def dry_runs() -> None:
        while not stop.is_set():
            try:
                m.consolidate(user_id="ana", dry_run=True, min_sim=0.5)
            except Exception as exc:  # noqa: BLE001 - any failure is what the test looks for
                errors.append(exc)
                return

    t = threading.Thread(target=dry_runs)
    t.start()
    try:
        for i in range(60):
            m.add(f"Brand new fact {i}: Zq{i} bought a kayak.", user_id="ana")
            if i % 10 == 0:
                m.purge(m.get_all(user_id="ana")[-1].id)
    finally:
        stop.set()
        t.join()
        m.close()
    assert errors == []


def test_every_call_on_a_closed_memory_says_it_is_closed(tmp_path, table_embedder):
    m = Memory(tmp_path / "m.db", embedder=table_embedder)
    m.close()
    for call in (lambda: m.get(5), lambda: m.get("x"), lambda: m.scope(user_id="bob"), m.__enter__):
        with pytest.raises(ClosedError):
            call()


def test_a_second_purge_records_and_erases_nothing(tmp_path, table_embedder):
    with Memory(tmp_path / "m.db", embedder=table_embedder) as m:
        (a,) = m.add("I'm allergic to peanuts.", user_id="ana")
        first = m.purge(a.memory_id)
        again = m.purge(a.memory_id)
        assert first.memory_ids == (a.memory_id,) and again.memory_ids == ()
        assert [h.event for h in m.history(a.memory_id)] == ["ADD", "PURGE"]
        assert m.stats(user_id="ana")["events"] == {"ADD": 1, "DELETE": 1}


@pytest.mark.parametrize("gate, message", [
    (dict(k=10**30), "k must be an integer >= 1 (and below 2^63)"),
    (dict(info_k=2**63), "info_k must be an integer >= 1 (and below 2^63)"),
    (dict(kappa_c=0), "kappa_c must be > 0"),
    (dict(gamma=0.0), "gamma must be > 0"),
])
def test_a_gate_setting_the_threshold_cannot_take_is_refused_up_front(gate, message):
    with pytest.raises(ConfigError, match=message.replace("^", r"\^").replace("(", r"\(").replace(")", r"\)")):
        GateConfig(**gate)


def test_a_bad_llm_is_refused_when_the_memory_is_built(tmp_path, table_embedder):
    with pytest.raises(ConfigError, match="llm must be an LLMConfig or a client"):
        Memory(tmp_path / "m.db", embedder=table_embedder, llm=5)


def test_a_progress_callback_is_checked_and_its_failure_is_typed(tmp_path, table_embedder):
    texts = ["a fact about kites", "a fact about boats", "a fact about trains"]
    with Memory(tmp_path / "m.db", embedder=table_embedder) as m:
        with pytest.raises(ConfigError, match="progress must take a count"):
            m.add_many(texts, user_id="ana", batch_size=1, progress=lambda: None)
        assert m.get_all(user_id="ana") == []  # refused before any chunk
        with pytest.raises(CallbackError, match="ZeroDivisionError.*chunks before this call are committed"):
            m.add_many(texts, user_id="ana", batch_size=1, progress=lambda n: 1 / 0)
        assert [x.text for x in m.get_all(user_id="ana")] == texts[:1]  # as the message says
        with pytest.raises(ConfigError, match=r"progress must take \(clusters done, clusters\)"):
            m.consolidate(user_id="ana", progress=lambda n: None)


def test_invisible_ids_sources_and_roles_are_refused_and_edges_are_trimmed(tmp_path, table_embedder):
    with Memory(tmp_path / "m.db", embedder=table_embedder) as m:
        for uid in ("\u200b", "\u202e\u2066", "a\u202eb"):
            with pytest.raises(ScopeError):
                m.add("a fact", user_id=uid)
        (d,) = m.add("a fact about kites", user_id="ana\u200b")
        assert m.get(d.memory_id, user_id="ana").user_id == "ana"  # one scope, not a look-alike
        with pytest.raises(InvalidInputError, match="source 1 .* is blank"):
            m.add("another fact", user_id="ana", source=["turn:1", "\u200b"])
        with pytest.raises(InvalidInputError, match="item 1 source 0"):
            m.add_many(["ok", {"content": "c", "source": ""}], user_id="ana")
        with pytest.raises(InvalidTextError, match="item 1 role is blank"):
            m.add_many(["ok", {"content": "c", "role": " "}], user_id="ana")
        with pytest.raises(InvalidTextError, match="item 1 content is null"):
            m.add_many(["ok", {"content": None}], user_id="ana")
        assert [x.text for x in m.get_all(user_id="ana")] == ["a fact about kites"]
