"""Copying the SQLite WAL into the database file on a thread of its own.

A WAL checkpoint copies the committed pages into the database file and, under
``synchronous=NORMAL``, fsyncs the WAL before and the file after. SQLite runs
one inside whichever ``COMMIT`` pushes the WAL past 1000 pages: on the 2-vCPU
VM that was one ``add()`` in ~65 paying two fsyncs of ~3.6 ms each, 120 of
the 240 us an ``add()``'s COMMIT cost on average (benches/RESULTS.md, "Write
path"). Here the same checkpoint runs on a second connection in a background
thread, as often as before, while the writer goes on.

What a commit survives does not change: a commit is in the WAL when
``COMMIT`` returns, whoever checkpoints it later, and the checkpoint fsyncs
as often as SQLite's own would (a power loss under ``"normal"`` can still
undo the commits since the last one, as documented in
memsieve.store.base.DURABILITY). The writer's connection keeps SQLite's own
checkpointing as a backstop, at a higher mark, should this thread fall behind.
"""

from __future__ import annotations

import os
import sqlite3
import threading

#: Rows a writer changes between two background checkpoints. An ``add()``
#: changes ~6 rows in ~15 pages, so this is ~650 pages, below SQLite's own
#: 1000-page mark: the WAL grows no larger than it did.
ROWS_PER_CHECKPOINT = 256

#: The writer's own automatic checkpoint, left as a backstop (pages).
BACKSTOP_PAGES = 8192


class Checkpointer:
    """Runs ``PRAGMA wal_checkpoint(PASSIVE)`` on a background connection when asked.

    A passive checkpoint never blocks the writer nor waits for readers; one
    that meets a busy file copies what it can and the next one does the rest.

    Args:
        path: the database file (in WAL mode).
        timeout: seconds the background connection waits for a lock.
    """

    def __init__(self, path: str, *, timeout: float) -> None:
        self._path = path
        self._timeout = timeout
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._changes_at_last = 0
        #: Held while a checkpoint runs: a TRUNCATE checkpoint of the store
        #: (after a purge) takes it so the two never meet as SQLITE_BUSY.
        self.lock = threading.Lock()
        self.runs = 0

    def committed(self, total_changes: int) -> None:
        """After a commit: wake the thread once enough rows changed since the last checkpoint.

        Args:
            total_changes: the writer connection's ``total_changes``.
        """
        if total_changes - self._changes_at_last < ROWS_PER_CHECKPOINT or self._pid != os.getpid():
            return
        self._changes_at_last = total_changes
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="memsieve-checkpoint", daemon=True)
            self._thread.start()
        self._wake.set()

    def _loop(self) -> None:
        conn = None
        try:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False,
                                   timeout=self._timeout)
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stop:
                    return
                with self.lock:
                    try:
                        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                        self.runs += 1
                    except sqlite3.Error:
                        # Busy or failed: the next wake retries, and the
                        # writer's backstop bounds the WAL meanwhile.
                        pass
        except sqlite3.Error:
            return  # the backstop checkpoints instead
        finally:
            if conn is not None:
                conn.close()

    def close(self) -> None:
        """Stop the thread and close its connection (before the writer's, which then removes the WAL)."""
        thread, self._thread = self._thread, None
        if thread is None or self._pid != os.getpid():
            return
        self._stop = True
        self._wake.set()
        thread.join()
