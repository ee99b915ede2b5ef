"""The SQLite WAL checkpoints on a background thread: off the write path, and
losing nothing a returned add() committed when the process is killed mid-way."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from memsieve import GateConfig, Memory
from memsieve.store.sqlite_checkpoint import ROWS_PER_CHECKPOINT

from conftest import TableEmbedder

WRITER = textwrap.dedent("""
    import sys
    from memsieve import GateConfig, Memory
    from conftest import TableEmbedder
    m = Memory(sys.argv[1], embedder=TableEmbedder(), gate=GateConfig(profile="none"))
    for i in range(100000):
        m.add(f"fact number {i}", user_id="u", source=f"s{i}")
        print(i, m.store.background_checkpoints, flush=True)
""")


def _wal_frames(path: Path) -> tuple[int, int]:
    """(frames in the WAL, frames already copied into the file), read by a connection of its own."""
    conn = sqlite3.connect(path)
    try:
        _, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(frames), int(copied)
    finally:
        conn.close()


def test_writes_are_checkpointed_by_the_background_thread(tmp_path):
    db = tmp_path / "c.db"
    m = Memory(db, embedder=TableEmbedder(), gate=GateConfig(profile="none"))
    assert m.store._q("PRAGMA wal_autocheckpoint").fetchone()[0] > 1000  # SQLite's own is only the backstop
    size_at_open = db.stat().st_size
    adds = 0
    deadline = time.monotonic() + 60
    while m.store.background_checkpoints < 2 and time.monotonic() < deadline:
        m.add(f"fact number {adds}", user_id="u")
        adds += 1
    assert m.store.background_checkpoints >= 2, "no background checkpoint ran within 60 s"
    # Only a checkpoint writes pages into the file (the writer's own backstop is
    # thousands of pages away): the background one did.
    assert db.stat().st_size > size_at_open
    m.close()
    # Closed, the writer was the last connection: SQLite folded the WAL into the file and removed it.
    assert not Path(str(db) + "-wal").exists()
    again = Memory(db, embedder=TableEmbedder(), gate=GateConfig(profile="none"))
    assert len(again.get_all(user_id="u", limit=10_000)) == adds
    again.close()


def test_a_purge_still_truncates_the_wal_while_checkpoints_run_in_the_background(tmp_path):
    db = tmp_path / "p.db"
    m = Memory(db, embedder=TableEmbedder(), gate=GateConfig(profile="none"))
    for i in range(3 * ROWS_PER_CHECKPOINT // 6):
        m.add(f"fact number {i}", user_id="u")
    m.add("my secret door code is xylophone-4711", user_id="u")
    deadline = time.monotonic() + 60
    while m.store.background_checkpoints < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert m.store.background_checkpoints >= 1
    removed = m.forget("my secret door code is xylophone-4711", user_id="u", purge=True)
    assert [r.text for r in removed] != [] and m.store.checkpoint()
    assert _wal_frames(db) == (0, 0)  # TRUNCATE left an empty WAL
    m.close()
    # Not "4711" alone: random uuids and vectors in the file hold any four hex digits by chance.
    assert b"xylophone" not in db.read_bytes()


def test_sigkill_while_checkpoints_run_loses_no_committed_add(tmp_path):
    db = tmp_path / "k.db"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    proc = subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE, text=True, env=env)
    committed, runs = -1, 0
    deadline = time.monotonic() + 120
    # Kill it mid-stream, once a few background checkpoints have copied pages into the file.
    while runs < 3 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        committed, runs = (int(x) for x in line.split())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert runs >= 3 and committed > 0, f"the writer stopped early (last line: {committed}, {runs})"
    m = Memory(db, embedder=TableEmbedder(), gate=GateConfig(profile="none"))
    assert m.store.integrity_ok()
    texts = {it.text for it in m.get_all(user_id="u", limit=100_000)}
    missing = [i for i in range(committed + 1) if f"fact number {i}" not in texts]
    assert missing == []
    st = m.stats(user_id="u")
    assert st["events"].get("ADD", 0) == st["active_memories"] == len(texts)
    m.close()
