"""One owner for a scope's threshold: ScopeGate holds it, with one set of defaults.

The Rust ScopeState is a pure vector index; the ThresholdState and each
memory's share live in python/memsieve/gate/scope_gate.py, and GateConfig is the only
source of the threshold's parameters. Bytes stored by earlier versions load.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import memsieve
from memsieve import _core
from memsieve.gate.config import GateConfig
from memsieve.gate.scope_gate import GateScore, ScopeGate, new_threshold

D = 8

# ThresholdState.to_bytes() of memsieve 0.1.0, written before nn_cos was renamed
# share, with the values they held (rust/gate/threshold.rs keeps the same fixtures).
STORED = [
    # gamma 0.5, tau 0.05..0.5, kappa_c 4, prior 0.5 x 8; nothing recorded.
    ("4d53545301000000000000e03f9a9999999999a93f000000000000e03f0000000000001040000000000000e03f"
     "000000000000204000000000000000000000000000000000000000000000000033b00260adb22980",
     0, 0.5, 8.0, 0.25),
    # gamma 0.62; on_add 0.3, 0.71, -0.25, 0.123456789, 1.0, nan, 0.9, then on_remove 0.71.
    ("4d53545301d7a3703d0ad7e33f9a9999999999a93f000000000000e03f0000000000001040000000000000e03f"
     "000000000000204005000000000000006c6a10ce120200000000000000000000ab3fd83eb9093421",
     5, 0.4671889837691896, 7.5073522846742815, 0.33034283006310244),
    # gamma 0.7, tau 0.02..0.4, kappa_c 3, prior 0.3 x 5; 1000 values spread over [-1, 1].
    ("4d53545301666666666666e63f7b14ae47e17a943f9a9999999999d93f0000000000000840333333333333d33f"
     "0000000000001440e8030000000000001e85eb51380400000000000000000000bb437218108b6b24",
     1000, 0.005691542288556562, 3.017172364102152, 0.4),
]


def unit_rows(n: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, D))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


def gate(config: GateConfig | None = None) -> ScopeGate:
    config = config or GateConfig()
    return ScopeGate(config, D, threshold=new_threshold(config), sage_tau=None, revision=0)


@pytest.mark.parametrize("hexed, count, mean, kappa, tau", STORED)
def test_bytes_of_stored_databases_still_load(hexed: str, count: int, mean: float, kappa: float, tau: float) -> None:
    data = bytes.fromhex(hexed)
    t = _core.ThresholdState.from_bytes(data)
    assert (t.count, t.mean_share, t.kappa, t.tau) == (count, mean, kappa, tau)
    assert t.to_bytes() == data
    g = ScopeGate(GateConfig(), D, threshold=t, sage_tau=None, revision=3)
    assert g.current_tau() == tau and g.current_kappa() == kappa and g.threshold_bytes() == data


def test_the_core_has_no_threshold_defaults() -> None:
    with pytest.raises(TypeError, match="gamma"):
        _core.ThresholdState()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _core.ThresholdState(gamma=0.62)  # type: ignore[call-arg]


def test_a_fresh_threshold_takes_every_parameter_from_gate_config() -> None:
    for config in (GateConfig(), GateConfig(gamma=0.7, tau_min=0.01, tau_max=0.45, kappa_c=3.0, prior_share=0.2,
                                             prior_weight=2.0)):
        t = new_threshold(config)
        names = ("gamma", "tau_min", "tau_max", "kappa_c", "prior_share", "prior_weight")
        assert t.params == {n: getattr(config, n) for n in names}
        assert t.count == 0 and t.mean_share == config.prior_share
        assert t.tau == min(max(config.gamma * (1 - config.prior_share), config.tau_min), config.tau_max)
        assert gate(config).current_tau() == t.tau


def test_scope_state_is_a_pure_vector_index() -> None:
    s = _core.ScopeState(D)
    for gone in ("threshold", "to_bytes"):
        assert not hasattr(s, gone), gone
    m = unit_rows(3)
    with pytest.raises(TypeError):
        s.add(1, m[0], nn_cos=0.3)  # type: ignore[call-arg]
    s.add(1, m[0])
    assert s.remove(1) is None and len(s) == 0
    with pytest.raises(TypeError):
        s.score(m[0])  # type: ignore[call-arg]  # kappa comes from the gate's threshold


def test_the_gate_alone_keeps_shares_and_undoes_them_exactly() -> None:
    g = gate()
    m = unit_rows(4, seed=1)
    empty = g.threshold_bytes()
    g.add(1, m[0], math.nan, "first")  # the first memory of a scope has no share
    g.add(2, m[1], 0.25, "second")
    g.add(3, m[2], 0.75, "third")
    assert g.shares == {1: g.shares[1], 2: 0.25, 3: 0.75} and math.isnan(g.shares[1])
    t = _core.ThresholdState.from_bytes(g.threshold_bytes())
    assert t.count == 2 and t.mean_share == (0.25 + 0.75 + 0.5 * 8) / 10
    g.replace(2, m[3], "second, revised")  # a new text keeps the memory's share
    assert g.shares[2] == 0.25 and _core.ThresholdState.from_bytes(g.threshold_bytes()).count == 2
    for seq in (3, 2, 1):
        g.remove(seq)
    assert g.threshold_bytes() == empty and g.shares == {} and len(g) == 0


def test_a_refusal_counts_its_share_but_keeps_no_memory() -> None:
    g = gate()
    score = GateScore(novelty=0.1, tau=0.3, delta=0.05, kappa=8.0, nearest_seq=None, nearest_cos=0.9, route="NOOP")
    g.record_refusal(score)
    t = _core.ThresholdState.from_bytes(g.threshold_bytes())
    # (fixed-point sums: exact to 2^-40)
    assert t.count == 1 and t.mean_share == pytest.approx((0.9 + 0.5 * 8) / 9, abs=1e-12)
    assert len(g) == 0 and g.shares == {}
    g.record_refusal(dataclasses.replace(score, novelty=math.inf))  # nothing to learn from an empty scope
    assert _core.ThresholdState.from_bytes(g.threshold_bytes()).count == 1


@pytest.mark.parametrize("field, value", [("gamma", True), ("k", True), ("gamma", "0.6"), ("prior_share", None),
                                          ("delta", [0.05]), ("prior_share", 1.0)])
def test_gate_config_refuses_what_is_not_a_number(field: str, value: object) -> None:
    with pytest.raises(memsieve.ConfigError, match=field):
        GateConfig(**{field: value})  # type: ignore[arg-type]
