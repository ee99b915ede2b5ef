"""Review findings, second round: the LangGraph store's batches and puts, consolidation against store keys,
edits of a merged-away memory, a cancelled close, --json as JSON Lines, ingest's malformed shapes, and
another program's SQLite file."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from langgraph.store.base import PutOp, SearchOp

from memsieve import AsyncMemory, ClosedError, GateConfig, InvalidInputError, Memory, MergeConflictError, StoreError
from memsieve.cli import main
from memsieve.integrations.langgraph import MemsieveStore, NamespaceError

from conftest import unit


@pytest.fixture()
def store(tmp_path, embedder):
    m = Memory(tmp_path / "lg.db", embedder=embedder)
    yield MemsieveStore(m, fields=["text"])
    m.close()


def _keys(store, ns):
    return sorted(i.key for i in store.search(ns, limit=100))


def test_a_refused_batch_writes_nothing(store):
    ns = ("notes", "ana")
    with pytest.raises(InvalidInputError, match="NUL"):
        store.batch([PutOp(ns, "k1", {"text": "Ana grows basil."}), PutOp(ns, "k\x00", {"text": "Ana bakes."})])
    assert _keys(store, ns) == []
    store.put(ns, "n", {"text": "Ana counts 'many' books.", "n": "many"})
    with pytest.raises(InvalidInputError, match="compares numbers"):
        store.batch([PutOp(ns, "k2", {"text": "Ana rows."}), SearchOp(ns, filter={"n": {"$gt": 1}}),
                     PutOp(ns, "k3", {"text": "Ana runs."})])
    assert _keys(store, ns) == ["n"]


def test_a_refused_put_keeps_what_the_key_held(store):
    ns = ("notes", "ana")
    store.put(ns, "k", {"text": "Ana lives in Lisbon."})
    deep: dict = {"x": 1}
    for _ in range(62):
        deep = {"x": deep}
    with pytest.raises(InvalidInputError, match="nested deeper"):
        store.put(ns, "k", {"text": "Ana moved to Porto.", "deep": deep})
    assert store.get(ns, "k").value == {"text": "Ana lives in Lisbon."}


def test_a_namespace_too_long_for_a_scope_id_is_a_namespace_error(store):
    for ns in (("記憶" * 15,), ("x" * 300,)):
        with pytest.raises(NamespaceError, match="shorter labels"):
            store.put(ns, "k", {"text": "Ana reads."})
        assert store.get(ns, "k") is None  # no put there can succeed: it holds nothing
    assert store.get((), "k") is None


def test_consolidation_never_merges_two_store_keys(store):
    ns = ("trips", "ana")
    store.put(ns, "trip-2023", {"text": "Ana flew to Tokyo in May 2023 for a conference."})
    store.put(ns, "trip-2024", {"text": "Ana flew to Tokyo in May 2024 for a conference."})
    report = store.memory.consolidate(user_id="trips/ana", min_sim=0.5)
    assert report.merges == []
    assert _keys(store, ns) == ["trip-2023", "trip-2024"]


def test_a_merged_away_memory_cannot_be_deleted_or_updated_on_its_own(tmp_path, table_embedder):
    a, b = "My favourite colour is teal.", "My favourite colour is teal!"
    table_embedder.table.update({a: unit(1, 0, 0), b: unit(1, 0.05, 0)})
    m = Memory(tmp_path / "c.db", embedder=table_embedder, gate=GateConfig(profile="none"))
    m.add(a, user_id="ana")
    m.add(b, user_id="ana")
    (merge,) = m.consolidate(user_id="ana", min_sim=0.5).merges
    member = next(i for i in merge.member_ids if i != merge.kept_id)
    with pytest.raises(MergeConflictError, match="undo the merge"):
        m.delete(member, user_id="ana")
    with pytest.raises(MergeConflictError, match="undo the merge"):
        m.update(member, "My favourite colour is red.", user_id="ana")
    assert [h.event for h in m.history(member)][-1] != "DELETE"
    revived = m.unconsolidate(merge.id, user_id="ana")
    assert member in [r.id for r in revived]
    m.delete(member, user_id="ana")  # once active again, it is the user's to delete
    assert not m.get(member).is_active
    m.close()


def test_a_cancelled_close_still_closes_the_memory(tmp_path, table_embedder):
    async def run():
        amem = AsyncMemory(tmp_path / "a.db", embedder=table_embedder)
        await amem.add("Ana lives in Lisbon.", user_id="ana")
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(amem.close(), timeout=1e-6)
        await amem.close()  # waits for the first close to finish
        with pytest.raises(ClosedError):
            amem.memory.stats(user_id="ana")

    asyncio.run(run())


def test_json_output_is_one_line_per_command(tmp_path, capsys, monkeypatch, table_embedder):
    monkeypatch.setattr("memsieve.embedding.default_embedder", lambda: table_embedder)
    db = str(tmp_path / "j.db")
    assert main(["add", "Ana grows basil.", "--user", "a", "--db", db, "--json"]) == 0
    assert main(["consolidate", "--user", "a", "--db", db, "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(isinstance(json.loads(line), (dict, list)) for line in lines)


@pytest.mark.parametrize("conversations", [
    [{"id": "c1", "messages": [{"role": "user", "content": "Ana lives in Lisbon."}]},
     {"id": "c2", "messages": "Ana has a dog named Rex."}],
    [{"id": "c1", "messages": [{"role": "user", "content": "Ana lives in Lisbon."}]},
     {"id": "c3", "sessions": {"date": "2023-01-01", "turns": [{"speaker": "u", "text": "Ana drinks tea."}]}}],
    [{"id": "c1", "messages": [{"role": "user", "content": "Ana lives in Lisbon."}]},
     {"id": "c4", "sessions": [{"date": "2023-01-01", "messages": [{"speaker": "u", "text": "Ana rides."}]}]}],
    [{"id": "c1", "messages": [{"role": "user", "content": "Ana lives in Lisbon."}]}, {"id": "c5", "text": "hi"}],
])
def test_ingest_refuses_a_malformed_conversation_shape_and_stores_nothing(tmp_path, capsys, monkeypatch,
                                                                          table_embedder, conversations):
    monkeypatch.setattr("memsieve.embedding.default_embedder", lambda: table_embedder)
    path = tmp_path / "convs.json"
    path.write_text(json.dumps(conversations))
    db = tmp_path / "i.db"
    assert main(["ingest", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memsieve: error: conversation 2") and err.count("\n") == 1
    if db.exists():
        with Memory(db, embedder=table_embedder) as m:
            assert m.get_all(user_id="c1") == []


@pytest.mark.parametrize("version", [0, 7])
def test_another_programs_sqlite_file_is_refused_and_left_untouched(tmp_path, table_embedder, version):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE contacts (name TEXT)")
        conn.execute("INSERT INTO contacts VALUES ('Ana')")
        conn.execute(f"PRAGMA user_version = {version}")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another program"):
        Memory(path, embedder=table_embedder)
    assert path.read_bytes() == before
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert tables == ["contacts"]
