"""``Memory.add(replaces=...)``: a text that takes the place of memories, in one transaction.

A key-value front end (the LangGraph store) puts a new value under a key that holds one: the old
memory must go before the new text is gated (else the gate folds the new value into it), and a
failure anywhere must leave the old memory in place. Real SQLite; the embedder is the real one
where decisions matter and a table embedder where calls are counted or made to fail.
"""

from __future__ import annotations

import pytest

from memsieve import Memory
from memsieve.errors import EmbedderError, InvalidInputError, NotFoundError
from memsieve.write.path import WritePath

OLD = "Ana's favourite cafe is the one on Rua Augusta."
NEW = "Ana's favourite cafe is now the one on Rua da Prata."


@pytest.fixture()
def mem(tmp_path, embedder):
    m = Memory(tmp_path / "r.db", embedder=embedder)
    yield m
    m.close()


def _actives(mem, **scope):
    return {it.text for it in mem.get_all(**scope)}


def test_replaces_retires_the_old_memory_and_stores_the_new_text(mem):
    (old,) = mem.add(OLD, user_id="ana")
    (new,) = mem.add(OLD, user_id="ana", replaces=[old.memory_id], replace_reason="put again under key 'cafe'")
    # The same text again: without replaces it is an exact duplicate of the memory, folded into it.
    assert new.event == "ADD" and new.memory_id != old.memory_id, new.reason
    assert mem.get(old.memory_id).is_active is False
    assert mem.history(old.memory_id)[-1].event == "DELETE"
    assert mem.history(old.memory_id)[-1].reason == "put again under key 'cafe'"
    assert _actives(mem, user_id="ana") == {OLD}
    (changed,) = mem.add(NEW, user_id="ana", replaces=[new.memory_id])
    assert changed.event == "ADD" and _actives(mem, user_id="ana") == {NEW}
    assert mem.history(new.memory_id)[-1].reason == "replaced by a later add"


def test_without_replaces_the_same_text_is_folded(mem):
    (old,) = mem.add(OLD, user_id="ana")
    (again,) = mem.add(OLD, user_id="ana")
    assert again.event == "NOOP" and again.memory_id == old.memory_id


def test_a_failing_embedder_leaves_what_it_replaces(tmp_path, table_embedder):
    mem = Memory(tmp_path / "f.db", embedder=table_embedder)
    (old,) = mem.add(OLD, user_id="ana")

    def broken(texts):
        raise RuntimeError("the model file is gone")

    table_embedder.embed = broken
    with pytest.raises(EmbedderError, match="the model file is gone"):
        mem.add(NEW, user_id="ana", replaces=[old.memory_id])
    assert mem.get(old.memory_id).is_active and _actives(mem, user_id="ana") == {OLD}
    assert [h.event for h in mem.history(old.memory_id)] == ["ADD"]
    mem.close()


def test_a_failure_while_deciding_rolls_the_retirement_back(mem, monkeypatch):
    (old,) = mem.add(OLD, user_id="ana")

    def fails(self, cand):
        raise RuntimeError("disk full")

    monkeypatch.setattr(WritePath, "apply", fails)
    with pytest.raises(RuntimeError, match="disk full"):
        mem.add(NEW, user_id="ana", replaces=[old.memory_id])
    monkeypatch.undo()
    assert mem.get(old.memory_id).is_active, "the soft delete ran in the transaction that failed"
    assert [h.event for h in mem.history(old.memory_id)] == ["ADD"]
    # and the gate still holds the old memory: the same text again folds into it
    (again,) = mem.add(OLD, user_id="ana")
    assert again.event == "NOOP" and again.memory_id == old.memory_id


def test_replaces_embeds_the_new_text_once(tmp_path, table_embedder):
    mem = Memory(tmp_path / "e.db", embedder=table_embedder)
    (old,) = mem.add(OLD, user_id="ana")
    before = table_embedder.calls
    mem.add(NEW, user_id="ana", replaces=[old.memory_id])
    assert table_embedder.calls - before == 1
    mem.close()


@pytest.mark.parametrize("bad, error, match", [
    ("an-id", InvalidInputError, "replaces must be a list of memory ids, got str"),
    (5, InvalidInputError, "replaces must be a list of memory ids, got int"),
    (["no-such-id"], NotFoundError, "no memory with id 'no-such-id'"),
    ([7], NotFoundError, "memory ids are strings, got int"),
])
def test_bad_replaces_are_refused_before_anything_is_written(mem, bad, error, match):
    (old,) = mem.add(OLD, user_id="ana")
    with pytest.raises(error, match=match):
        mem.add(NEW, user_id="ana", replaces=bad)
    assert _actives(mem, user_id="ana") == {OLD} and mem.get(old.memory_id).is_active


def test_another_scopes_memory_cannot_be_replaced(mem):
    (bos,) = mem.add(OLD, user_id="bo")
    with pytest.raises(NotFoundError):
        mem.add(NEW, user_id="ana", replaces=[bos.memory_id])
    assert mem.get(bos.memory_id).is_active and _actives(mem, user_id="ana") == set()


def test_replaces_is_refused_with_infer(mem):
    (old,) = mem.add(OLD, user_id="ana")
    with pytest.raises(InvalidInputError, match="cannot be used with infer=True"):
        mem.add(NEW, user_id="ana", replaces=[old.memory_id], infer=True)
    assert mem.get(old.memory_id).is_active


def test_the_scoped_handle_passes_replaces_on(mem):
    ana = mem.scope(user_id="ana")
    (old,) = ana.add(OLD)
    (new,) = ana.add(NEW, replaces=[old.memory_id], replace_reason="moved cafe")
    assert new.event == "ADD" and mem.history(old.memory_id)[-1].reason == "moved cafe"
