"""Freshness through Memory.search: the newest version of a fact ranks first, on every store."""

from __future__ import annotations

import math

import pytest

from memsieve import GateConfig, Memory

from conftest import TableEmbedder, unit

OLD = "I drive a small red hatchback."
NEW = "I sold the red hatchback and now drive a grey van."
OTHER = "My neighbour drives a bus."
QUERY = "What car do I drive?"


def _table():
    # the query is closest to the OLD text, as a paraphrase often is
    return {OLD: unit(1, 0.05), NEW: unit(1, 0.45), OTHER: unit(0.3, 0, 1), QUERY: unit(1, 0)}


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    return tmp_path / "f.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def test_a_near_duplicate_newer_version_takes_the_older_ones_rank(target):
    m = Memory(target, embedder=TableEmbedder(table=_table()), gate=GateConfig(profile="none"))
    m.add(OLD, user_id="u", valid_from="2024-01-10")
    m.add(OTHER, user_id="u", valid_from="2024-02-01")
    m.add(NEW, user_id="u", valid_from="2024-03-05")
    hits = m.search(QUERY, user_id="u", mode="dense", limit=3)
    assert [h.text for h in hits] == [NEW, OLD, OTHER]
    assert hits[1].superseded_by == hits[0].id and hits[0].superseded_by is None and hits[2].superseded_by is None
    current = m.search(QUERY, user_id="u", mode="dense", limit=3, current_only=True)
    assert [h.text for h in current] == [NEW, OTHER]
    m.close()


def test_freshness_follows_valid_from_not_insertion_order(target):
    m = Memory(target, embedder=TableEmbedder(table=_table()), gate=GateConfig(profile="none"))
    m.add(NEW, user_id="u", valid_from="2024-03-05")
    m.add(OLD, user_id="u", valid_from="2024-01-10")  # told later, but it held earlier
    hits = m.search(QUERY, user_id="u", mode="dense", limit=2)
    assert [h.text for h in hits] == [NEW, OLD]
    m.close()


def test_version_cos_one_groups_only_linked_memories(target):
    m = Memory(target, embedder=TableEmbedder(table=_table()), gate=GateConfig(profile="none"), version_cos=1.0)
    m.add(OLD, user_id="u", valid_from="2024-01-10")
    m.add(NEW, user_id="u", valid_from="2024-03-05")
    hits = m.search(QUERY, user_id="u", mode="dense", limit=2)
    assert [h.text for h in hits] == [OLD, NEW] and all(h.superseded_by is None for h in hits)
    m.close()


def _at(degrees: float):
    return unit(math.cos(math.radians(degrees)), math.sin(math.radians(degrees)))


def test_a_linked_version_below_the_cut_displaces_nothing_and_leads_within_it(tmp_path):
    # In the plane: the query at 0 degrees, OLD at 30, NEW at 45, a filler at -40
    # (nearer the query than NEW). With limit 2 NEW is below the cut.
    table = {QUERY: _at(0), OLD: _at(30), NEW: _at(45), "a filler": _at(-40)}
    m = Memory(tmp_path / "d.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    (old,) = m.add(OLD, user_id="u", valid_from="2024-01-01")
    m.add("a filler", user_id="u", valid_from="2024-01-01")
    (new,) = m.add(NEW, user_id="u", valid_from="2024-05-01")
    with m.store.transaction() as tx:  # what the band writes for a newer version
        tx.add_link(new.memory_id, old.memory_id, kind="updates", cosine=0.97, now="2024-05-01T00:00:00+00:00")
    # Pulling NEW up would push out the filler, a result that ranks above it.
    assert [h.text for h in m.search(QUERY, user_id="u", mode="dense", limit=2)] == [OLD, "a filler"]
    top = m.search(QUERY, user_id="u", mode="dense", limit=3)
    assert [h.text for h in top] == [NEW, OLD, "a filler"] and top[1].superseded_by == new.memory_id
    m.close()


def test_a_chats_answer_and_one_moments_turns_are_no_versions(target):
    # The user's later statement is a version of the earlier; the assistant's answer, alike in
    # meaning, is no version of either; two turns given one session date hold at the same time.
    answer = "A grey van is roomy; drive the hatchback in town and the van for trips."
    same_time = "I sold the red hatchback this week, the van is grey."
    table = _table()
    table[answer] = unit(1, 0.5)
    table[same_time] = unit(1, 0.4)
    m = Memory(target, embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add([{"role": "user", "content": OLD}], user_id="u", valid_from="2024-01-10")
    m.add([{"role": "user", "content": NEW}, {"role": "user", "content": same_time},
           {"role": "assistant", "content": answer}], user_id="u", valid_from="2024-03-05")
    hits = m.search(QUERY, user_id="u", mode="dense", limit=4)
    by_text = {h.text: h for h in hits}
    assert set(by_text) == {OLD, NEW, same_time, answer}
    # OLD is the older version of both turns of March (each of the same speaker, said later) ...
    assert by_text[OLD].superseded_by in {by_text[NEW].id, by_text[same_time].id}
    # ... and nothing else is superseded: not the answer, not one March turn by the other.
    assert [h.text for h in hits if h.superseded_by is not None] == [OLD]
    current = m.search(QUERY, user_id="u", mode="dense", limit=4, current_only=True)
    assert {h.text for h in current} == {NEW, same_time, answer}
    m.close()


@pytest.mark.parametrize("role, date, linked_as_version", [
    ("assistant", "2024-05-01", False),  # the answer the band linked to the question it answers
    ("user", "2024-01-01", False),  # one moment: the same session's turns
    ("user", "2024-05-01", True),  # the user, later: a version
])
def test_a_link_between_speakers_or_of_one_moment_is_no_version_at_read(tmp_path, role, date, linked_as_version):
    table = {QUERY: _at(0), OLD: _at(30), NEW: _at(80), OTHER: _at(-85)}
    m = Memory(tmp_path / "l.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"),
               version_cos=1.0)  # links alone
    (old,) = m.add([{"role": "user", "content": OLD}], user_id="u", valid_from="2024-01-01")
    m.add([{"role": "user", "content": OTHER}], user_id="u", valid_from="2024-01-01")
    (new,) = m.add([{"role": role, "content": NEW}], user_id="u", valid_from=date)
    with m.store.transaction() as tx:
        tx.add_link(new.memory_id, old.memory_id, kind="updates", cosine=0.9, now="2024-05-01T00:00:00+00:00")
    hits = m.search(QUERY, user_id="u", mode="dense", limit=3)
    if linked_as_version:
        assert [h.text for h in hits] == [NEW, OLD, OTHER] and hits[1].superseded_by == new.memory_id
    else:
        assert [h.text for h in hits][0] == OLD and all(h.superseded_by is None for h in hits)
        assert {h.text for h in m.search(QUERY, user_id="u", mode="dense", limit=3, current_only=True)} \
            == {OLD, NEW, OTHER}
    m.close()
