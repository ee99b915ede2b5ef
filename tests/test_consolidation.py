"""Scheduled consolidation on real stores (SQLite and PostgreSQL) with the real ONNX embedder."""

from __future__ import annotations

import numpy as np
import pytest

from memsieve import GateConfig, Memory, _core
from memsieve.consolidation import CompleteLink, MergeConflictError
from memsieve.consolidation.candidates import Pairs
from memsieve.errors import ConfigError, NotFoundError

U = {"user_id": "ana"}
OTHER = {"user_id": "bo"}

# Two duplicates (one with punctuation), a corrected time, and unrelated facts.
TURNS = [
    ("I love hiking in the mountains on weekends", "t1", "2023-05-01T10:00:00+00:00"),
    ("I love hiking in the mountains on weekends.", "t2", "2023-05-02T10:00:00+00:00"),
    ("My dentist appointment is on Monday at 3pm", "t3", "2023-05-03T10:00:00+00:00"),
    ("My dentist appointment is on Monday at 4pm", "t4", "2023-05-04T10:00:00+00:00"),
    ("The cat is named Miso and sleeps all day", "t5", "2023-05-05T10:00:00+00:00"),
    ("I am learning to play the violin", "t6", "2023-05-06T10:00:00+00:00"),
]
QUERIES = ["when is the dentist appointment", "what does the user do on weekends", "cat name", "violin"]


def fill(mem: Memory, scope: dict = U) -> None:
    for text, source, when in TURNS:
        mem.add(text, source=source, valid_from=when, **scope)


def snapshot(mem: Memory, scope: dict = U) -> list[tuple]:
    return sorted((i.id, i.text, tuple(i.sources), i.valid_to, i.expired_at, i.is_active)
                  for i in mem.get_all(include_inactive=True, **scope) if i.is_active)


def ranking(mem: Memory, scope: dict = U) -> list[list[str]]:
    return [[h.id for h in mem.search(q, limit=10, **scope)] for q in QUERIES]


@pytest.fixture()
def gated_off(request, tmp_path, embedder):
    """A Memory that stores every text (the gate off), on each store in turn."""
    target = tmp_path / "mem.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    m = Memory(target, embedder=embedder, gate=GateConfig(profile="none"))
    yield m
    m.close()


both = pytest.mark.parametrize("gated_off", ["sqlite", "postgres"], indirect=True)


# ---- the kernel and the grouping rule ------------------------------------------------


def test_pairs_kernel_matches_numpy_all_pairs():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((700, 24)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[400] = x[17]  # an exact duplicate across tiles
    left, right, sim = _core.pairs_above(x, 0.55)
    full = x @ x.T
    i, j = np.nonzero(np.triu(full >= 0.55, k=1))
    assert len(i) > 20
    assert list(zip(left.tolist(), right.tolist())) == list(zip(i.tolist(), j.tolist()))
    np.testing.assert_allclose(sim, full[i, j], atol=1e-5)
    assert (17, 400) in set(zip(left.tolist(), right.tolist()))


@pytest.mark.parametrize("bad, exc", [(True, _core.DtypeError), (1.5, _core.ConfigError),
                                      (float("nan"), _core.ConfigError)])
def test_pairs_kernel_refuses_bad_thresholds(bad, exc):
    x = np.eye(3, dtype=np.float32)
    with pytest.raises(exc, match="min_sim"):
        _core.pairs_above(x, bad)


def test_pairs_kernel_bounds_its_output():
    x = np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (100, 1))
    with pytest.raises(_core.ConfigError, match="raise min_sim"):
        _core.pairs_above(x, 0.5, max_pairs=100)
    assert len(_core.pairs_above(x, 0.5, max_pairs=4950)[0]) == 4950


