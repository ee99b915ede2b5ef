"""The gate's profiles are classes chosen once from GateConfig.profile through a registry.

Each built-in name routes to its class, ``kde`` and its older name
``memsieve`` decide identically, a registered profile is used by Memory, an
unknown name is a ConfigError naming the known ones, and SAGE's EMA threshold
keeps the scope row's format (Rust bytes in gate_state, the EMA in sage_tau).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from memsieve import _core, ConfigError, GateConfig, Memory, Scope
from memsieve.gate.profiles import (GateProfile, KernelDensityGate, MaxCosineGate, SageGate, ScopeView,
                                    StoreEverythingGate, profile_class, profile_names, register_profile)
from memsieve.gate.scope_gate import ScopeGate, new_threshold
from memsieve.gate.threshold import SageThreshold

from conftest import TableEmbedder, unit

D = 16
BUILT_IN = {"kde": KernelDensityGate, "memsieve": KernelDensityGate, "sage": SageGate, "maxcos": MaxCosineGate,
            "none": StoreEverythingGate}


def _config(profile: str, **kw) -> GateConfig:
    return GateConfig(profile=profile, tau=0.25 if profile == "maxcos" else None, **kw)


def _gate(config: GateConfig, *, sage_tau: float | None = None) -> ScopeGate:
    return ScopeGate(config, D, threshold=new_threshold(config), sage_tau=sage_tau, revision=0)


def _bits(x: object) -> object:
    """A float as its exact bits (nan equals nan), anything else as is."""
    return np.float64(x).tobytes() if isinstance(x, float) else x


@pytest.mark.parametrize("name, cls", sorted(BUILT_IN.items()))
def test_every_profile_name_routes_to_its_class(name, cls):
    config = _config(name)
    assert profile_class(name) is cls and name in profile_names()
    assert type(config.gate_profile()) is cls and type(_gate(config).profile) is cls


def test_an_unknown_profile_is_a_config_error_naming_the_known_ones():
    with pytest.raises(ConfigError) as err:
        GateConfig(profile="kernel")
    message = str(err.value)
    assert message.startswith("unknown gate profile 'kernel'; use one of ")
    assert all(name in message for name in profile_names()) and set(BUILT_IN) <= set(profile_names())
    with pytest.raises(ConfigError, match="unknown gate profile"):
        GateConfig(profile=["kde"])  # unhashable: still a ConfigError, not a TypeError


def test_a_profile_that_needs_a_fixed_tau_says_so():
    with pytest.raises(ConfigError, match=r"the maxcos profile needs a fixed threshold; pass tau=0.25"):
        GateConfig(profile="maxcos")


def test_register_profile_refuses_what_is_not_a_profile():
    with pytest.raises(ConfigError, match="must be a GateProfile subclass"):
        register_profile("dict", dict)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="non-empty string"):
        register_profile("", KernelDensityGate)


class HalfCosineGate(GateProfile):
    """A profile of a test's own: 1 - max cosine against tau 0.5 always, counting its per-call steps."""

    calls = 0

    def current_tau(self, gate: ScopeView) -> float:
        return 0.5

    def begin_call(self, gate: ScopeView) -> None:
        HalfCosineGate.calls += 1

    def scan(self, state, vector, kappa):
        return state.score_maxcos(vector, k=self.scoring.k)

    def novelty_of_topk(self, cos, kappa):
        return 1.0 - float(cos[0])


def test_a_registered_profile_is_used_by_memory(tmp_path):
    register_profile("test-half-cosine", HalfCosineGate)
    stored, close = "Ana keeps bees.", "Ana keeps two hives of bees."
    emb = TableEmbedder(table={stored: unit(1, 0), close: unit(0.7, math.sqrt(1 - 0.49))})
    m = Memory(tmp_path / "half.db", embedder=emb, gate=GateConfig(profile="test-half-cosine"))
    before = HalfCosineGate.calls
    (first,) = m.add(stored, user_id="ana")
    (second,) = m.add(close, user_id="ana")
    # novelty 0.3 under tau 0.5: a NOOP folded into the first memory; the kde default would read its own tau.
    assert (first.event, second.event) == ("ADD", "NOOP") and second.memory_id == first.memory_id
    assert second.tau == 0.5 and second.novelty == pytest.approx(0.3, abs=1e-5)
    assert HalfCosineGate.calls == before + 2
    assert isinstance(m.gates.peek(Scope.of("ana")).profile, HalfCosineGate)
    m.close()


