"""Per-scope hnswlib indexes: saved atomically, trusted only when they match, and safe when emptied."""

from __future__ import annotations

import json
import multiprocessing
import shutil

import numpy as np
import pytest

from memsieve import Memory
from memsieve.gate.ann import ScopeIndex

DIM = 32


def _unit_rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _index(first: int, n: int, seed: int) -> ScopeIndex:
    return ScopeIndex.build(np.arange(first, first + n, dtype=np.int64), _unit_rows(n, seed))


def _labels(index: ScopeIndex) -> set[int]:
    return {int(x) for x in index._index.get_ids_list()}


# ---- what load trusts --------------------------------------------------------


def test_a_saved_index_loads_back_with_its_labels(tmp_path):
    path = str(tmp_path / "s.bin")
    _index(0, 40, 1).save(path, revision=7)
    loaded = ScopeIndex.load(path, dim=DIM, revision=7, count=40)
    assert loaded is not None and loaded.count == 40 and _labels(loaded) == set(range(40))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.bin", "s.bin.json", "s.bin.lock"]  # no temp left


def test_an_old_bin_beside_a_new_json_is_rejected(tmp_path):
    old, new = str(tmp_path / "old.bin"), str(tmp_path / "s.bin")
    _index(0, 40, 1).save(old, revision=7)
    _index(0, 41, 2).save(new, revision=8)
    shutil.copyfile(old, new)  # what a torn two-step save left behind
    assert ScopeIndex.load(new, dim=DIM, revision=8) is None
    meta = json.loads(open(new + ".json").read())
    meta["count"] = 40  # even with the count forged to the old bin's, the checksum tells
    open(new + ".json", "w").write(json.dumps(meta))
    assert ScopeIndex.load(new, dim=DIM, revision=8) is None


@pytest.mark.parametrize("mismatch", ["revision", "dim", "count", "bytes", "elements", "no_json", "bad_json"])
def test_an_index_that_does_not_match_the_store_is_not_trusted(tmp_path, mismatch):
    path = str(tmp_path / "s.bin")
    _index(0, 40, 1).save(path, revision=7)
    kwargs = {"dim": DIM, "revision": 7, "count": 40}
    if mismatch == "revision":
        kwargs["revision"] = 8
    elif mismatch == "dim":
        kwargs["dim"] = DIM + 1
    elif mismatch == "count":
        kwargs["count"] = 39
    elif mismatch == "bytes":
        data = bytearray(open(path, "rb").read())
        data[-5] ^= 0xFF
        open(path, "wb").write(bytes(data))
    elif mismatch == "elements":
        meta = json.loads(open(path + ".json").read())
        meta["elements"] = 41
        open(path + ".json", "w").write(json.dumps(meta))
    elif mismatch == "no_json":
        (tmp_path / "s.bin.json").unlink()
    else:
        open(path + ".json", "w").write("[1, 2")
    assert ScopeIndex.load(path, **kwargs) is None


def _save_repeatedly(path: str, first: int, n: int, revision: int, barrier) -> None:
    index = _index(first, n, seed=first)
    barrier.wait(30)
    for _ in range(40):
        index.save(path, revision=revision)


def test_two_processes_saving_at_once_leave_a_consistent_pair(tmp_path):
    path = str(tmp_path / "s.bin")
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    writers = {1: (0, 60), 2: (1000, 75)}  # revision -> (first label, count)
    procs = [ctx.Process(target=_save_repeatedly, args=(path, first, n, rev, barrier))
             for rev, (first, n) in writers.items()]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    revision = json.loads(open(path + ".json").read())["revision"]
    first, n = writers[revision]
    loaded = ScopeIndex.load(path, dim=DIM, revision=revision, count=n)
    assert loaded is not None and _labels(loaded) == set(range(first, first + n))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.bin", "s.bin.json", "s.bin.lock"]


def test_a_stale_bin_found_at_open_is_rebuilt_and_finds_every_memory(tmp_path, table_embedder):
    path = tmp_path / "m.db"
    m = Memory(path, embedder=table_embedder, index_min_size=5)
    m.add([f"distinct fact number {i}" for i in range(8)], user_id="u")
    m.close()
    bin_path = next((tmp_path / "m.db.hnsw").glob("*.bin"))
    stale = bin_path.read_bytes()
    m = Memory(path, embedder=table_embedder, index_min_size=5)
    (d,) = m.add("the newest fact of all", user_id="u")
    m.close()
    bin_path.write_bytes(stale)  # the old graph beside the new .json, as a torn save left it
    m = Memory(path, embedder=table_embedder, index_min_size=5)
    hits = m.search("the newest fact of all", user_id="u", limit=3, mode="dense")  # the index's own ranking
    assert hits and hits[0].id == d.memory_id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    (again,) = m.add("the newest fact of all", user_id="u")
    assert again.event == "NOOP"
    m.close()


