"""Helpers of the hostile-input tests: a fast embedder that accepts any str, and a snapshot of a database."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np


class HashEmbedder:
    """A deterministic embedder: the SHA-256 of a text seeds its unit vector.

    Unlike a real tokenizer it accepts every str, lone surrogates included
    (``surrogatepass``), so a test sees what memsieve itself does with such
    text instead of an embedder failure.
    """

    name = "hash"

    def __init__(self, dim: int = 16) -> None:
        self.dim = dim
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def snapshot(path: Path | str) -> dict[str, list[tuple]]:
    """Every row of every table of the SQLite file or PostgreSQL schema at ``path``, read through a
    separate connection.

    Two snapshots are equal exactly when no committed change happened between them.
    """
    if str(path).startswith("postgresql://"):
        return _snapshot_pg(str(path))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


def _snapshot_pg(url: str) -> dict[str, list[tuple]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            " ORDER BY table_name")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
