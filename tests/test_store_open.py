"""Opening a store: racing openers, files that are not databases, folders that do not exist, limits.

The race runs real processes (fork), because the defect was between processes:
each opener read the schema version before it held the write lock.
"""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from memsieve import Memory, Scope
from memsieve.errors import StoreError

PROCS = 4
TRIALS = 10


def _open_many(target_paths: list[str], barrier, results) -> None:
    """One racing process: for each trial, wait for the others, then open the same new store."""
    from memsieve.store import open_store

    for path in target_paths:
        barrier.wait(30)
        try:
            store = open_store(path)
            store.close()
            results.put(("ok", path, ""))
        except BaseException as exc:  # reported by the parent
            results.put(("error", path, f"{type(exc).__module__}.{type(exc).__name__}: {exc}"))


def _race(paths: list[str]) -> list[tuple[str, str, str]]:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(PROCS)
    results = ctx.Queue()
    procs = [ctx.Process(target=_open_many, args=(paths, barrier, results)) for _ in range(PROCS)]
    for p in procs:
        p.start()
    out = [results.get(timeout=120) for _ in range(PROCS * len(paths))]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return out


def test_processes_opening_one_new_sqlite_file_at_once_all_succeed(tmp_path):
    from memsieve.store.migrations import MIGRATIONS

    paths = [str(tmp_path / f"race{i}.db") for i in range(TRIALS)]
    out = _race(paths)
    errors = [r for r in out if r[0] != "ok"]
    assert errors == [] and len(out) == PROCS * TRIALS
    for path in paths:
        con = sqlite3.connect(path)
        assert con.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"scopes", "memories", "memory_versions", "history", "rejections", "links", "counters",
                "faults"} <= tables
        assert not any(t.startswith("memories_fts") for t in tables)  # migration 6 dropped full text
        columns = [r[1] for r in con.execute("PRAGMA table_info(memories)")]
        assert columns.count("changed_rev") == 1
        con.close()


def test_processes_opening_one_new_postgres_database_at_once_all_succeed(pg_server):
    from memsieve.store.pg_migrations import MIGRATIONS

    urls = [pg_server.create_database() for _ in range(TRIALS)]
    out = _race(urls)
    errors = [r for r in out if r[0] != "ok"]
    assert errors == [] and len(out) == PROCS * TRIALS
    import psycopg

    for url in urls:
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT version FROM schema_version").fetchall() == [(len(MIGRATIONS),)]
            tables = {r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
            assert {"scopes", "memories", "memory_versions", "history", "rejections"} <= tables


def test_an_interrupted_migration_is_finished_by_the_next_opener(tmp_path):
    from memsieve.store.migrations import MIGRATIONS, migrate

    path = str(tmp_path / "half.db")
    con = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0].statements:
        con.execute(statement)
    con.execute("PRAGMA user_version = 1")
    assert migrate(con) == len(MIGRATIONS)
    assert migrate(con) == len(MIGRATIONS)  # a second run finds nothing to do
    con.close()


# ---- files that are not memsieve databases ----------------------------------


def _filled(path: str) -> None:
    from conftest import TableEmbedder

    m = Memory(path, embedder=TableEmbedder())
    m.add([f"fact number {i} " * 20 for i in range(200)], user_id="u")
    m.close()


