"""Query plans that decide the write path's cost on SQLite."""

from __future__ import annotations

from memsieve.store.sqlite import SQLiteStore


def test_exact_dedup_is_an_index_lookup_not_a_scope_scan(tmp_path):
    store = SQLiteStore(tmp_path / "p.db")
    sql = ("SELECT seq, id FROM memories WHERE scope_key = ? AND text_hash = ? AND is_active = 1"
           " ORDER BY seq LIMIT 1")
    plan = " ".join(row[3] for row in store._conn.execute("EXPLAIN QUERY PLAN " + sql, ("s", "h")))
    assert "text_hash=?" in plan, plan  # migration 7: three equalities, not scope_key + is_active
    store.close()