def test_pairs_kernel_releases_the_gil():
    import threading
    import time

    rng = np.random.default_rng(5)
    x = rng.standard_normal((6000, 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    window: list[float] = []
    done = threading.Event()

    def scan() -> None:
        window.append(time.perf_counter())
        _core.pairs_above(x, 0.9)
        window.append(time.perf_counter())
        done.set()

    worker = threading.Thread(target=scan)
    seen: list[float] = []
    worker.start()
    while not done.is_set():
        seen.append(time.perf_counter())  # this thread runs only while no one holds the GIL
    worker.join()
    t0, t1 = window
    margin = 0.1 * (t1 - t0)
    inside = sum(t0 + margin < t < t1 - margin for t in seen)
    # Holding the GIL, the call would leave this thread no tick strictly inside its window.
    assert t1 - t0 > 0.05 and inside > 1000, (t1 - t0, inside)


def test_complete_link_does_not_merge_a_chain():
    # a~b (0.95), b~c (0.93), a and c far apart: only the closest pair is a group.
    pairs = Pairs(np.array([0, 1]), np.array([1, 2]), np.array([0.95, 0.93], dtype=np.float32))
    assert CompleteLink(pairs).groups() == [[0, 1]]
    # A triangle is a clique and merges whole.
    tri = Pairs(np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0.95, 0.91, 0.93], dtype=np.float32))
    assert CompleteLink(tri).groups() == [[0, 1, 2]]
    assert CompleteLink(tri).min_similarity([0, 1, 2]) == pytest.approx(0.91)


def test_distinct_facts_are_never_merged_and_corrections_are_versions(tmp_path, embedder):
    events = [("Melanie went camping with her family in the mountains last week and had a great time exploring "
               "nature, roasting marshmallows, and hiking.", "e1"),
              ("Melanie enjoys camping with her kids, exploring the forest, and hiking.", "e2")]
    with Memory(tmp_path / "d.db", embedder=embedder, gate=GateConfig(profile="none")) as mem:
        for text, source in events + [(TURNS[2][0], "t3"), (TURNS[3][0], "t4")]:
            mem.add(text, source=source, **U)
        a, b = mem.embed([events[0][0], events[1][0]])
        assert float(a @ b) >= 0.78  # close enough to be candidates at this threshold
        report = mem.consolidate(min_sim=0.78, **U)
        assert [m.kind for m in report.merges] == ["versions"]  # the dentist's corrected time only
        assert {i.text for i in mem.get_all(**U)} >= {t for t, _ in events}


# ---- the deterministic rule ------------------------------------------------------------


@both
def test_duplicates_keep_the_newest_and_attach_sources_versions_close_validity(gated_off):
    mem = gated_off
    fill(mem)
    ids = {i.text: i.id for i in mem.get_all(**U)}
    report = mem.consolidate(**U)
    kinds = {m.kind: m for m in report.merges}
    assert set(kinds) == {"duplicates", "versions"}
    assert report.active_before == 6 and report.active_after == 4
    dup, ver = kinds["duplicates"], kinds["versions"]
    assert dup.kept_id == ids[TURNS[1][0]] and dup.member_ids == [ids[TURNS[0][0]], ids[TURNS[1][0]]]
    assert mem.get(dup.kept_id).sources == ["t2", "t1"]
    assert not mem.get(ids[TURNS[0][0]]).is_active
    assert "differ in 4 numbers, dates or names" in ver.reason and "pm" not in ver.reason
    older = mem.get(ids[TURNS[2][0]])
    assert not older.is_active and older.valid_to == TURNS[3][2]
    assert mem.get(ver.kept_id).text == TURNS[3][0] and mem.get(ver.kept_id).is_active
    assert (ids[TURNS[2][0]], "supersedes", None) in mem.links(ver.kept_id)
    assert [h.event for h in mem.history(older.id)][-1] == "CONSOLIDATE"
    assert mem.history(dup.kept_id)[-1].extra["sources"] == ["t1", "t2"]
    # The merge records hold ids and states, never a text a purge would have to chase.
    stored = repr(mem.store._q("SELECT * FROM merges").fetchall())
    assert dup.id in stored and not any(t in stored for t, _, _ in TURNS)
    assert older.valid_from == TURNS[2][2] < older.valid_to
    # The newest version answers, and the old time is no longer among the results.
    hits = [h.text for h in mem.search("dentist appointment time", limit=10, **U)]
    assert hits[0] == TURNS[3][0] and TURNS[2][0] not in hits


