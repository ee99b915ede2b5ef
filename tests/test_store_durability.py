"""Memory(durability=...): what a committed write survives, set on each store."""

from __future__ import annotations

import pytest

from memsieve import ConfigError, GateConfig, Memory

from conftest import unit, TableEmbedder


def _emb():
    return TableEmbedder(table={"a fact": unit(1, 0)})


@pytest.mark.parametrize("mode, pragma", [("normal", 1), ("full", 2)])
def test_sqlite_sets_the_synchronous_level_of_the_mode(tmp_path, mode, pragma):
    m = Memory(tmp_path / f"{mode}.db", embedder=_emb(), gate=GateConfig(profile="none"), durability=mode)
    m.add("a fact", user_id="u")
    assert m.store._q("PRAGMA synchronous").fetchone()[0] == pragma  # 1 NORMAL, 2 FULL
    assert m.store._q("PRAGMA journal_mode").fetchone()[0] == "wal"
    m.close()


def test_postgres_full_insists_on_synchronous_commit(pg_url):
    m = Memory(pg_url, embedder=_emb(), gate=GateConfig(profile="none"), durability="full")
    assert m.store._q("SHOW synchronous_commit").fetchone()[0] == "on"
    m.close()


@pytest.mark.parametrize("bad", ["fast", None, 1, "FULL"])
def test_an_unknown_mode_is_a_config_error_and_opens_nothing(tmp_path, bad):
    with pytest.raises(ConfigError, match="durability must be one of 'normal', 'full'"):
        Memory(tmp_path / "x.db", embedder=_emb(), durability=bad)
    assert not (tmp_path / "x.db").exists()
