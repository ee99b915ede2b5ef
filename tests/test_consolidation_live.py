"""Consolidation beside live writers (SQLite threads, PostgreSQL connections) and its property test."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsieve import GateConfig, Memory
from memsieve.scope import Scope

U = {"user_id": "ana"}
BASES = ["I walked the dog in the park this morning", "We had pasta with tomato sauce for dinner",
         "My sister Lena moved to Berlin last spring", "The meeting with the landlord is at 3pm on Friday",
         "The meeting with the landlord is at 5pm on Friday", "I started reading a novel about sailing"]
VARIANTS = ["", ".", "!", " today", " again"]


def writer_texts(n: int) -> list[str]:
    return [BASES[i % len(BASES)] + VARIANTS[(i // len(BASES)) % len(VARIANTS)] for i in range(n)]


def check_consistent(target, embedder, added: list[str]) -> None:
    """Every added memory is active or retired by merges leading to an active one; the gate matches the store."""
    with Memory(target, embedder=embedder, gate=GateConfig(profile="none")) as fresh:
        active = {i.id for i in fresh.get_all(**U)}
        assert len(fresh.gates.for_read(Scope.of(**U))) == len(active) == fresh.store.count_active(Scope.of(**U))
        for memory_id in added:
            # A kept memory may be retired by a later run: follow the merges to an active one.
            seen = memory_id
            for _ in range(len(added)):
                if seen in active:
                    break
                last = fresh.history(seen)[-1]
                assert last.event == "CONSOLIDATE", (memory_id, last)
                seen = last.extra["kept_id"]
            assert seen in active, memory_id
        assert fresh.store.integrity_ok()


def run_beside_writer(writer: Memory, consolidator: Memory, n: int) -> tuple[list[str], int]:
    added: list[str] = []
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for k, text in enumerate(writer_texts(n)):
                for d in writer.add(text, source=f"w{k}", **U):
                    if d.event == "ADD":
                        added.append(str(d.memory_id))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    merged = 0
    while thread.is_alive():
        merged += len(consolidator.consolidate(**U).merges)
    thread.join()
    merged += len(consolidator.consolidate(**U).merges)
    assert not errors, errors
    return added, merged


def test_safe_beside_a_writer_thread_on_sqlite(tmp_path, embedder):
    path = tmp_path / "live.db"
    with Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as mem:
        added, merged = run_beside_writer(mem, mem, 40)
    assert len(added) >= 30 and merged > 0
    check_consistent(path, embedder, added)


def test_safe_beside_another_connection_on_sqlite(tmp_path, embedder):
    path = tmp_path / "live.db"
    with Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as a, \
            Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as b:
        added, merged = run_beside_writer(a, b, 30)
        assert len(a.get_all(**U)) == len(b.get_all(**U))
    assert merged > 0
    check_consistent(path, embedder, added)


def test_safe_beside_a_writer_on_postgres(pg_url, embedder):
    with Memory(pg_url, embedder=embedder, gate=GateConfig(profile="none")) as a, \
            Memory(pg_url, embedder=embedder, gate=GateConfig(profile="none")) as b:
        added, merged = run_beside_writer(a, b, 30)
        # The writer's cached gate catches up with the other connection's merges.
        assert len(a.gates.for_read(Scope.of(**U))) == len(a.get_all(**U))
    assert merged > 0
    check_consistent(pg_url, embedder, added)


# ---- the property -------------------------------------------------------------------------


def reachable_sources(mem: Memory) -> set[str]:
    """Sources reachable from the active memories and their history."""
    out: set[str] = set()
    for item in mem.get_all(**U):
        out.update(item.sources)
        for h in mem.history(item.id):
            out.update(h.extra.get("sources", []))
    return out


POOL = BASES + [b + v for b in BASES[:3] for v in VARIANTS[1:3]]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.integers(0, len(POOL) - 1), min_size=2, max_size=10),
       min_sim=st.sampled_from([0.8, 0.85, 0.9, 0.95]), gated=st.booleans())
def test_consolidation_never_loses_a_reachable_source(embedder, picks, min_sim, gated):
    with tempfile.TemporaryDirectory() as d, \
            Memory(Path(d) / "p.db", embedder=embedder,
                   gate=GateConfig() if gated else GateConfig(profile="none")) as mem:
        for k, p in enumerate(picks):
            mem.add(POOL[p], source=f"s{k}", **U)
        before = reachable_sources(mem)
        active_before = sorted(i.id for i in mem.get_all(**U))
        report = mem.consolidate(min_sim=min_sim, **U)
        assert reachable_sources(mem) >= before
        assert len(mem.get_all(**U)) == len(active_before) - sum(len(m.member_ids) - 1 for m in report.merges)
        for merge in reversed(report.merges):
            mem.unconsolidate(merge.id)
        assert sorted(i.id for i in mem.get_all(**U)) == active_before
        assert reachable_sources(mem) >= before
