"""The schema steps (store/schema.py): their names and order on each store, and
an upgrade from every older version ending at the schema a fresh store has."""

from __future__ import annotations

import sqlite3

import pytest

from memsieve.errors import StoreError
from memsieve.store import migrations, pg_migrations
from memsieve.store.postgres import PostgresStore
from memsieve.store.schema import POSTGRES, SQLITE, Migrations
from memsieve.store.sqlite import SQLiteStore

BOTH = ["m001_tables", "m002_changed_rev", "m003_memory_versions", "m004_share_column",
        "m005_rejection_information", "m006_drop_full_text", "m007_dedup_index", "m008_merges"]
#: The names and order are part of the file format: a database at version N has run the first N.
SQLITE_STEPS = BOTH + ["m009_drop_partial_hash_index", "m010_memory_parts", "m011_replies", "m012_version_parts",
                         "m013_valid_from_offset", "m014_forgotten_folds", "m015_fold_keys"]
POSTGRES_STEPS = BOTH + ["m010_memory_parts", "m011_replies", "m012_version_parts", "m013_valid_from_offset",
                            "m014_forgotten_folds", "m015_fold_keys"]


def _sqlite_schema(path) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        con.close()


def _pg_schema(url) -> tuple[list[tuple], list[tuple]]:
    import psycopg

    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, column_default,"
            " is_generated, identity_generation FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY 1, 2").fetchall()
        indexes = conn.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
            " ORDER BY 2").fetchall()
    # pg_indexes spells each index with its schema ("ON s12.memories"); the
    # fresh store and the upgraded one live in different schemas.
    schema = url.split("search_path%3D", 1)[1].split("%2C", 1)[0]
    return columns, [(t, i, d.replace(f"{schema}.", "")) for t, i, d in indexes]


def _open(kind, target):
    return (SQLiteStore if kind == "sqlite" else PostgresStore)(target)


def _schema(kind, target):
    return _sqlite_schema(target) if kind == "sqlite" else _pg_schema(target)


def _applied(kind, target) -> list[str]:
    if kind == "sqlite":
        con = sqlite3.connect(target)
        try:
            return migrations.applied_steps(con)
        finally:
            con.close()
    import psycopg

    with psycopg.connect(target) as conn:
        return pg_migrations.applied_steps(conn)


def _target(kind, tmp_path, request, name):
    return str(tmp_path / f"{name}.db") if kind == "sqlite" else request.getfixturevalue("pg_server").create_schema()


def test_each_store_runs_its_named_steps_in_order():
    assert [s.name for s in migrations.MIGRATIONS] == SQLITE_STEPS
    assert [s.name for s in pg_migrations.MIGRATIONS] == POSTGRES_STEPS


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_fresh_store_has_applied_every_step_by_name(kind, tmp_path, request):
    target = _target(kind, tmp_path, request, "fresh")
    _open(kind, target).close()
    assert _applied(kind, target) == (SQLITE_STEPS if kind == "sqlite" else POSTGRES_STEPS)


@pytest.mark.parametrize("kind,version", [("sqlite", v) for v in range(1, len(SQLITE_STEPS) + 1)]
                         + [("postgres", v) for v in range(1, len(POSTGRES_STEPS) + 1)])
def test_a_database_one_step_behind_upgrades_to_the_fresh_schema(kind, version, tmp_path, request, monkeypatch):
    module = migrations if kind == "sqlite" else pg_migrations
    full = list(module.MIGRATIONS)
    fresh, old = _target(kind, tmp_path, request, "fresh"), _target(kind, tmp_path, request, "old")
    _open(kind, fresh).close()
    monkeypatch.setattr(module, "MIGRATIONS", full[:version - 1])
    _open(kind, old).close()
    assert _applied(kind, old) == [s.name for s in full[:version - 1]]
    assert _schema(kind, old) != _schema(kind, fresh)  # the missing step changes something
    monkeypatch.setattr(module, "MIGRATIONS", full)
    _open(kind, old).close()
    assert _applied(kind, old) == [s.name for s in full]
    assert _schema(kind, old) == _schema(kind, fresh)


def test_a_step_for_one_dialect_is_not_counted_by_the_other():
    registry = Migrations()

    @registry()
    def m001_both(d):
        return f"CREATE TABLE t (b {d.blob})"

    @registry(only="sqlite")
    def m002_sqlite_only(d):
        return "CREATE INDEX t_b ON t(b); DROP INDEX t_b"

    assert [(s.name, s.statements) for s in registry.steps(SQLITE)] == [
        ("m001_both", ("CREATE TABLE t (b BLOB)",)), ("m002_sqlite_only", ("CREATE INDEX t_b ON t(b)", "DROP INDEX t_b"))]
    assert [(s.name, s.statements) for s in registry.steps(POSTGRES)] == [("m001_both", ("CREATE TABLE t (b BYTEA)",))]


def test_a_step_name_registered_twice_or_an_unknown_dialect_is_refused():
    registry = Migrations()

    @registry()
    def m001_x(d):
        return "SELECT 1"

    with pytest.raises(StoreError, match="registered twice"):
        registry()(m001_x)
    with pytest.raises(StoreError, match="only='mysql'"):
        registry(only="mysql")
