"""The library against a hostile caller (review findings): every mistake is a typed MemsieveError with
nothing written, yes/no options refuse "no", and JSON's true is not 1."""

from __future__ import annotations

import pytest

from memsieve import (ConfigError, GateConfig, InvalidInputError, InvalidTextError, Memory, MergeConflictError,
                      NotFoundError, StoreError)
from memsieve.cli import main

from conftest import unit

TEAL = ["My favourite colour is teal.", "My favourite colour is teal!"]


@pytest.fixture()
def mem(tmp_path, table_embedder):
    table_embedder.table.update({TEAL[0]: unit(1, 0, 0), TEAL[1]: unit(1, 0.05, 0)})
    m = Memory(tmp_path / "h.db", embedder=table_embedder, gate=GateConfig(profile="none"))
    yield m
    m.close()


def _merged(mem):
    mem.add(TEAL[0], user_id="ana")
    mem.add(TEAL[1], user_id="ana")
    (merge,) = mem.consolidate(user_id="ana", min_sim=0.5).merges
    return merge


def test_undoing_a_merge_whose_member_was_purged_is_a_conflict_and_changes_nothing(mem):
    merge = _merged(mem)
    member = next(i for i in merge.member_ids if i != merge.kept_id)
    mem.purge(member, user_id="ana")
    before = [(m.id, m.is_active, m.text) for m in mem.get_all(user_id="ana", include_inactive=True)]
    with pytest.raises(MergeConflictError, match="was purged since"):
        mem.unconsolidate(merge.id, user_id="ana")
    assert [(m.id, m.is_active, m.text) for m in mem.get_all(user_id="ana", include_inactive=True)] == before


def test_undoing_a_merge_brings_back_the_members_a_purge_left_and_keeps_the_purged_one_erased(tmp_path,
                                                                                            table_embedder):
    texts = ["My favourite colour is teal.", "My favourite colour is teal!", "My favourite colour is teal..."]
    table_embedder.table.update({texts[0]: unit(1, 0, 0), texts[1]: unit(1, 0.05, 0), texts[2]: unit(1, 0, 0.05)})
    with Memory(tmp_path / "h.db", embedder=table_embedder, gate=GateConfig(profile="none")) as mem:
        for text in texts:
            mem.add(text, user_id="ana")
        (merge,) = mem.consolidate(user_id="ana", min_sim=0.5).merges
        assert len(merge.member_ids) == 3
        purged, left = [i for i in merge.member_ids if i != merge.kept_id]
        mem.purge(purged, user_id="ana")
        revived = mem.unconsolidate(merge.id, user_id="ana")
        assert [m.id for m in revived] == [left] and revived[0].is_active
        assert sorted(m.id for m in mem.get_all(user_id="ana")) == sorted([merge.kept_id, left])
        erased = mem.get(purged)
        assert not erased.is_active and erased.text not in texts
        (undo,) = [h for h in mem.history(merge.kept_id) if h.event == "UNCONSOLIDATE"]
        assert "1 purged member(s) stay erased" in undo.reason and purged not in undo.reason
        with pytest.raises(MergeConflictError, match="already undone"):
            mem.unconsolidate(merge.id, user_id="ana")


@pytest.mark.parametrize("bad", ["\ud800", "", "x" * 10_000, "a\x00b"])
def test_a_merge_id_no_store_could_hold_is_not_found(mem, bad):
    with pytest.raises(NotFoundError, match="no merge with id"):
        mem.unconsolidate(bad)


def test_the_cli_says_an_unknown_merge_id_in_one_line(tmp_path, capsys):
    db = str(tmp_path / "c.db")
    assert main(["add", "hello there", "--user", "a", "--db", db]) == 0
    capsys.readouterr()
    assert main(["unconsolidate", "\udcff", "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memsieve: error: no merge with id") and "Traceback" not in err


def test_a_progress_that_is_not_callable_is_refused_before_any_merge(mem):
    mem.add(TEAL[0], user_id="ana")
    mem.add(TEAL[1], user_id="ana")
    with pytest.raises(ConfigError, match="progress must be a callable"):
        mem.consolidate(user_id="ana", min_sim=0.5, progress=5)
    assert mem.merges(user_id="ana") == []
    with pytest.raises(ConfigError, match="progress must be a callable"):
        mem.add_many(["one more"], user_id="ana", progress="yes")


def test_yes_no_options_refuse_a_string(mem):
    _merged(mem)
    with pytest.raises(InvalidInputError, match="include_undone must be True or False"):
        mem.merges(user_id="ana", include_undone="no")
    with pytest.raises(InvalidInputError, match="dated must be True or False"):
        mem.context("colour", user_id="ana", dated="no")
    with pytest.raises(ConfigError, match="exact_dedup must be True or False"):
        GateConfig(exact_dedup="no")


@pytest.mark.parametrize("value", [5, 1.01, float("inf")])
def test_an_llm_guard_cosine_above_one_is_refused_when_the_config_is_built(value):
    with pytest.raises(ConfigError, match="crud_update_min_sim"):
        GateConfig(crud_update_min_sim=value)


def test_a_filter_on_true_does_not_match_1_nor_the_reverse(mem):
    mem.add("I take the train to work every day.", user_id="ana", metadata={"verified": True, "tags": [True]})
    mem.add("My sister studies marine biology in Faro.", user_id="ana", metadata={"verified": 1, "tags": [1]})
    texts = lambda f: sorted(r.text for r in mem.search("work", user_id="ana", filters=f))  # noqa: E731
    assert texts({"verified": True}) == ["I take the train to work every day."]
    assert texts({"verified": 1}) == ["My sister studies marine biology in Faro."]
    assert texts({"verified": 1.0}) == ["My sister studies marine biology in Faro."]
    assert texts({"tags": [True]}) == ["I take the train to work every day."]


def test_links_of_an_unknown_id_is_not_found(mem):
    with pytest.raises(NotFoundError, match="no memory with id"):
        mem.links("no-such-id")
    (d,) = mem.add("Ana grows tomatoes.", user_id="ana")
    assert mem.links(d.memory_id) == []


@pytest.mark.parametrize("text", [" \u3000\u200b ", "\u200b\u200d\ufeff", "\u2060"])
def test_a_text_of_only_invisible_characters_is_refused(mem, text):
    with pytest.raises(InvalidTextError, match="empty or only whitespace"):
        mem.add(text, user_id="ana")
    assert mem.get_all(user_id="ana") == []
    assert [d.event for d in mem.add("ok \u200b", user_id="ana")] == ["ADD"]


def test_restoring_a_rejection_whose_memory_was_purged_says_so(tmp_path, table_embedder):
    m = Memory(tmp_path / "r.db", embedder=table_embedder)
    m.add("I keep my spare key under the flowerpot.", user_id="b")
    (noop,) = m.add("I keep my spare key under the flowerpot.", user_id="b")
    assert noop.event == "NOOP"
    restored = m.restore(noop.rejection_id)
    assert m.restore(noop.rejection_id).id == restored.id  # restoring twice is the same memory
    m.purge(restored.id)
    with pytest.raises(NotFoundError, match="was purged since"):
        m.restore(noop.rejection_id)
    m.close()


def test_a_default_store_folder_that_cannot_be_made_is_a_store_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.delenv("MEMSIEVE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    with pytest.raises(StoreError, match="cannot make the default store's folder"):
        Memory()
    monkeypatch.setenv("MEMSIEVE_DB", str(blocker / "x.db"))
    with pytest.raises(StoreError, match="set MEMSIEVE_DB or XDG_DATA_HOME"):
        Memory()