def _garbled(data: bytes) -> bytes:
    half = len(data) // 2
    return data[:half] + bytes((b * 37 + 11) % 256 for b in data[half:half + len(data) // 4]) + data[3 * len(data) // 4:]


@pytest.mark.parametrize("damage", ["not_a_database", "truncated", "header_garbled", "body_garbled"])
def test_a_damaged_or_foreign_file_is_a_store_error_naming_it(tmp_path, damage):
    from conftest import TableEmbedder

    path = str(tmp_path / "x.db")
    if damage == "not_a_database":
        data = b"these are my notes, not a database\n" * 200
    else:
        _filled(path)
        data = open(path, "rb").read()
        data = {"truncated": lambda b: b[: len(b) // 2],
                "header_garbled": lambda b: bytes(reversed(b[:100])) + b[100:],
                "body_garbled": _garbled}[damage](data)
    with open(path, "wb") as f:
        f.write(data)
    try:
        m = Memory(path, embedder=TableEmbedder())
    except StoreError as exc:
        message = str(exc)
    else:
        # A file whose first pages are intact opens; the damage shows at the first read of it.
        with pytest.raises(StoreError) as info:  # StoreError is a MemsieveError
            m.get_all(user_id="u")
            m.search("fact number", user_id="u")
            m.add("a new fact", user_id="u")
        message = str(info.value)
        m.close()
    assert message.startswith("the file ") and repr(path) in message
    assert "not a memsieve database or is damaged" in message and "restore" in message


def test_a_path_in_a_missing_folder_is_refused_and_nothing_is_created(tmp_path):
    path = tmp_path / "no" / "such" / "folder" / "mem.db"
    with pytest.raises(StoreError, match=r"^folder .*no/such/folder' of the database .* does not exist; create it first"):
        Memory(path)
    assert not (tmp_path / "no").exists()


def test_a_folder_given_as_the_database_is_refused(tmp_path):
    with pytest.raises(StoreError, match=r"is a folder, not a database file"):
        Memory(tmp_path)


# ---- limits ----------------------------------------------------------------


@pytest.mark.parametrize("limit", [10**30, 2**63, 2**63 - 1, 0])
def test_huge_limits_are_clamped_not_overflowed(mem, limit):
    mem.add(["I live in Lisbon.", "My sister is Marta."], user_id="ana")
    mem.add("I live in Lisbon.", user_id="ana")  # a NOOP, so there is a rejection
    scope = Scope.of("ana")
    expect = 0 if limit == 0 else None
    items = mem.store.get_all(scope, include_inactive=True, limit=limit)
    rejections = mem.store.rejections(scope, since=None, layer=None, limit=limit)
    assert len(items) == (expect if expect is not None else 2)
    assert len(rejections) == (expect if expect is not None else 1)


def test_a_damaged_file_reports_integrity_false_not_a_raw_error(tmp_path):
    from memsieve.store.sqlite import SQLiteStore

    path = str(tmp_path / "x.db")
    _filled(path)
    store = SQLiteStore(path)
    assert store.integrity_ok()
    store.close()
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(_garbled(data))
    try:
        store = SQLiteStore(path)
    except StoreError:
        return  # refused at open: as good
    assert store.integrity_ok() is False
    store.close()


# ---- upgrading a database written by an older schema -------------------------


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_version_3_database_keeps_its_shares_through_the_column_rename(kind, tmp_path, request, monkeypatch):
    import numpy as np

    from memsieve.store import migrations, pg_migrations
    from memsieve.store.postgres import PostgresStore
    from memsieve.store.sqlite import SQLiteStore

    module, opener = (migrations, SQLiteStore) if kind == "sqlite" else (pg_migrations, PostgresStore)
    target = str(tmp_path / "v3.db") if kind == "sqlite" else request.getfixturevalue("pg_url")
    full = list(module.MIGRATIONS)
    monkeypatch.setattr(module, "MIGRATIONS", full[:3])
    old = opener(target)
    scope = Scope.of("u")
    vec = np.ones(4, dtype=np.float32) / 2
    with old.transaction(scope):
        old._q("INSERT INTO scopes(scope_key, user_id, created_at) VALUES (%s, %s, %s)", (scope.key, "u", "t"))
        old._q("INSERT INTO memories(id, scope_key, text, text_hash, embedding, nn_cos, created_at)"
               " VALUES (%s, %s, %s, %s, %s, %s, %s)", ("m1", scope.key, "kept", "h", old._vector_param(vec), 0.25, "t"))
    old.close()
    monkeypatch.setattr(module, "MIGRATIONS", full)
    new = opener(target)
    row = new.memory_row("m1")
    assert (row.text, row.share, row.is_active) == ("kept", 0.25, True)
    np.testing.assert_array_equal(row.embedding, vec)
    assert new.scope_vectors(scope, 4).shares.tolist() == [0.25]
    new.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_version_5_database_loses_its_full_text_copy_and_keeps_its_memories(kind, tmp_path, request,
                                                                                monkeypatch):
    import numpy as np

    from memsieve.store import migrations, open_store, pg_migrations
    from memsieve.store.postgres import PostgresStore  # noqa: F401 - imported before the patch, with every step

    module = migrations if kind == "sqlite" else pg_migrations
    target = str(tmp_path / "v5.db") if kind == "sqlite" else request.getfixturevalue("pg_url")
    full = list(module.MIGRATIONS)
    monkeypatch.setattr(module, "MIGRATIONS", full[:5])
    scope = Scope.of("u")
    old = open_store(target)
    with old.transaction(scope) as tx:
        tx.ensure_scope_row(scope, now="t")
        tx.insert_memory(scope, text="kept as a memory", text_hash="h", embedding=np.ones(4, np.float32) / 2,
                         share=0.5, metadata={}, sources=[], valid_from=None, now="t")
    old.close()
    if kind == "sqlite":
        con = sqlite3.connect(target, isolation_level=None)
        con.execute("INSERT INTO memories_fts(rowid, text) VALUES (1, 'quince-marmalade-5150 only in full text')")
        con.close()
        assert b"quince-marmalade" in _file_bytes(tmp_path, "v5.db")
    monkeypatch.setattr(module, "MIGRATIONS", full)
    new = open_store(target)
    assert new.scope_vectors(scope, 4).texts == ["kept as a memory"]
    assert new.integrity_ok()
    if kind == "sqlite":
        assert new.checkpoint() is True
        new.close()
        con = sqlite3.connect(target)
        assert [r for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'memories_fts%'")] == []
        con.close()
        data = _file_bytes(tmp_path, "v5.db")
        assert b"quince-marmalade" not in data and b"kept as a memory" in data  # dropped pages are zeroed
    else:
        import psycopg

        with psycopg.connect(target) as conn:
            columns = {r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = 'memories'")}
            indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")}
        assert "fts" not in columns and "text" in columns and "memories_fts" not in indexes
        new.close()


def _file_bytes(folder, name: str) -> bytes:
    """A SQLite file with its WAL and shared-memory files."""
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.name.startswith(name) and p.is_file())