def _texts_and_table(seed: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """Near-paraphrases, new details, numbers and change cues around one topic: every route is met."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(32)
    texts = ["Ana keeps bees in the garden.", "Ana keeps bees.", "Ana keeps 3 hives of bees in the garden.",
             "Ana no longer keeps bees.", "Ana's bees live in the garden now.", "Bees are kept by Ana.",
             "Ana moved her 4 hives to Porto.", "Ana keeps bees in the garden.", "Ana sold the bees in May."]
    table = {t: base + rng.normal(scale=0.25 + 0.1 * (i % 3), size=32) for i, t in enumerate(texts)}
    return texts, table


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kde_and_memsieve_decide_identically(tmp_path, seed):
    texts, table = _texts_and_table(seed)
    runs = []
    for name in ("memsieve", "kde"):
        m = Memory(tmp_path / f"{name}.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile=name))
        decisions = [d for t in texts for d in m.add(t, user_id="ana")]
        runs.append([tuple(_bits(getattr(d, f)) for f in ("event", "layer", "novelty", "tau", "delta", "kappa",
                                                           "nearest_cos", "information", "new_terms", "reason"))
                     for d in decisions])
        m.close()
    assert runs[0] == runs[1]
    assert len({row[0:2] for row in runs[0]}) >= 2  # more than one route was met


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 12), spread=st.floats(0.05, 1.5))
def test_kde_and_memsieve_score_identically_on_any_scope(seed, n, spread):
    rng = np.random.default_rng(seed)
    words = ["bees", "garden", "Porto", "hives", "3", "no longer", "moved", "Ana", "May", "keeps"]
    base = rng.standard_normal(D)
    gates = [_gate(GateConfig(profile=name)) for name in ("memsieve", "kde")]
    for i in range(n + 1):
        v = base + rng.normal(scale=spread, size=D)
        v = np.ascontiguousarray(v / np.linalg.norm(v), dtype=np.float32)
        text = " ".join(rng.choice(words, size=int(rng.integers(1, 6))))
        scores = [g.score(v, text) for g in gates]
        assert [tuple(map(_bits, vars(s).values())) for s in scores] == [tuple(map(_bits, vars(scores[0]).values()))] * 2
        for g, s in zip(gates, scores):
            if s.route != "NOOP":
                g.add(i, v, ScopeGate.share(s), text)
            else:
                g.record_refusal(s)
    assert gates[0].threshold_bytes() == gates[1].threshold_bytes()


def test_sage_keeps_its_ema_in_the_sage_tau_column_and_the_shares_in_the_rust_bytes():
    config = GateConfig(profile="sage")
    g = _gate(config)
    assert isinstance(g.threshold, SageThreshold) and g.sage_tau is None
    assert g.current_tau() == config.sage_tau0 + config.sage_tau_min  # before the first step
    rows = np.random.default_rng(5).standard_normal((6, D)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    counts = new_threshold(config)
    for seq, row in enumerate(rows):
        g.begin_call()
        s = g.score(row, f"note {seq}")
        g.add(seq, row, ScopeGate.share(s), f"note {seq}")
        counts.on_add(ScopeGate.share(s))
    assert g.sage_tau is not None and g.current_tau() == g.sage_tau
    assert g.threshold_bytes() == counts.to_bytes()  # the same 85 bytes a Rust threshold stores
    # Reopened from its two columns, the gate reads the same tau and the same bytes.
    again = ScopeGate(config, D, threshold=_core.ThresholdState.from_bytes(g.threshold_bytes()),
                      sage_tau=g.sage_tau, revision=1)
    assert again.current_tau() == g.current_tau() and again.threshold_bytes() == g.threshold_bytes()


@pytest.mark.parametrize("name", ["kde", "maxcos", "none"])
def test_a_profile_without_an_ema_saves_the_rows_sage_tau_back_unchanged(name):
    g = _gate(_config(name), sage_tau=0.1234)
    g.begin_call()
    assert g.sage_tau == 0.1234 and g.threshold is not None and not isinstance(g.threshold, SageThreshold)


def test_a_sage_scope_resumes_its_threshold_after_reopening(tmp_path):
    rng = np.random.default_rng(7)
    table = {f"note {i}": rng.standard_normal(32) for i in range(8)}
    path = tmp_path / "sage.db"
    m = Memory(path, embedder=TableEmbedder(table=table), gate=GateConfig(profile="sage"))
    for i in range(6):
        m.add(f"note {i}", user_id="s")
    tau = m.stats(user_id="s")["tau"]
    m.close()
    m = Memory(path, embedder=TableEmbedder(table=table), gate=GateConfig(profile="sage"))
    assert m.stats(user_id="s")["tau"] == tau and tau != pytest.approx(0.55)
    m.close()
