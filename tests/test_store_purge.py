"""Purging on both stores: the text and embedding leave every table (and, on SQLite, the file's bytes),
a tombstone stays, and nothing of another memory or scope is touched."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from memsieve import GateConfig, Memory, Scope
from memsieve.errors import NotFoundError, StoreError
from memsieve.inputs import now_iso
from memsieve.store.sql_purge import ERASED_REASON

SECRET = "zebra-kumquat-8812"
KEPT = "walrus-tangerine-4471"
ANA = Scope.of("ana")


def _tick() -> str:
    time.sleep(0.002)
    t = now_iso()
    time.sleep(0.002)
    return t


class Built:
    """A scope where the secret is everywhere a memory's text can be: its row, a version, its history,
    an exact-duplicate NOOP, an LLM reason and candidate, a linked memory's history, an LLM fault.

    With ``twin``, another scope holds the same words (a purge in one scope must leave them).
    """

    def __init__(self, mem: Memory, *, twin: bool = True) -> None:
        (p,) = mem.add(f"My locker code is {SECRET}", user_id="ana")
        (q,) = mem.add("My sister Marta plays the cello", user_id="ana")
        (k,) = mem.add(f"Our wifi password is {KEPT}", user_id="ana")
        (bo,) = mem.add(f"My locker code is {SECRET}" if twin else "My locker is blue", user_id="bo")
        assert [d.event for d in (p, q, k, bo)] == ["ADD"] * 4
        (dup,) = mem.add(f"MY LOCKER CODE is   {SECRET}", user_id="ana")
        assert (dup.event, dup.layer, dup.memory_id) == ("NOOP", "exact", p.memory_id)
        (qdup,) = mem.add("my sister marta plays the cello", user_id="ana")
        assert (qdup.event, qdup.memory_id) == ("NOOP", q.memory_id)
        self.visible_at = _tick()
        mem.update(p.memory_id, f"My locker code is {SECRET}, on the second floor")
        self.p, self.q, self.k, self.bo = p.memory_id, q.memory_id, k.memory_id, bo.memory_id
        self.dup, self.qdup = dup.rejection_id, qdup.rejection_id
        self.seq = mem.store.memory_row(self.p).seq
        current = mem.get(self.p).text
        now = now_iso()
        with mem.store.transaction(ANA) as tx:
            tx.add_history(self.p, ANA, event="UPDATE", old_text=current, new_text=current, layer="llm",
                           reason=f"LLM: the code is {SECRET}", now=now,
                           extra={"candidate": f"the code {SECRET}", "sources": ["chat-1"]})
            tx.add_link(self.q, self.p, kind="updates", cosine=0.4, now=now)
            tx.add_history(self.q, ANA, event="UPDATE", old_text="My sister plays", layer="llm", reason="LLM: ok",
                           new_text="My sister Marta plays the cello", now=now,
                           extra={"superseded_by_text": current, "candidate": "unrelated words"})
            tx.add_fault(ANA, kind="bad_json", detail="the reply was not JSON",
                         raw=f'{{"event": "ADD", "text": "{current}"', now=now)
            tx.add_fault(ANA, kind="bad_json", detail="the reply was empty", raw="", now=now)

    def purge(self, mem: Memory, reason: str = "the user asked to forget the locker code") -> None:
        with mem.store.transaction(ANA) as tx:
            tx.purge_memory(self.seq, reason=reason, now=now_iso())


def test_a_purged_memory_leaves_a_tombstone_and_no_text_in_any_record(mem):
    b = Built(mem)
    store = mem.store
    before = store.get(b.p)
    b.purge(mem)

    item = store.get(b.p)
    assert (item.id, item.text, item.is_active, item.metadata) == (b.p, "", False, {})
    assert (item.created_at, item.valid_from) == (before.created_at, before.valid_from)
    assert item.expired_at is not None and item.valid_to == item.expired_at
    row = store.memory_row(b.p)
    assert row.embedding.shape == (0,) and row.text == ""
    assert store.active_by_hash(ANA, "purged") is None

    entries = store.history(b.p)
    assert [e.event for e in entries] == ["ADD", "NOOP", "UPDATE", "UPDATE", "PURGE"]
    assert all(e.old_text is None and e.new_text is None for e in entries)
    assert entries[-1].reason == "the user asked to forget the locker code" and entries[-1].layer == "user"
    assert entries[3].reason == ERASED_REASON and entries[3].extra == {"sources": ["chat-1"]}
    assert entries[1].extra == {"rejection_id": b.dup, "sources": []}  # ids stay, texts go

    dup, _, _ = store.rejection(b.dup)
    assert dup.text == "" and dup.reason == f"purged with memory {b.p}: the user asked to forget the locker code"
    assert dup.nearest_id == b.p and dup.layer == "exact"  # the numbers of the decision stay

    # The linked memory keeps its own texts; only the quote of the purged one goes.
    q_rows = store.history(b.q)
    assert q_rows[-1].extra == {"candidate": "unrelated words"}
    assert q_rows[-1].new_text == "My sister Marta plays the cello"
    assert store.get(b.q).text == "My sister Marta plays the cello"
    qdup, _, _ = store.rejection(b.qdup)
    assert qdup.text == "my sister marta plays the cello"

    faults = store.faults(ANA)
    assert [(f["detail"], f["raw"]) for f in faults] == [(ERASED_REASON, None), ("the reply was empty", "")]

    # Out of every read of texts and vectors, at any time.
    assert b.seq not in store.scope_vectors(ANA, 384).seqs.tolist()
    assert store.candidates(ANA, as_of=b.visible_at).texts == ["My sister Marta plays the cello",
                                                                f"Our wifi password is {KEPT}"]
    assert store.items_at([b.seq], b.visible_at) == {}
    assert store.embeddings_for_seqs([b.seq]) == {}
    assert store.links(b.p) == [(b.q, "updates", 0.4)]  # ids only: the link stays

    # Another scope's memory with the same words is untouched.
    assert store.get(b.bo).text == f"My locker code is {SECRET}" and store.get(b.bo).is_active
    assert store.scope_vectors(Scope.of("bo"), 384).texts == [f"My locker code is {SECRET}"]
    assert store.integrity_ok()


def test_the_cache_sees_a_purge_as_a_removal_with_no_text(mem):
    b = Built(mem)
    rev = mem.store.peek_revision(ANA)
    with mem.store.transaction(ANA) as tx:
        tx.purge_memory(b.seq, reason="forget", now=now_iso())
        tx.mark_changed(ANA, [b.seq], rev + 1)
        row = tx.read_scope(ANA)
        tx.save_scope(ANA, revision=rev + 1, dim=384, gate_state=row.gate_state, sage_tau=row.sage_tau)
    changed = mem.store.changes_since(ANA, rev, 384)
    assert changed.seqs.tolist() == [b.seq] and changed.active.tolist() == [False] and changed.texts == [""]
    assert not changed.matrix.any()


def test_purging_a_rejection_erases_it_and_the_noop_row_quoting_it_but_not_the_memory(mem):
    b = Built(mem)
    with mem.store.transaction(ANA) as tx:
        tx.purge_rejection(b.qdup, reason="the user asked", now=now_iso())
    qdup, _, _ = mem.store.rejection(b.qdup)
    assert (qdup.text, qdup.metadata, qdup.reason, qdup.nearest_id) == ("", {}, "purged: the user asked", b.q)
    rows = mem.store.history(b.q)
    noop = [e for e in rows if e.event == "NOOP"]
    assert len(noop) == 1 and noop[0].new_text is None and noop[0].extra["rejection_id"] == b.qdup
    assert rows[0].event == "ADD" and rows[0].new_text == "My sister Marta plays the cello"
    assert mem.get(b.q).text == "My sister Marta plays the cello" and mem.get(b.q).is_active
    dup, _, _ = mem.store.rejection(b.dup)
    assert dup.text == f"MY LOCKER CODE is   {SECRET}"  # another rejection is untouched


def test_a_restored_rejection_goes_with_the_memory_it_became_not_the_one_it_was_folded_into(mem):
    b = Built(mem)
    restored = mem.restore(b.dup)
    with mem.store.transaction(ANA) as tx:
        tx.purge_memory(b.seq, reason="forget the first", now=now_iso())
    dup, _, _ = mem.store.rejection(b.dup)
    assert dup.text == f"MY LOCKER CODE is   {SECRET}"  # its text lives on as the restored memory
    assert mem.get(restored.id).text == dup.text

    with mem.store.transaction(ANA) as tx:
        tx.purge_memory(mem.store.memory_row(restored.id).seq, reason="forget the copy", now=now_iso())
    dup, _, _ = mem.store.rejection(b.dup)
    assert dup.text == "" and dup.reason.startswith(f"purged with memory {restored.id}")
    assert [(e.event, e.new_text) for e in mem.store.history(restored.id)] == [("RESTORE", None), ("PURGE", None)]


def test_purging_twice_is_harmless_and_unknown_records_are_not_found(mem):
    b = Built(mem)
    b.purge(mem)
    b.purge(mem, reason="again")
    assert [e.event for e in mem.store.history(b.p)][-2:] == ["PURGE", "PURGE"]
    with mem.store.transaction(ANA) as tx:
        with pytest.raises(NotFoundError, match=r"^no memory with seq 987654"):
            tx.purge_memory(987654, reason="r", now=now_iso())
        with pytest.raises(NotFoundError, match=r"^no rejection with id 'nope'"):
            tx.purge_rejection("nope", reason="r", now=now_iso())


def test_a_purge_rolled_back_erases_nothing(mem):
    b = Built(mem)
    with pytest.raises(RuntimeError):
        with mem.store.transaction(ANA) as tx:
            tx.purge_memory(b.seq, reason="r", now=now_iso())
            raise RuntimeError("the caller failed after the purge")
    assert SECRET in mem.store.get(b.p).text
    assert f"MY LOCKER CODE is   {SECRET}" == mem.store.rejection(b.dup)[0].text


def test_checkpoint_inside_a_transaction_is_refused(mem):
    mem.add("anything at all", user_id="ana")
    assert mem.store.checkpoint() is True
    with mem.store.transaction(ANA):
        with pytest.raises(StoreError, match="^checkpoint inside a write transaction"):
            mem.store.checkpoint()


# ---- the bytes ---------------------------------------------------------------


def _file_bytes(db: Path) -> bytes:
    """The database file and its WAL and shared-memory files, case-folded (ASCII)."""
    parts = [p.read_bytes() for p in sorted(db.parent.iterdir()) if p.is_file() and p.name.startswith(db.name)]
    assert parts, db
    return b"".join(parts).lower()


def test_a_purged_text_leaves_no_bytes_in_the_sqlite_file_or_its_wal(tmp_path, embedder):
    db = tmp_path / "purge.db"
    mem = Memory(db, embedder=embedder)
    b = Built(mem, twin=False)
    data = _file_bytes(db)
    assert SECRET.encode() in data and b"kumquat" in data and KEPT.encode() in data
    b.purge(mem)  # the transaction checkpoints after it commits
    data = _file_bytes(db)
    assert SECRET.encode() not in data
    assert b"kumquat" not in data and b"t-8812" not in data  # no fragment ("8812" alone is in a random uuid by chance)
    assert KEPT.encode() in data  # the check can see text: what was not purged is still there
    assert (db.parent / (db.name + "-wal")).stat().st_size == 0
    assert mem.store.integrity_ok()
    mem.close()
    assert SECRET.encode() not in _file_bytes(db)


def test_a_purged_text_is_in_no_row_version_of_postgres_after_the_vacuum(pg_url, embedder):
    """Live rows are checked with SQL, and every row version on the tables' pages (live or dead) with
    pageinspect. What PostgreSQL does not promise, and this does not check: the bytes of a dropped
    version may stay in a page's free space until it is reused, and in the WAL until it is recycled."""
    import psycopg

    from memsieve.store.pg_migrations import TABLES
    from memsieve.store.postgres import PURGED_TABLES

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect SCHEMA public")
    mem = Memory(pg_url, embedder=embedder)
    b = Built(mem)

    def rows_holding(word: str) -> dict[str, int]:
        found = {}
        with psycopg.connect(pg_url) as conn:
            for table in TABLES:
                # The whole row as text: every column.
                n = conn.execute(f"SELECT COUNT(*) FROM {table} t WHERE lower(t::text) LIKE %s",
                                 (f"%{word}%",)).fetchone()[0]
                if n:
                    found[table] = n
        return found

    def versions_holding(word: bytes) -> dict[str, int]:
        found = {}
        with psycopg.connect(pg_url) as conn:
            for table in PURGED_TABLES:
                (pages,) = conn.execute("SELECT pg_relation_size(%s) / current_setting('block_size')::int",
                                        (table,)).fetchone()
                n = sum(word in bytes(d).lower() for block in range(pages) for (d,) in conn.execute(
                    "SELECT t_data FROM heap_page_items(get_raw_page(%s, %s)) WHERE t_data IS NOT NULL",
                    (table, block)))
                if n:
                    found[table] = n
        return found

    # Ana's memory, one version, four history rows, a NOOP, a fault and a quote; Bo's memory and its ADD.
    assert rows_holding("kumquat") == {"memories": 2, "memory_versions": 1, "history": 6, "rejections": 1,
                                       "faults": 1}
    assert set(versions_holding(b"kumquat")) == set(PURGED_TABLES) - {"memory_parts", "version_parts", "replies"}
    b.purge(mem)  # the transaction vacuums the purged tables after it commits
    assert rows_holding("kumquat") == {"memories": 1, "history": 1}  # the other scope's own memory and its ADD
    assert versions_holding(b"kumquat") == {"memories": 1, "history": 1}  # no dead version is left either
    assert rows_holding(KEPT.lower()) == {"memories": 1, "history": 1}
    mem.close()


