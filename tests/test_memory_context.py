"""Memory.context: search results rendered for a prompt, each line with its date."""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError


@pytest.fixture()
def diary(tmp_path, embedder):
    m = Memory(tmp_path / "c.db", embedder=embedder, gate=GateConfig(profile="none"))
    m.add("Caroline: I went to the support group yesterday.", user_id="c", valid_from="2023-05-08T13:56:00")
    m.add("Caroline: I painted a sunrise over the lake.", user_id="c", valid_from="2023-04-02T10:00:00+02:00")
    m.add("Caroline: my cat is called Pixel.", user_id="c", valid_from="2023-01-15")
    yield m
    m.close()


def test_each_line_carries_its_date(diary):
    text = diary.context("When did Caroline go to the support group?", user_id="c", limit=3, mode="dense")
    lines = text.split("\n")
    assert len(lines) == 3
    assert lines[0] == "[8 May 2023] Caroline: I went to the support group yesterday."
    assert "[2 April 2023] Caroline: I painted a sunrise over the lake." in lines


def test_time_order_puts_the_oldest_first(diary):
    lines = diary.context("Caroline", user_id="c", limit=3, order="time", mode="dense").split("\n")
    assert [line.split("]")[0] + "]" for line in lines] == ["[15 January 2023]", "[2 April 2023]", "[8 May 2023]"]


def test_undated_and_empty(diary):
    text = diary.context("support group", user_id="c", limit=1, dated=False, mode="keyword")
    assert not text.startswith("[") and "support group" in text
    assert diary.context("support group", user_id="nobody") == ""


def test_a_bad_order_is_refused(diary):
    with pytest.raises(ConfigError, match="order"):
        diary.context("support group", user_id="c", order="newest")


def test_the_default_path_gets_its_folder_but_an_explicit_one_must_exist(tmp_path, monkeypatch, table_embedder):
    from memsieve.errors import StoreError

    monkeypatch.delenv("MEMSIEVE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with Memory(embedder=table_embedder) as m:
        m.add("a fact", user_id="u")
    assert (tmp_path / "xdg" / "memsieve" / "memsieve.db").exists()
    with pytest.raises(StoreError, match="does not exist"):
        Memory(tmp_path / "missing" / "m.db", embedder=table_embedder)
    assert not (tmp_path / "missing").exists()