@both
def test_dry_run_writes_nothing(gated_off, tmp_path):
    mem = gated_off
    fill(mem)

    def rows() -> list:
        tables = ["memories", "history", "links", "counters", "faults", "merges", "scopes", "memory_versions"]
        return [sorted(map(repr, mem.store._q(f"SELECT * FROM {t}").fetchall())) for t in tables]

    def file_bytes() -> bytes:
        path = tmp_path / "mem.db"
        wal = tmp_path / "mem.db-wal"
        return (path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")) if path.exists() else b""

    before, before_bytes = rows(), file_bytes()
    report = mem.consolidate(dry_run=True, **U)
    assert report.dry_run and len(report.merges) == 2
    assert all(m.status == "proposed" and m.id is None for m in report.merges)
    assert rows() == before
    assert file_bytes() == before_bytes
    assert len(mem.get_all(**U)) == 6


@both
def test_consolidate_then_unconsolidate_restores_the_active_set_and_search(gated_off):
    mem = gated_off
    fill(mem)
    fill(mem, OTHER)
    active, results, other = snapshot(mem), ranking(mem), snapshot(mem, OTHER)
    report = mem.consolidate(**U)
    assert len(mem.get_all(**U)) == 4
    assert ranking(mem) != results  # the retired members are out of search
    assert len(mem.gates.for_read(_scope())) == 4
    for merge in report.merges:
        revived = mem.unconsolidate(merge.id)
        assert revived and all(r.is_active for r in revived)
    assert snapshot(mem) == active
    assert ranking(mem) == results
    assert snapshot(mem, OTHER) == other
    assert len(mem.gates.for_read(_scope())) == 6
    events = [h.event for h in mem.history(report.merges[0].member_ids[0])]
    assert events[-2:] == ["CONSOLIDATE", "UNCONSOLIDATE"]
    with pytest.raises(MergeConflictError, match="already undone"):
        mem.unconsolidate(report.merges[0].id)
    assert mem.merges(**U) == [] and len(mem.merges(**U, include_undone=True)) == len(report.merges)
    assert all(m.undone_at is not None for m in mem.merges(**U, include_undone=True))


def _scope():
    from memsieve.scope import Scope

    return Scope.of(**U)


def test_a_fresh_process_sees_the_same_gate(tmp_path, embedder):
    path = tmp_path / "mem.db"
    with Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as mem:
        fill(mem)
        mem.consolidate(**U)
        live = ranking(mem)
        live_len = len(mem.gates.for_read(_scope()))
    with Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as fresh:
        assert ranking(fresh) == live
        assert len(fresh.gates.for_read(_scope())) == live_len == 4


@both
def test_scopes_never_mix(gated_off):
    mem = gated_off
    fill(mem)
    fill(mem, OTHER)
    theirs = {i.id for i in mem.get_all(**OTHER)}
    report = mem.consolidate(**U)
    assert report.merges and not {i for m in report.merges for i in m.member_ids} & theirs
    assert len(mem.get_all(**OTHER)) == 6
    with pytest.raises(NotFoundError, match="no merge"):
        mem.unconsolidate(report.merges[0].id, **OTHER)
    assert len(mem.get_all(**U)) == 4  # the refused undo changed nothing


@both
def test_an_edited_member_blocks_the_undo(gated_off):
    mem = gated_off
    fill(mem)
    merge = mem.consolidate(**U).merges[0]
    mem.update(merge.kept_id, "I love hiking in the Alps", **U)
    with pytest.raises(MergeConflictError, match="was edited or restored since"):
        mem.unconsolidate(merge.id)
    assert not mem.get(merge.member_ids[0]).is_active


def test_consolidate_every_runs_on_schedule(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder, gate=GateConfig(profile="none"), consolidate_every=4) as mem:
        for text, source, when in TURNS[:3]:
            mem.add(text, source=source, valid_from=when, **U)
        assert len(mem.get_all(**U)) == 3  # three writes: not due yet
        mem.add(TURNS[3][0], source="t4", valid_from=TURNS[3][2], **U)
        assert len(mem.store.merges(_scope())) == 2
        assert len(mem.get_all(**U)) == 2


@pytest.mark.parametrize("bad", [-1, True, 2.5, "3"])
def test_consolidate_every_refuses_bad_values(tmp_path, bad):
    with pytest.raises(ConfigError, match="consolidate_every"):
        Memory(tmp_path / "m.db", consolidate_every=bad)
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize("bad", [0, 1.5, True, "0.9", -0.2])
def test_bad_min_sim_is_a_config_error(tmp_path, embedder, bad):
    with Memory(tmp_path / "m.db", embedder=embedder) as mem:
        mem.add("hello there", **U)
        with pytest.raises(ConfigError, match="min_sim"):
            mem.consolidate(min_sim=bad, **U)


def test_unknown_merge_ids_are_not_found(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as mem:
        for bad in ["nope", 42, None]:
            with pytest.raises(NotFoundError, match="no merge"):
                mem.unconsolidate(bad)
        report = mem.consolidate(**U)  # a scope never written
        assert report.merges == [] and report.active_before == 0


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_merge_methods_of_a_closed_store_raise_closed_error(request, tmp_path, backend):
    from memsieve.errors import ClosedError
    from memsieve.store import open_store
    from memsieve.store.base import MergeTx, RowState

    target = str(tmp_path / "c.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    store = open_store(target)
    store.close()
    state = RowState(is_active=True, valid_to=None, expired_at=None, sources=[], seen_count=1)
    calls = {
        "merge_record": lambda s: s.merge_record("x"), "merges": lambda s: s.merges(_scope()),
        "row_state": lambda s: s.row_state(1), "last_version": lambda s: s.last_version(1),
        "add_merge": lambda s: s.add_merge(_scope(), kind="duplicates", kept_id="a", member_ids=["a"], reason="r",
                                           state={}, now="t"),
        "mark_unmerged": lambda s: s.mark_unmerged("x", "t"), "set_row_state": lambda s: s.set_row_state(1, state),
        "remove_link": lambda s: s.remove_link("a", "b", kind="supersedes"),
    }
    own = {n for n in vars(MergeTx) if not n.startswith("_")} | {"merge_record", "merges", "row_state", "last_version"}
    assert set(calls) == own
    for name, call in calls.items():
        with pytest.raises(ClosedError, match="is closed"):
            call(store)


@both
def test_the_words_of_two_speakers_are_never_merged(gated_off):
    mem = gated_off
    # the same words, said by the user and by the assistant: a duplicate only within one speaker
    for role, source, when, end in (("user", "u1", "2023-05-01T10:00:00+00:00", ""),
                                    ("assistant", "a1", "2023-05-02T10:00:00+00:00", "."),
                                    ("user", "u2", "2023-05-03T10:00:00+00:00", "!")):
        mem.add([{"role": role, "content": "I love hiking in the mountains on weekends" + end}], source=source,
                valid_from=when, **U)
    report = mem.consolidate(**U)
    assert len(report.merges) == 1 and report.active_after == 2
    kept = mem.get(report.merges[0].kept_id)
    assert kept.metadata["role"] == "user" and sorted(kept.sources) == ["u1", "u2"]
    roles = sorted(i.metadata["role"] for i in mem.get_all(**U))
    assert roles == ["assistant", "user"]


@pytest.mark.parametrize("older,newer", [
    ("Ben hired me.", "I hired Ben."),
    ("I wake up at 7 am.", "I wake up at 7 pm."),
    ("Lena is 41 and Marco is 38.", "Lena is 38 and Marco is 41."),
    ("My dad is worried about my health.", "I'm worried about my dad's health."),
    ("I visited Paris in 2019.", "I visited Paris in 2021."),
    ("My daughter starts university in September.", "My cousin's daughter starts university in September."),
])
def test_what_the_gate_keeps_apart_consolidation_keeps_apart(tmp_path, embedder, older, newer):
    """Review finding: these pairs, each stored by the gate as two facts, were merged (as duplicates, or
    the older closed as a version) because the merge rule compared sets of terms only."""
    with Memory(tmp_path / "apart.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        m.add(older, user_id="u")
        m.add(newer, user_id="u")
        report = m.consolidate(user_id="u")
        assert report.merges == []
        assert sorted(x.text for x in m.get_all(user_id="u")) == sorted([older, newer])


def test_a_newer_value_of_a_state_still_closes_the_older(tmp_path, embedder):
    with Memory(tmp_path / "state.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        m.add("My gate code is 4471.", user_id="u")
        m.add("My gate code is 4472.", user_id="u")
        assert [x.kind for x in m.consolidate(user_id="u").merges] == ["versions"]
        assert [x.text for x in m.get_all(user_id="u")] == ["My gate code is 4472."]


@pytest.mark.parametrize("first,second,merged", [
    # an event that names its year is that year's, wherever told: a copy told later is a duplicate
    ("Sam ran the Boston marathon in 2019.", "Sam ran the Boston marathon in 2019!", True),
    # told on its day: two days, two visits, as the gate keeps them
    ("I went to the gym this morning.", "I went to the gym this morning!", False),
])
def test_consolidation_keeps_apart_what_the_gate_keeps_apart_across_days(tmp_path, embedder, first, second, merged):
    with Memory(tmp_path / "days.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        m.add(first, user_id="u", valid_from="2024-03-04T08:00:00")
        m.add(second, user_id="u", valid_from="2024-03-05T08:00:00")
        report = m.consolidate(user_id="u")
        assert (len(report.merges) == 1) is merged, report.merges
        assert len(m.get_all(user_id="u")) == (1 if merged else 2)
