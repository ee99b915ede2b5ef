"""The gate cache (ScopeGates): bounded in bytes, evicts idle scopes LRU-first, and an
evicted scope comes back from the store exactly as it was."""

from __future__ import annotations

import resource

import numpy as np
import pytest

from memsieve import Memory, Scope
from memsieve.errors import ConfigError
from memsieve.gate.cache import gate_bytes

from conftest import TableEmbedder


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


@pytest.mark.slow
def test_touching_10000_scopes_stays_within_the_bound(tmp_path):
    bound = 2 * 2**20
    m = Memory(tmp_path / "many.db", embedder=TableEmbedder(dim=384), max_cache_bytes=bound)
    # warm up the store and the allocator before measuring
    for i in range(200):
        m.add(f"warm-up fact {i}", user_id=f"w{i}")
    rss0 = _rss_mib()
    peak = 0
    for i in range(10_000):
        m.add(f"fact of user {i}", user_id=f"user-{i}")
        peak = max(peak, m.gates.cached_bytes)
    grown = _rss_mib() - rss0
    assert peak <= bound, f"cache estimate peaked at {peak} bytes over a bound of {bound}"
    assert len(m.gates) < 1_000
    # 10,000 hydrated 384-d scopes cost well over 60 MiB when nothing is evicted
    assert grown < 40, f"the process grew by {grown:.1f} MiB"
    # an evicted scope is re-read from the store and still finds its memory
    assert m.gates.peek(Scope.of("user-0")) is None
    assert m.search("fact of user 0", user_id="user-0", limit=1)[0].text == "fact of user 0"
    m.close()


def test_an_evicted_scope_resumes_its_threshold_and_vectors(tmp_path):
    emb = TableEmbedder(dim=32)
    m = Memory(tmp_path / "e.db", embedder=emb, max_cache_bytes=0)
    m.add([f"a fact {i}" for i in range(30)], user_id="a")
    before = m.gates.peek(Scope.of("a"))
    state, ids = before.threshold_bytes(), sorted(before.state.ids().tolist())
    m.add("another scope", user_id="b")  # bound 0: only the scope in use stays cached
    assert m.gates.peek(Scope.of("a")) is None
    m.stats(user_id="a")  # re-read from the store
    after = m.gates.peek(Scope.of("a"))
    assert after is not before
    assert after.threshold_bytes() == state and sorted(after.state.ids().tolist()) == ids
    m.close()


def test_the_estimate_follows_the_scope_size(tmp_path):
    m = Memory(tmp_path / "s.db", embedder=TableEmbedder(dim=64))
    m.add("one", user_id="u")
    small = gate_bytes(m.gates.peek(Scope.of("u")))
    m.add([f"fact {i}" for i in range(100)], user_id="u")
    big = gate_bytes(m.gates.peek(Scope.of("u")))
    assert big - small >= 100 * 64 * 4
    assert m.gates.cached_bytes == big
    m.close()


@pytest.mark.parametrize("bad", [-1, True, 1.5, "10"])
def test_a_bad_cache_bound_is_refused(tmp_path, bad):
    with pytest.raises(ConfigError, match="max_cache_bytes"):
        Memory(tmp_path / "b.db", embedder=TableEmbedder(), max_cache_bytes=bad)


def test_a_scope_in_use_is_never_evicted(tmp_path):
    emb = TableEmbedder(dim=32)
    m = Memory(tmp_path / "u.db", embedder=emb, max_cache_bytes=0)
    decisions = m.add([f"fact {i}" for i in range(50)], user_id="u")
    assert all(d.event == "ADD" for d in decisions[:1])
    gate = m.gates.peek(Scope.of("u"))
    assert gate is not None and len(gate) == sum(d.event == "ADD" for d in decisions)
    q = np.asarray(emb.embed(["fact 7"])[0], dtype=np.float32)
    assert gate.nearest(q, 1)[1][0] == pytest.approx(1.0, abs=1e-5)
    m.close()


_HYDRATE = r"""
import gc, json, random, sys
sys.path.insert(0, sys.argv[2])
from conftest import TableEmbedder
from memsieve import GateConfig, Memory

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS"))

path, scopes = sys.argv[1], int(sys.argv[3])
if sys.argv[4] == "fill":
    rng = random.Random(7)
    words = ("river lantern Tuesday garden invoice Priya 42 ferry bicycle orchard March thirty cello "
             "Dr. Okafor printer 9:30 quarterly ticket harbour Lisbon recipe sourdough deadline "
             "paediatric insurance violin 2019 granite Kenji spreadsheet").split()
    with Memory(path, embedder=TableEmbedder(dim=384), gate=GateConfig(profile="none")) as m:
        for s in range(scopes):
            texts = []
            for j in range(250):
                n = rng.choice([6, 12, 25, 60, 140])
                body = " ".join(rng.choice(words) for _ in range(n))
                texts.append(f"Note {s}-{j}: " + ". ".join(body[i:i + 90] for i in range(0, len(body), 90)))
            m.add_many([{"text": t} for t in texts], user_id=f"s{s}")
else:
    with Memory(path, embedder=TableEmbedder(dim=384), gate=GateConfig()) as m:
        # Five scopes first, so that the bounded caches of text readings every process shares
        # (memsieve.text.cues.value_tokens) are full before the measure.
        for s in range(5):
            m.search("warm up", user_id=f"s{s}")
        gc.collect()
        r0, b0 = rss(), m.gates.cached_bytes
        for s in range(5, scopes):
            m.search("the orchard", user_id=f"s{s}")
        gc.collect()
        print(json.dumps({"grown": rss() - r0, "estimated": m.gates.cached_bytes - b0}))
"""


def test_the_estimate_is_what_hydrated_scopes_hold(tmp_path):
    # The cache's bound is only as good as its estimate: a fresh process hydrates scopes of
    # texts from a few words to a few hundred and grows by about what the estimate says.
    import json
    import subprocess
    import sys
    from pathlib import Path

    here = str(Path(__file__).parent)
    db = str(tmp_path / "h.db")
    run = [sys.executable, "-c", _HYDRATE, db, here, "12"]
    subprocess.run(run + ["fill"], check=True, capture_output=True)
    out = subprocess.run(run + ["read"], check=True, capture_output=True, text=True).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    ratio = seen["grown"] / seen["estimated"]
    assert seen["estimated"] > 7 * 250 * 384 * 4  # the vectors alone
    assert 0.6 <= ratio <= 1.6, seen


def test_the_gate_trace_keeps_the_latest_calls_and_is_counted(tmp_path, monkeypatch):
    import memsieve.gate.scope_gate as scope_gate

    monkeypatch.setattr(scope_gate, "TRACE_CALLS", 5)
    with Memory(tmp_path / "t.db", embedder=TableEmbedder(dim=16)) as m:
        for i in range(8):
            m.add(f"fact number {i} about the garden", user_id="ana")
        trace = m.gate_trace(user_id="ana")
        assert [row[0] for row in trace] == list(range(4, 9))  # memories after calls 4..8
        gate = m.gates.peek(Scope.of("ana"))
        held = gate_bytes(gate)
        gate.trace.clear()
        assert gate_bytes(gate) < held
