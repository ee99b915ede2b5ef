"""The pluggable parts of a ``Memory``: what each must provide, as Protocols.

``Memory(embedder=..., llm=..., router=..., reranker=...)`` takes any object
with the methods below; these Protocols say which, for type checkers and
readers. Runtime checks stay where they were (memsieve.inputs.check_embedder,
check_router, memsieve.read.rerank.check_reranker; an ``LLMConfig`` is checked
by ``LLMClient``), so a part is accepted or refused exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from memsieve.errors import ConfigError

if TYPE_CHECKING:
    from memsieve.embedding.protocol import Embedder
    from memsieve.llm.client import Completion, LLMConfig

__all__ = ["LLM", "Embedder", "Reranker", "RouteChoice", "Router", "is_llm_client"]


@runtime_checkable
class LLM(Protocol):
    """What the write path asks of an LLM client (``memsieve.llm.LLMClient`` is one).

    Fact extraction (``add(infer=True)``) calls ``extract_facts``; the band's
    CRUD step and requests to forget call ``complete`` with prompts written
    in ``config.prompt_style``; ``Memory.stats`` reads ``usage_dict`` when the
    client has one.
    """

    @property
    def config(self) -> LLMConfig: ...

    def complete(self, messages: list[dict[str, Any]], *, schema: dict[str, Any] | None,
                 name: str) -> Completion:
        """One chat request whose reply is parsed as a JSON object."""
        ...

    def extract_facts(self, text: str) -> list[str]:
        """The facts worth remembering in ``text``, in the model's order."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """What ``Memory(reranker=...)`` asks of a second stage (memsieve.read.rerank).

    A cross-encoder or any local model: it rescores the first-stage candidates
    of one query, and the search keeps the best by its scores.
    """

    def rerank(self, query: str, texts: Sequence[str]) -> Sequence[float]:
        """One finite score per text, in the order given."""
        ...


class RouteChoice(Protocol):
    """A router's answer for one query (``memsieve.router.RouteDecision`` is one)."""

    @property
    def backend(self) -> str:
        """The search mode to use: "dense", "keyword" or "hybrid"."""
        ...


@runtime_checkable
class Router(Protocol):
    """What ``search(mode="auto")`` asks of a router (``memsieve.router.QueryRouter`` is one).

    Named by its answer's shape, not its class: memsieve.router builds on
    ``Memory``, so naming its classes here would tie the two in a circle.
    """

    def decide(self, query: str, vector: np.ndarray) -> RouteChoice:
        """The backend for this query (an (d,) float32 unit vector is its embedding)."""
        ...


def is_llm_client(llm: object) -> bool:
    """Whether ``llm`` is a ready client (used as is) rather than a config to build one from."""
    return callable(getattr(llm, "extract_facts", None)) and callable(getattr(llm, "complete", None))


def check_llm(llm: Any) -> Any:
    """``llm`` if it is None, an ``LLMConfig`` or a ready client (``memsieve.parts.LLM``).

    Raises:
        ConfigError: anything else, refused when the Memory is built rather than at the
            first write that asks for it.
    """
    if llm is None or is_llm_client(llm):
        return llm
    from memsieve.llm import LLMConfig

    if not isinstance(llm, LLMConfig):
        raise ConfigError(f"llm must be an LLMConfig or a client with extract_facts() and complete() "
                          f"(memsieve.parts.LLM), got {type(llm).__name__} {llm!r:.60}; "
                          "pass llm=LLMConfig(base_url=..., model=...) or leave it None")
    return llm


def merging_llm(llm: Any) -> Any:
    """The LLM ``consolidate(llm=...)`` writes merged texts with: None, a client with
    ``complete_json`` as is, or a client built from an ``LLMConfig``.

    Raises:
        ConfigError: anything else.
    """
    if llm is None or hasattr(llm, "complete_json"):
        return llm
    from memsieve.llm import LLMClient, LLMConfig

    if not isinstance(llm, LLMConfig):
        raise ConfigError(f"llm must be an LLMConfig or LLMClient, got {type(llm).__name__}")
    return LLMClient(llm)


def __getattr__(name: str) -> Any:
    # The embedding package loads onnxruntime's helpers; the Protocol is read
    # from it only when asked for, so importing memsieve loads no embedder.
    if name == "Embedder":
        from memsieve.embedding.protocol import Embedder

        return Embedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
