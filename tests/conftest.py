"""Shared fixtures: one real ONNX embedder per session, fresh stores per test."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def embedder():
    """The real default embedder (int8 MiniLM through ONNX Runtime), loaded once."""
    from memsieve.embedding import CachedEmbedder, default_embedder

    return CachedEmbedder(default_embedder())


@pytest.fixture(scope="session")
def llama_server():
    """One real llama.cpp server (SmolLM2-135M) for the session; a start failure fails the tests."""
    from llm_server import LlamaServer, LlamaServerError

    try:
        server = LlamaServer(startup_timeout=60.0).start()
    except LlamaServerError as exc:
        pytest.fail(f"could not start the real llama.cpp server: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL for the session; a start failure fails the tests (never skips)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on import
        from pg_server import PgServer, PgServerError

        try:
            server = PgServer().start()
        except PgServerError as exc:
            pytest.fail(f"could not start the real PostgreSQL server: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture()
def pg_url(pg_server):
    """A fresh, empty schema on the session's server (first on the URL's search_path), so tests never meet."""
    return pg_server.create_schema()


@pytest.fixture(params=["sqlite", "postgres"])
def mem(request, tmp_path, embedder):
    """A fresh Memory with the real embedder, on each store in turn."""
    from memsieve import Memory

    target = tmp_path / "mem.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    m = Memory(target, embedder=embedder)
    yield m
    m.close()


class TableEmbedder:
    """A custom embedder whose vectors the test chooses: text -> (d,) vector.

    Unknown texts get a seeded random unit vector, so they are far from
    everything in high dimension.
    """

    name = "table"

    def __init__(self, dim: int = 32, table: dict[str, np.ndarray] | None = None) -> None:
        self.dim = dim
        self.table = dict(table or {})
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = []
        for t in texts:
            if t not in self.table:
                rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
                v = rng.standard_normal(self.dim)
                self.table[t] = v / np.linalg.norm(v)
            out.append(self.table[t])
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


def unit(*coords: float, dim: int = 32) -> np.ndarray:
    v = np.zeros(dim)
    v[: len(coords)] = coords
    return v / np.linalg.norm(v)


@pytest.fixture()
def table_embedder():
    return TableEmbedder()