def test_the_embedding_of_a_purged_memory_is_gone_from_the_store(mem):
    b = Built(mem)
    vec = mem.store.memory_row(b.p).embedding.copy()
    assert vec.shape == (384,)
    b.purge(mem)
    vectors = mem.store.candidates(ANA, as_of=None).matrix
    assert not np.any(np.all(np.isclose(vectors, vec[None, :], atol=1e-6), axis=1))
    assert mem.store.memory_row(b.p).embedding.size == 0


def test_postgres_statistics_and_kept_answers_lose_a_purged_text(pg_url, embedder):
    """The planner's statistics sample column values (pg_stats' histograms and common values hold texts),
    and an idempotent write's kept answer quotes its text: after a purge and compact() neither holds it."""
    import psycopg

    mem = Memory(pg_url, embedder=embedder, gate=GateConfig(profile="none"))
    secret = "My bike lock combination is Qorvath-5521."
    (d,) = mem.add(secret, user_id="ana")
    mem.add([f"Ana waters plant number {i} on Sundays." for i in range(12)], user_id="ana")
    store = mem.store
    assert store.claim_reply("k1", "idem-1", scope_key='["ana",null,null]', fingerprint="f", now="2026-01-01T00:00:00",
                             stale_before="2025-12-31T00:00:00") is None
    store.keep_reply("k1", "idem-1", status=200, body='{"text": "%s"}' % secret)

    def stats_holding(word: str) -> list[str]:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            return [str(t) for (t,) in conn.execute(
                "SELECT tablename FROM pg_stats WHERE schemaname = current_schema() AND "
                "lower(concat(most_common_vals::text, histogram_bounds::text)) LIKE %s", (f"%{word}%",))]

    def replies_pages_holding(word: bytes) -> bool:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect SCHEMA public")
            (pages,) = conn.execute("SELECT pg_relation_size('replies') / current_setting('block_size')::int"
                                    ).fetchone()
            raw = b"".join(bytes(p) for block in range(pages)
                           for (p,) in conn.execute("SELECT get_raw_page('replies', %s)", (block,)))
        return word in raw.lower()

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE memories, history, replies")
    assert "memories" in stats_holding("qorvath")
    assert replies_pages_holding(b"qorvath")
    mem.purge(d.memory_id, user_id="ana")
    assert stats_holding("qorvath") == []
    assert not mem.compact().pending
    assert not replies_pages_holding(b"qorvath")
    assert stats_holding("qorvath") == []
    mem.close()
