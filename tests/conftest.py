"""Shared fixtures: one real ONNX embedder per session, fresh stores per test.

Also the test tiers: a test that needs PostgreSQL gets the ``postgres`` and
``slow`` markers, one that needs the llama.cpp server ``llm`` and ``slow``
(see :func:`pytest_collection_modifyitems`), so ``pytest -m "not slow"``
runs the fast tier with neither server. Tests that take seconds on their own
carry ``@pytest.mark.slow`` by hand.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

# The suite's own cache folder (memsieve.resources.cache_root), removed when the run ends: no
# test writes into the user's ~/.cache/memsieve (a test model's refusal marker, a fused graph
# of another onnxruntime), and the packaged model is fused once a run (about 4 s). A folder
# given in MEMSIEVE_CACHE_DIR is used as it is.
if not os.environ.get("MEMSIEVE_CACHE_DIR"):
    import atexit
    import shutil
    import tempfile

    _RUN_CACHE = tempfile.mkdtemp(prefix="memsieve-test-cache-")
    os.environ["MEMSIEVE_CACHE_DIR"] = _RUN_CACHE
    atexit.register(shutil.rmtree, _RUN_CACHE, ignore_errors=True)

#: Where the data shared between the project's repositories lives: ../shared
#: beside the repository, or MEMSIEVE_SHARED.
SHARED_ROOT = Path(os.environ.get("MEMSIEVE_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")

#: Fixtures that start a real server, and the marker each gives its tests.
_SERVER_FIXTURES = {"pg_server": "postgres", "pg_url": "postgres", "llama_server": "llm"}


def shared_data(relative: str, *, what: str) -> Path:
    """The path of a file under the shared data root; skips the test when it is absent.

    Args:
        relative: the file's path under the root (``data/locomo/locomo_dev.json``).
        what: what the file is, for the skip message (``the LoCoMo dev split``).
    """
    path = SHARED_ROOT / relative
    if not path.is_file():
        pytest.skip(f"needs {what} at ../shared/{relative} (looked at {path}); put ../shared beside the "
                    "repository or point MEMSIEVE_SHARED at a copy")
    return path


def pytest_collection_modifyitems(config, items):
    """Mark every test that needs PostgreSQL or the LLM server as such, and slow."""
    for item in items:
        needs = {_SERVER_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in _SERVER_FIXTURES}
        # Store-parametrized fixtures (mem, target, kind, ...) ask for pg_url only
        # inside their body, so the parameter says it: a "postgres" param.
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(isinstance(v, str) and v == "postgres" for v in callspec.params.values()):
            needs.add("postgres")
        for marker in sorted(needs):
            item.add_marker(marker)
        if needs:
            item.add_marker("slow")


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


#: Unrelated memories a gate test writes before the pair it weighs, so that the scope has neighbours.
GATE_FILLER = [
    "I started a pottery class at the community centre.",
    "Our neighbours have a loud parrot.",
    "I prefer trains to planes for short trips.",
    "My laptop battery barely lasts two hours.",
    "We repainted the kitchen cabinets last spring.",
]


def fold_pair(tmp_path, table_embedder, first: str, later: str):
    """Write ``GATE_FILLER``, then ``first`` and ``later`` with vectors 0.9998 apart (the filler far from
    both), so that ``later`` reaches the NOOP route against ``first``.

    Returns:
        (the decision on ``first``, the decision on ``later``, the text of the memory ``later`` went to).
    """
    from memsieve import Memory

    table_embedder.table.update({first: unit(1, 0, 0), later: unit(1, 0.02, 0)})
    with Memory(tmp_path / "m.db", embedder=table_embedder) as m:
        m.add_many(GATE_FILLER, user_id="u")
        (a,) = m.add(first, user_id="u")
        (d,) = m.add(later, user_id="u")
        return a, d, m.get(d.memory_id).text if d.memory_id else None
