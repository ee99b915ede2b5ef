"""The reads the keyword index, the freshness step and the gate's information term need, on both stores:
texts beside the vectors, version links of many memories at once, embeddings by seq, and the
information term kept on every rejection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memsieve import Scope
from memsieve.inputs import now_iso
from memsieve.store import open_store
from memsieve.store.sql_records import SEQ_BATCH

DIM = 8


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    return str(tmp_path / "r.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture()
def store(target):
    s = open_store(target)
    yield s
    s.close()


def _select_one(target: str, sql: str, params: tuple) -> object:
    """One value read over a connection of the test's own, not the store's."""
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target) as conn:
            return conn.execute(sql, params).fetchone()[0]
    import sqlite3

    conn = sqlite3.connect(target)
    try:
        return conn.execute(sql.replace("%s", "?"), params).fetchone()[0]
    finally:
        conn.close()


def _insert(store, scope: Scope, texts: list[str], *, revision: int = 1) -> list[tuple[int, str]]:
    now = now_iso()
    with store.transaction(scope) as tx:
        tx.ensure_scope_row(scope, now=now)
        rows = [tx.insert_memory(scope, text=t, text_hash=f"h{i}-{t}", embedding=_vec(i + 10 * len(t)), share=0.5,
                                 metadata={}, sources=[], valid_from=None, now=now) for i, t in enumerate(texts)]
        tx.mark_changed(scope, [s for s, _ in rows], revision)
        tx.save_scope(scope, revision=revision, dim=DIM, gate_state=b"", sage_tau=None)
    return rows


# ---- texts beside the vectors ------------------------------------------------


def test_scope_vectors_carry_each_active_memory_text_in_seq_order(store):
    ana, bo = Scope.of("ana"), Scope.of("bo")
    rows = _insert(store, ana, ["I live in Lisbon", "Ring me at 555-0202", "Café ☕ at 7:40"])
    _insert(store, bo, ["Bo's own note"])
    with store.transaction(ana) as tx:
        tx.soft_delete(rows[1][0], now=now_iso(), valid_to=None)
    got = store.scope_vectors(ana, DIM)
    assert got.seqs.tolist() == [rows[0][0], rows[2][0]]
    assert got.texts == ["I live in Lisbon", "Café ☕ at 7:40"]
    assert got.ids == [rows[0][1], rows[2][1]]
    np.testing.assert_allclose(got.matrix[1], store.memory_row(rows[2][1]).embedding)
    empty = store.scope_vectors(Scope.of("nobody"), DIM)
    assert empty.texts == [] and empty.seqs.shape == (0,) and empty.matrix.shape == (0, DIM)


def test_changes_since_carry_the_current_text_and_an_empty_one_for_a_removed_row(store):
    ana = Scope.of("ana")
    rows = _insert(store, ana, ["I live in Lisbon", "I drive a blue Golf"], revision=1)
    now = now_iso()
    with store.transaction(ana) as tx:
        tx.update_memory_text(rows[0][0], text="I live in Porto", text_hash="p", embedding=_vec(99), now=now)
        tx.soft_delete(rows[1][0], now=now, valid_to=None)
        tx.mark_changed(ana, [rows[0][0], rows[1][0]], 2)
    changed = store.changes_since(ana, 1, DIM)
    assert changed.seqs.tolist() == [rows[0][0], rows[1][0]]
    assert changed.active.tolist() == [True, False]
    assert changed.texts == ["I live in Porto", ""]
    np.testing.assert_allclose(changed.matrix[0], _vec(99), atol=1e-6)
    assert not changed.matrix[1].any()  # a removed row's vector is never read
    assert store.changes_since(ana, 2, DIM).texts == []
    assert store.changes_since(ana, 0, DIM).texts == ["I live in Porto", ""]


def test_memories_stamped_at_insert_are_changed_in_that_revision_and_no_other(store, target):
    ana, bo = Scope.of("ana"), Scope.of("bo")
    old = _insert(store, ana, ["I live in Lisbon"], revision=1)
    now = now_iso()
    with store.transaction(ana) as tx:
        tx.ensure_scope_row(bo, now=now)
        tx.stamp_inserts(ana, 2)
        new_seq, _ = tx.insert_memory(ana, text="I drive a blue Golf", text_hash="g", embedding=_vec(5), share=0.5,
                                      metadata={}, sources=[], valid_from=None, now=now)
        # Another scope's insert in the same transaction is not stamped with ana's revision.
        bo_seq, _ = tx.insert_memory(bo, text="Bo's note", text_hash="b", embedding=_vec(6), share=0.5,
                                     metadata={}, sources=[], valid_from=None, now=now)
        tx.soft_delete(old[0][0], now=now, valid_to=None)
        tx.mark_changed(ana, [old[0][0], new_seq], 2)
    assert store.changes_since(ana, 1, DIM).seqs.tolist() == [old[0][0], new_seq]
    assert _select_one(target, "SELECT changed_rev FROM memories WHERE seq = %s", (new_seq,)) == 2
    assert _select_one(target, "SELECT changed_rev FROM memories WHERE seq = %s", (bo_seq,)) == 0
    # The stamp ends with its transaction: a later insert without one is written unstamped.
    with store.transaction(ana) as tx:
        later, _ = tx.insert_memory(ana, text="I moved to Porto", text_hash="p", embedding=_vec(7), share=0.5,
                                    metadata={}, sources=[], valid_from=None, now=now)
    assert _select_one(target, "SELECT changed_rev FROM memories WHERE seq = %s", (later,)) == 0


def test_a_memory_added_through_the_gate_is_seen_by_another_connection(target, embedder):
    from memsieve import Memory

    with Memory(target, embedder=embedder) as a, Memory(target, embedder=embedder) as b:
        a.add("I keep bees on the roof.", user_id="ana")
        assert [m.text for m in b.search("bees", user_id="ana")] == ["I keep bees on the roof."]
        a.add("My sister Lena plays the cello in an orchestra.", user_id="ana")
        (hit,) = b.search("which instrument does Lena play", user_id="ana", limit=1)
        assert hit.text == "My sister Lena plays the cello in an orchestra."


# ---- version links -----------------------------------------------------------


def _link_all(store, scope: Scope, pairs: list[tuple[str, str, str]]) -> None:
    with store.transaction(scope) as tx:
        for a, b, kind in pairs:
            tx.add_link(a, b, kind=kind, cosine=0.8, now=now_iso())


def test_version_links_find_links_from_either_end_of_the_wanted_kinds_only(store):
    ana = Scope.of("ana")
    (a, ia), (b, ib), (c, ic), (d, id_) = _insert(store, ana, ["gym FitLife", "gym Bloco", "car Golf", "car Tesla"])
    _link_all(store, ana, [(ib, ia, "updates"), (id_, ic, "supersedes"), (ic, ia, "near")])
    assert store.version_links([ia]) == [(ib, ia, "updates")]  # found from its linked end; "near" is not wanted
    assert store.version_links([ib, ic]) == sorted([(ib, ia, "updates"), (id_, ic, "supersedes")])
    assert store.version_links([ia, ic], kinds=("near",)) == [(ic, ia, "near")]
    assert store.version_links([ia, ib, ic, id_], kinds=("updates", "near")) == sorted(
        [(ib, ia, "updates"), (ic, ia, "near")])
    assert store.version_links([]) == [] and store.version_links([ia], kinds=()) == []
    assert store.version_links(["no-such-id"]) == []


def test_version_links_take_more_ids_than_one_statement_can_bind_and_list_each_link_once(store):
    ana = Scope.of("ana")
    (_, ia), (_, ib) = _insert(store, ana, ["gym FitLife", "gym Bloco"])
    _link_all(store, ana, [(ib, ia, "updates")])
    # The two ends fall in different batches, and the ids repeat.
    many = [ia] + [f"missing-{i}" for i in range(3 * SEQ_BATCH)] + [ib, ia, ib]
    assert store.version_links(many) == [(ib, ia, "updates")]


# ---- embeddings by seq -------------------------------------------------------


def test_embeddings_for_seqs_are_float32_copies_of_the_current_vectors(store):
    ana = Scope.of("ana")
    rows = _insert(store, ana, ["I live in Lisbon", "I drive a blue Golf"])
    with store.transaction(ana) as tx:
        tx.update_memory_text(rows[1][0], text="I drive a Tesla", text_hash="t", embedding=_vec(7), now=now_iso())
    seqs = [rows[0][0], rows[1][0]]
    got = store.embeddings_for_seqs(seqs + [seqs[0] + 10_000] + list(range(10**6, 10**6 + 2 * SEQ_BATCH)))
    assert sorted(got) == seqs
    for seq, v in got.items():
        assert v.dtype == np.float32 and v.shape == (DIM,) and v.flags.writeable
    np.testing.assert_allclose(got[seqs[1]], _vec(7), atol=1e-6)
    np.testing.assert_allclose(got[seqs[0]], store.memory_row(rows[0][1]).embedding)
    assert store.embeddings_for_seqs([]) == {}


# ---- the gate's information term ---------------------------------------------


@pytest.mark.parametrize("information", [0.0, 0.375, 1.0, math.nan])
def test_a_rejection_keeps_its_information_term_and_nan_is_stored_as_null(store, target, information):
    ana = Scope.of("ana")
    with store.transaction(ana) as tx:
        tx.ensure_scope_row(ana, now=now_iso())
        rid = tx.add_rejection(ana, text="My brother is a pilot, he flies for TAP.", sources=[], metadata={},
                               layer="novelty", novelty=0.17, tau=0.31, delta=0.05, kappa=20.0, nearest_id=None,
                               nearest_cos=0.9, reason="r", valid_from=None, now=now_iso(), information=information)
        plain = tx.add_rejection(ana, text="no term", sources=[], metadata={}, layer="exact", novelty=0.0, tau=0.3,
                                 delta=0.05, kappa=20.0, nearest_id=None, nearest_cos=1.0, reason="r",
                                 valid_from=None, now=now_iso())
    record, _, _ = store.rejection(rid)
    listed = {r.id: r for r in store.rejections(ana, since=None, layer=None, limit=None)}
    for got in (record.information, listed[rid].information):
        assert (math.isnan(got) if math.isnan(information) else got == information)
    assert math.isnan(listed[plain].information)
    stored = _select_one(target, "SELECT information FROM rejections WHERE id = %s", (rid,))
    assert (stored is None) == math.isnan(information)


def _run(target: str, sql: str, params: tuple) -> None:
    """One statement over a connection of the test's own, committed."""
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute(sql, params)
        return
    import sqlite3

    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.execute(sql.replace("%s", "?"), params)
    finally:
        conn.close()


def test_a_rejection_written_before_the_information_column_reads_back_as_nan(target, monkeypatch):
    from memsieve.store import migrations, pg_migrations
    from memsieve.store.postgres import PostgresStore  # noqa: F401 - imported before the patch, with every step

    module = pg_migrations if target.startswith("postgresql://") else migrations
    full = list(module.MIGRATIONS)
    monkeypatch.setattr(module, "MIGRATIONS", full[:4])
    open_store(target).close()
    _run(target, "INSERT INTO rejections(id, scope_key, text, layer, novelty, reason, created_at)"
                 " VALUES (%s, %s, %s, %s, %s, %s, %s)", ("r-old", Scope.of("ana").key, "old", "novelty", 0.1, "r", "t"))
    monkeypatch.setattr(module, "MIGRATIONS", full)
    store = open_store(target)
    try:
        old, _, _ = store.rejection("r-old")
        assert (old.text, old.novelty) == ("old", 0.1) and math.isnan(old.information)
        assert store.integrity_ok()
    finally:
        store.close()