# ---- an indexed scope emptied ---------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    return str(tmp_path / "m.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def test_an_indexed_scope_emptied_takes_new_memories(target, table_embedder):
    m = Memory(target, embedder=table_embedder, index_min_size=4)
    ds = m.add([f"memory to forget {i}" for i in range(10)], user_id="u")
    assert all(d.event == "ADD" for d in ds)
    for d in ds:
        m.delete(d.memory_id)
    for mode in ("dense", "keyword", "hybrid"):
        assert m.search("memory to forget", user_id="u", mode=mode) == []
    (new,) = m.add("a memory after the purge", user_id="u")
    assert new.event == "ADD"
    again = m.add([f"memory to forget {i}" for i in range(3)], user_id="u")
    assert [d.event for d in again] == ["ADD"] * 3
    hits = m.search("a memory after the purge", user_id="u", limit=10)
    assert hits[0].id == new.memory_id and len(hits) == 4
    assert len(m.get_all(user_id="u")) == 4
    m.close()


@pytest.mark.parametrize("index_min_size", [0, 1, 2])
def test_tiny_index_thresholds_work_from_the_first_memory(target, table_embedder, index_min_size):
    m = Memory(target, embedder=table_embedder, index_min_size=index_min_size)
    assert m.search("anything", user_id="u") == []
    (first,) = m.add("the very first memory", user_id="u")
    assert first.event == "ADD"
    ds = m.add([f"another memory {i}" for i in range(5)], user_id="u")
    assert [d.event for d in ds] == ["ADD"] * 5
    (dup,) = m.add("the very first memory", user_id="u")
    assert dup.event == "NOOP" and dup.memory_id == first.memory_id
    assert m.search("the very first memory", user_id="u", limit=1)[0].id == first.memory_id
    m.close()
    reopened = Memory(target, embedder=table_embedder, index_min_size=index_min_size)
    assert reopened.search("the very first memory", user_id="u", limit=1)[0].id == first.memory_id
    reopened.delete(first.memory_id)
    assert [h.id for h in reopened.search("the very first memory", user_id="u", limit=10)
            if h.id == first.memory_id] == []
    reopened.close()


def test_knn_on_an_index_with_most_points_deleted_returns_the_live_ones():
    index = _index(0, 300, 3)
    for seq in range(295):
        index.remove(seq)
    seqs, cos = index.knn(_unit_rows(1, 9)[0], 10)
    assert sorted(int(s) for s in seqs) == [295, 296, 297, 298, 299] and cos.dtype == np.float32
    empty = ScopeIndex.build(np.empty(0, np.int64), np.empty((0,), np.float32), dim=DIM)
    assert empty.count == 0 and empty.knn(_unit_rows(1, 1)[0], 5)[0].shape == (0,)


def test_a_removed_point_leaves_no_vector_in_the_saved_index(tmp_path):
    rows = _unit_rows(40, 3)
    index = ScopeIndex.build(np.arange(40, dtype=np.int64), rows)
    before, after = str(tmp_path / "before.bin"), str(tmp_path / "after.bin")
    index.save(before, revision=1)
    assert rows[5].tobytes() in open(before, "rb").read()
    index.remove(5)
    index.remove(5)  # idempotent
    index.remove(999)  # an unknown label changes nothing
    assert index.count == 39
    index.save(after, revision=2)
    saved = open(after, "rb").read()
    assert rows[5].tobytes() not in saved and rows[6].tobytes() in saved
    loaded = ScopeIndex.load(after, dim=DIM, revision=2, count=39)
    assert loaded is not None
    for q in (rows[5], rows[6]):
        labels, cosines = loaded.knn(q, 10)
        assert 5 not in labels.tolist() and len(labels) == 10
    assert loaded.knn(rows[6], 1)[0].tolist() == [6]
    loaded.add(5, rows[5])  # the slot is reused for a point added again
    assert loaded.knn(rows[5], 1)[0].tolist() == [5] and loaded.count == 40
