"""Crash safety (SIGKILL mid-ingest) and concurrent writers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest


from memsieve import Memory, Scope

WRITER = textwrap.dedent("""
    import sys
    from memsieve import Memory
    from conftest import TableEmbedder
    m = Memory(sys.argv[1], embedder=TableEmbedder(), index_min_size=10)
    start = int(sys.argv[2])
    for i in range(start, start + 100000):
        ds = m.add([f"fact {i}", f"fact {i % 7}"], user_id="u", source=f"s{i}")
        print(i, flush=True)
""")


@pytest.mark.slow
def test_sigkill_mid_ingest_leaves_a_consistent_store(tmp_path):
    db = tmp_path / "crash.db"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    committed = -1
    for round_ in range(6):
        proc = subprocess.Popen([sys.executable, str(script), str(db), str(committed + 1)],
                                stdout=subprocess.PIPE, text=True, env=env)
        seen = []
        deadline = time.time() + 60
        while len(seen) < 5 + 3 * round_ and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(int(line.split()[0]))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert seen, f"writer printed nothing in round {round_}"
        committed = seen[-1]
        m = Memory(db, embedder=__import__("conftest").TableEmbedder(), index_min_size=10)
        assert m.store.integrity_ok()
        texts = {it.text for it in m.get_all(user_id="u")}
        # every add() that returned before the kill is there, whole
        for i in range(committed + 1):
            assert f"fact {i}" in texts or any(r.text == f"fact {i}" for r in m.rejections(user_id="u"))
        # counters agree with the rows: nothing half-written
        st = m.stats(user_id="u")
        assert st["events"].get("ADD", 0) == st["active_memories"]
        assert st["events"].get("NOOP", 0) == st["rejections"]
        # the index (a cache) is rebuilt and answers
        assert m.search("fact 3", user_id="u", limit=1)
        committed = max(committed, max(int(t.split()[1]) for t in texts))
        m.close()


def test_eight_threads_overlapping_texts_one_scope(tmp_path):
    from conftest import TableEmbedder

    m = Memory(tmp_path / "c.db", embedder=TableEmbedder(dim=256))
    texts = [f"shared fact {i % 40}" for i in range(8 * 50)]
    results: list = []
    errors: list = []

    def worker(k: int) -> None:
        try:
            for j in range(50):
                results.extend(m.add(texts[(k * 13 + j) % len(texts)], user_id="team", source=f"w{k}"))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 8 * 50
    added = [r.text for r in results if r.event == "ADD"]
    assert len(added) == len(set(added)), "an identical text was added twice"
    counts = {e: sum(r.event == e for r in results) for e in ("ADD", "UPDATE", "NOOP", "DELETE")}
    st = m.stats(user_id="team")
    # the store's counters, rows and links agree with what the threads were told
    assert st["events"] == {e: n for e, n in counts.items() if n}
    assert st["active_memories"] == counts["ADD"] and st["rejections"] == counts["NOOP"]
    for r in results:
        if r.linked_to is not None:
            assert (r.linked_to, "near") in {(o, k) for o, k, _ in m.links(r.memory_id)}
    stored = {it.text for it in m.get_all(user_id="team")}
    rejected = {r.text for r in m.rejections(user_id="team")}
    assert stored | rejected == set(texts)
    m.close()


def test_two_processes_share_a_scope_through_the_revision_counter(tmp_path, table_embedder):
    a = Memory(tmp_path / "s.db", embedder=table_embedder)
    b = Memory(tmp_path / "s.db", embedder=table_embedder)
    (d,) = a.add("a fact", user_id="u")
    assert d.event == "ADD"
    (d2,) = b.add("a fact", user_id="u")  # b must see a's write, not its stale cache
    assert d2.event == "NOOP"
    b.add("another fact", user_id="u")
    assert {h.text for h in a.search("another fact", user_id="u", limit=2)} == {"another fact", "a fact"}
    assert len(a.get_all(user_id="u")) == 2
    a.close()
    b.close()


def test_nothing_goes_to_the_network_without_an_llm(tmp_path, embedder, monkeypatch):
    import socket

    attempts: list = []
    real_connect = socket.socket.connect

    def guarded_connect(self, address):
        attempts.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: attempts.append(a) or (_ for _ in ()).throw(
        OSError("network disabled in this test")))
    m = Memory(tmp_path / "n.db", embedder=embedder)
    m.add(["Ana likes tea.", "Ana likes tea!", "Ana lives in Lisbon."], user_id="ana")
    m.search("tea", user_id="ana", mode="hybrid")
    m.stats(user_id="ana")
    m.close()
    assert attempts == []


def test_a_second_writer_catches_up_incrementally(tmp_path, table_embedder):
    a = Memory(tmp_path / "s.db", embedder=table_embedder)
    b = Memory(tmp_path / "s.db", embedder=table_embedder)
    scope = Scope.of("u")
    first = [d.memory_id for d in a.add([f"fact {i}" for i in range(20)], user_id="u")]
    b.add("fact from b", user_id="u")
    gate_b = b.gates.peek(scope)
    # a adds, updates and deletes; b must apply just those rows, keeping its gate object
    a.add(["fact 20", "fact 21"], user_id="u")
    a.update(first[0], "fact zero, revised")
    a.delete(first[1])
    (d,) = b.add("fact 21", user_id="u")
    assert d.event == "NOOP" and b.gates.peek(scope) is gate_b
    fresh = Memory(tmp_path / "s.db", embedder=table_embedder)
    fresh.stats(user_id="u")
    gate_f = fresh.gates.peek(scope)
    assert sorted(gate_b.state.ids().tolist()) == sorted(gate_f.state.ids().tolist())
    assert gate_b.threshold.to_bytes() == gate_f.threshold.to_bytes()
    for seq in gate_f.state.ids().tolist():
        # bit-equal, NaN included (the first memory of a scope has no share)
        assert np.float64(gate_b.shares[seq]).tobytes() == np.float64(gate_f.shares[seq]).tobytes()
    q = table_embedder.embed(["fact zero, revised"])[0]
    assert b.search("fact zero, revised", user_id="u", limit=1)[0].text == "fact zero, revised"
    assert gate_b.nearest(q, 3)[0].tolist() == gate_f.nearest(q, 3)[0].tolist()
    for m in (a, b, fresh):
        m.close()


def test_searching_while_writing_the_same_scope(tmp_path, table_embedder):
    m = Memory(tmp_path / "rw.db", embedder=table_embedder)
    m.add([f"seed {i}" for i in range(50)], user_id="u")
    errors: list = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                m.search("seed 3", user_id="u", limit=5)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(200):
            m.add(f"new fact {i}", user_id="u")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert len(m.get_all(user_id="u")) + len(m.rejections(user_id="u")) == 250
    m.close()
