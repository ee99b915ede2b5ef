"""Erasure that erases (issue 19): inactive memories can be purged, by id and by description; merges at any
depth are reached; and the bytes of the text and its embedding are checked in the files themselves, with the
result saying honestly when they are still pending (an SQLite reader, PostgreSQL's dead tuples)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError, NotFoundError, StoreError

SECRET = "bank account 4402-8812-XQ"
NEEDLES = (b"4402-8812", b"8812-xq")
KEPT = "My neighbour Oskar grows tomatoes."


def _files(folder: Path, prefix: str) -> bytes:
    """Every file (the .db, -wal, -shm, and the .hnsw folder's index files) whose name starts with prefix."""
    parts = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and (p.name.startswith(prefix) or p.parent.name.startswith(prefix)):
            parts.append(p.read_bytes())
    return b"".join(parts)


def _row_bytes(vec: np.ndarray) -> bytes:
    """A distinctive run of the embedding as stored (little-endian float32): 16 coordinates."""
    return np.ascontiguousarray(vec, dtype="<f4").tobytes()[64:128]


def _holds_text(data: bytes) -> bool:
    return any(n in data.lower() for n in NEEDLES)


# ---- what a purge reaches (both stores) ---------------------------------------


def test_a_soft_deleted_memory_is_named_by_a_purge_and_a_dry_run_lists_exactly_that(mem):
    secret = mem.add(SECRET, user_id="A")[0].memory_id
    kept = mem.add(KEPT, user_id="A")[0].memory_id
    twin = mem.add(SECRET, user_id="B")[0].memory_id
    mem.delete(secret)
    listed = mem.forget(f"forget {SECRET}", user_id="A", purge=True, dry_run=True)
    assert [it.id for it in listed] == [secret] and listed[0].text == SECRET  # as it is now
    assert mem.forget(f"forget {SECRET}", user_id="A", dry_run=True) == []  # a soft forget names active ones only
    removed = mem.forget(f"forget {SECRET}", user_id="A", purge=True)
    assert [(it.id, it.text) for it in removed] == [(secret, "")]
    assert [e.event for e in mem.history(secret)] == ["ADD", "DELETE", "PURGE"]
    assert all(e.old_text is None and e.new_text is None for e in mem.history(secret))
    assert mem.get(kept).text == KEPT and mem.get(twin).text == SECRET  # another memory, another scope
    assert mem.stats(user_id="A")["events"].get("PURGE") == 1  # not a second DELETE


def test_purge_by_id_erases_an_inactive_memory_and_is_scope_checked_like_get(mem):
    secret = mem.add(SECRET, user_id="A")[0].memory_id
    mem.delete(secret)
    with pytest.raises(NotFoundError) as other:
        mem.purge(secret, user_id="B")
    with pytest.raises(NotFoundError) as unknown:
        mem.get("00000000-0000-0000-0000-000000000000", user_id="B")
    assert str(other.value).replace(secret, "ID") == str(unknown.value).replace(
        "00000000-0000-0000-0000-000000000000", "ID")
    assert mem.get(secret).text == SECRET  # refused: nothing erased
    done = mem.purge(secret, user_id="A", reason="the user asked")
    assert done.memory_ids == (secret,)
    assert mem.get(secret).text == "" and mem.history(secret)[-1].reason == "the user asked"
    assert mem.store.memory_row(secret).embedding.size == 0
    if mem.store.path.startswith("postgresql"):
        assert done.pending and "compact()" in done.why
    else:
        assert (done.pending, done.why) == (False, None)


def test_a_purge_reaches_members_retired_any_number_of_merges_back(tmp_path, embedder):
    m = Memory(tmp_path / "deep.db", embedder=embedder, gate=GateConfig(profile="none"))
    m.add("My safe's combination is 31-07-58, behind the painting.", user_id="u", valid_from="2024-01-01")
    m.add("My safe's combination is 31-07-58, it is behind the painting.", user_id="u", valid_from="2024-02-01")
    m.add(KEPT, user_id="u", valid_from="2024-01-05")
    assert m.consolidate(user_id="u").merges
    m.add("The combination of my safe is 31-07-58, behind the painting.", user_id="u", valid_from="2024-03-01")
    assert m.consolidate(user_id="u").merges
    merges = m.merges(user_id="u")
    assert len(merges) == 2 and merges[0].kept_id in merges[1].member_ids  # the first kept one was retired too
    first_member = next(i for i in merges[0].member_ids if i != merges[0].kept_id)
    root = merges[1].kept_id
    assert [it.id for it in m.get_all(user_id="u")].count(root) == 1

    # The middle one, by id: it and what was retired into it; not the memory it was retired into.
    middle = m.purge(merges[0].kept_id)
    assert set(middle.memory_ids) == {merges[0].kept_id, first_member}
    assert "31-07-58" in m.get(root).text

    all_ids = {first_member, *merges[0].member_ids, *merges[1].member_ids}
    done = m.purge(root)
    assert done.memory_ids[0] == root and set(done.memory_ids) == all_ids - {merges[0].kept_id, first_member}
    for i in all_ids:
        assert m.get(i).text == "" and not m.get(i).is_active
        assert all("31-07-58" not in (e.old_text or "") + (e.new_text or "") for e in m.history(i))
    m.close()
    raw = _files(tmp_path, "deep.db")
    assert b"31-07-58" not in raw and b"painting" not in raw and b"Oskar" in raw


def test_forget_with_purge_reaches_a_member_two_merges_back(tmp_path, embedder):
    m = Memory(tmp_path / "f.db", embedder=embedder, gate=GateConfig(profile="none"))
    m.add("My safe's combination is 31-07-58, behind the painting.", user_id="u", valid_from="2024-01-01")
    m.add("My safe's combination is 31-07-58, it is behind the painting.", user_id="u", valid_from="2024-02-01")
    m.consolidate(user_id="u")
    m.add("The combination of my safe is 31-07-58, behind the painting.", user_id="u", valid_from="2024-03-01")
    m.consolidate(user_id="u")
    ids = {i for merge in m.merges(user_id="u") for i in merge.member_ids}
    assert len(ids) == 3
    listed = m.forget("please forget my safe's combination", user_id="u", purge=True, dry_run=True)
    removed = m.forget("please forget my safe's combination", user_id="u", purge=True)
    assert {it.id for it in listed} == {it.id for it in removed} == ids
    m.close()
    assert b"31-07-58" not in _files(tmp_path, "f.db")


def test_finish_erasure_takes_only_seconds(tmp_path, embedder):
    with Memory(tmp_path / "w.db", embedder=embedder) as m:
        with pytest.raises(ConfigError, match=r"^wait must be a number of seconds >= 0, got int -1"):
            m.finish_erasure(wait=-1)
        assert m.finish_erasure().to_dict() == {"memory_ids": [], "pending": False, "why": None}


# ---- SQLite: the bytes --------------------------------------------------------


def _secret_db(tmp_path: Path, embedder, **options):
    db = tmp_path / "s.db"
    m = Memory(db, embedder=embedder, **options)
    secret = m.add(SECRET, user_id="A")[0].memory_id
    m.add(KEPT, user_id="A")
    vec = m.store.memory_row(secret).embedding.copy()
    return db, m, secret, _row_bytes(vec)


def test_sqlite_a_soft_deleted_memory_purged_leaves_no_byte_of_text_or_embedding(tmp_path, embedder):
    db, m, secret, row = _secret_db(tmp_path, embedder)
    m.delete(secret)
    before = _files(tmp_path, "s.db")
    assert _holds_text(before) and row in before  # the check can see both
    m.forget(f"forget {SECRET}", user_id="A", purge=True)
    after = _files(tmp_path, "s.db")
    assert not _holds_text(after) and row not in after
    assert b"Oskar" in after
    m.close()
    after = _files(tmp_path, "s.db")
    assert not _holds_text(after) and row not in after


def test_sqlite_a_reader_keeps_the_erasure_pending_and_the_next_write_finishes_it(tmp_path, embedder):
    db, m, secret, row = _secret_db(tmp_path, embedder)
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 2  # a snapshot before the purge
    done = m.purge(secret)
    assert done.pending and "read transaction" in done.why and "finish_erasure" in done.why
    held = _files(tmp_path, "s.db")
    assert _holds_text(held) or row in held  # honest: the old page is still in the file
    assert m.finish_erasure().pending  # the reader is still there
    reader.execute("COMMIT")
    m.add("My sister Marta plays the cello", user_id="A")  # one more write
    assert m.store.erasure_pending is None
    after = _files(tmp_path, "s.db")
    assert not _holds_text(after) and row not in after
    assert (db.parent / (db.name + "-wal")).stat().st_size == 0 or not (db.parent / (db.name + "-wal")).exists()
    reader.close()
    m.close()


def test_sqlite_finish_erasure_completes_once_the_reader_ends(tmp_path, embedder):
    db, m, secret, row = _secret_db(tmp_path, embedder)
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM memories").fetchone()
    assert m.purge(secret).pending
    reader.execute("COMMIT")
    assert m.finish_erasure().to_dict() == {"memory_ids": [], "pending": False, "why": None}
    after = _files(tmp_path, "s.db")
    assert not _holds_text(after) and row not in after
    reader.close()
    m.close()


def test_sqlite_closing_the_last_connection_finishes_a_pending_erasure(tmp_path, embedder):
    db, m, secret, row = _secret_db(tmp_path, embedder)
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM memories").fetchone()
    assert m.purge(secret).pending
    m.close()  # the reader still holds its snapshot: the bytes stay while it does
    reader.execute("COMMIT")
    reader.close()  # the last connection: SQLite checkpoints and removes the WAL
    after = _files(tmp_path, "s.db")
    assert not _holds_text(after) and row not in after


def test_sqlite_the_saved_hnsw_index_loses_the_purged_embedding_at_once(tmp_path, embedder):
    db, m, secret, row = _secret_db(tmp_path, embedder, index_min_size=1)
    m.close()
    index = next((tmp_path / "s.db.hnsw").glob("*.bin"))
    assert row in index.read_bytes()
    m = Memory(db, embedder=embedder, index_min_size=1)
    m.search("Oskar", user_id="A")  # the scope's index is loaded from the file
    m.purge(secret)
    assert row not in _files(tmp_path, "s.db")  # before close: the file was overwritten and saved anew
    assert [h.text for h in m.search("bank account", user_id="A", mode="dense")] == [KEPT]
    m.close()
    assert row not in _files(tmp_path, "s.db") and not _holds_text(_files(tmp_path, "s.db"))


# ---- PostgreSQL: the bytes ----------------------------------------------------


def _relation_files(pg_url: str, data_dir: Path) -> dict[str, Path]:
    """Every file of the purged tables: heap, TOAST (and its index), and every index."""
    import psycopg

    from memsieve.store.postgres import PURGED_TABLES

    found = {}
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table in PURGED_TABLES:
            oids = conn.execute(
                "SELECT c.oid, c.relname FROM pg_class c WHERE c.oid = %s::regclass"
                " UNION ALL SELECT t.oid, t.relname FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid"
                "   WHERE c.oid = %s::regclass"
                " UNION ALL SELECT i.indexrelid, x.relname FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid"
                "   WHERE i.indrelid = %s::regclass OR i.indrelid = (SELECT reltoastrelid FROM pg_class"
                "   WHERE oid = %s::regclass)", (table,) * 4).fetchall()
            for oid, name in oids:
                (rel,) = conn.execute("SELECT pg_relation_filepath(%s)", (oid,)).fetchone()
                found[f"{table}:{name}"] = data_dir / rel
    return found


def _pg_bytes(pg_url: str, data_dir: Path) -> bytes:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # shared buffers out to the files
    files = _relation_files(pg_url, data_dir)
    assert files and all(p.exists() for p in files.values()), files
    return b"".join(p.read_bytes() for p in files.values())


def test_postgres_a_purge_is_pending_until_compact_then_no_byte_is_in_the_table_files(pg_server, pg_url, embedder):
    data_dir = pg_server.root / "data"
    m = Memory(pg_url, embedder=embedder)
    secret = m.add(SECRET, user_id="A")[0].memory_id
    m.add(KEPT, user_id="A")
    row = _row_bytes(m.store.memory_row(secret).embedding)
    m.delete(secret)
    before = _pg_bytes(pg_url, data_dir)
    assert _holds_text(before) and row in before  # the check reads the right files
    done = m.purge(secret)
    assert done.pending and "VACUUM FULL" in done.why and "compact()" in done.why
    assert m.finish_erasure().pending  # reported, not finished, without compaction
    compacted = m.compact()
    assert (compacted.pending, compacted.why) == (False, None)
    after = _pg_bytes(pg_url, data_dir)
    assert not _holds_text(after) and row not in after
    assert b"Oskar" in after
    assert m.get(secret).text == "" and m.store.integrity_ok()
    m.close()


def test_postgres_compact_says_pending_while_an_older_snapshot_can_see_the_old_rows(pg_server, pg_url, embedder):
    import psycopg

    data_dir = pg_server.root / "data"
    m = Memory(pg_url, embedder=embedder)
    secret = m.add(SECRET, user_id="A")[0].memory_id
    m.add(KEPT, user_id="A")
    with psycopg.connect(pg_url) as old:
        old.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        old.execute("SELECT 1").fetchone()  # a snapshot before the purge, and no lock on memsieve's tables
        assert m.purge(secret).pending
        kept = m.compact()
        assert kept.pending and "session" in kept.why and "compact() again" in kept.why
        assert _holds_text(_pg_bytes(pg_url, data_dir))  # VACUUM FULL kept the row version that snapshot sees
        old.rollback()
    done = m.compact()
    assert not done.pending
    after = _pg_bytes(pg_url, data_dir)
    assert not _holds_text(after)
    m.close()


# ---- the CLI ------------------------------------------------------------------


def test_the_cli_purges_by_id_and_refuses_a_missing_db(tmp_path, embedder, monkeypatch, capsys):
    import json

    from memsieve.cli import main

    db = tmp_path / "c.db"
    m = Memory(db, embedder=embedder)
    secret = m.add(SECRET, user_id="A")[0].memory_id
    m.delete(secret)
    m.close()
    monkeypatch.setattr("memsieve.embedding.default_embedder", lambda: embedder)
    assert main(["purge", secret, "--db", str(tmp_path / "typo.db")]) == 2
    assert "no database at" in capsys.readouterr().err and not (tmp_path / "typo.db").exists()
    assert main(["purge", secret, "--user", "B", "--db", str(db)]) == 2  # another scope: unknown
    assert "no memory" in capsys.readouterr().err
    assert main(["purge", secret, "--user", "A", "--db", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"memory_ids": [secret], "pending": False, "why": None}
    assert not _holds_text(_files(tmp_path, "c.db"))
    assert main(["forget", "forget my bank account", "--user", "A", "--db", str(db), "--purge"]) == 0
    assert "the bytes are gone" in capsys.readouterr().out


# ---- the MCP tool -------------------------------------------------------------


def test_the_mcp_purge_tool_erases_in_its_own_scope_only(tmp_path, embedder):
    import asyncio

    pytest.importorskip("mcp")
    from memsieve import AsyncMemory, Erasure
    from memsieve.integrations.mcp import TOOLS, MemoryTools

    m = Memory(tmp_path / "mcp.db", embedder=embedder)
    mine = m.add(SECRET, user_id="me")[0].memory_id
    theirs = m.add(SECRET, user_id="victim")[0].memory_id
    m.delete(mine)
    tools = MemoryTools(AsyncMemory.wrap(m), user_id="me")
    assert TOOLS["purge_memory"].destructive_hint

    async def run():
        with pytest.raises(NotFoundError):
            await tools.purge_memory(theirs)  # another scope's id answers as unknown
        done = await tools.purge_memory(mine, reason="asked in chat")
        await tools.memory.close()
        return done

    done = asyncio.run(run())
    assert done == {"erasure": Erasure(memory_ids=(mine,), pending=False, why=None).to_dict()}
    with Memory(tmp_path / "mcp.db", embedder=embedder) as again:
        assert again.get(mine).text == "" and again.get(theirs).text == SECRET
