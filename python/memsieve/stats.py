"""``Memory.stats``: what one scope holds and how its gate stands, as one dict."""

from __future__ import annotations

from typing import Any

from memsieve.gate.config import GateConfig
from memsieve.scope import Scope


def embedder_info(embedder: Any) -> dict[str, Any] | None:
    """Name, width, the ONNX provider that actually ran and whether its fused graph runs (both None
    until the embedder is loaded)."""
    if embedder is None:
        return None
    inner = getattr(embedder, "inner", embedder)
    # The provider that ran, if a session exists: reading ``.provider`` would load the model.
    provider = getattr(inner, "loaded_provider", None)
    fused = bool(inner.fused) if provider is not None and hasattr(inner, "fused") else None
    return {"name": getattr(embedder, "name", type(embedder).__name__), "dim": int(embedder.dim),
            "provider": provider, "fused": fused}


def scope_stats(store: Any, gate: Any, config: GateConfig, scope: Scope, *, embedder: Any,
                llm: Any) -> dict[str, Any]:
    """Counts per event and layer, store size, and the gate's current tau and kappa.

    Args:
        store: the store.
        gate: the scope's ScopeGate, or None when the scope holds nothing.
        config: the gate configuration.
        embedder: the loaded embedder, or None.
        llm: the loaded LLM client, or None.
    """
    events: dict[str, int] = {}
    layers: dict[str, int] = {}
    for event, layer, n in store.counters(scope):
        events[event] = events.get(event, 0) + n
        layers[layer] = layers.get(layer, 0) + n
    return {
        "scope": scope.as_dict(),
        "events": events,
        "layers": layers,
        "active_memories": store.count_active(scope),
        "rejections": store.count_rejections(scope),
        "store_bytes": store.size_bytes(),
        "profile": config.profile,
        "tau": gate.current_tau() if gate else None,
        "delta": config.delta,
        "kappa": gate.current_kappa() if gate else None,
        "embedder": embedder_info(embedder),
        "llm": llm.usage_dict() if llm is not None and hasattr(llm, "usage_dict") else
        {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "faults": 0},
    }
