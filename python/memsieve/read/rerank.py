"""An optional second stage of search: a reranker rescoring the fused top-N.

No cross-encoder ships offline as a package, so memsieve has none of its own.
A user with a local model plugs one in through the ``Reranker`` protocol
(memsieve.parts): ``Memory(reranker=my_reranker)``. The search then asks it to rescore the first
``depth`` fused candidates and keeps the best ``limit`` by its scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memsieve.errors import ConfigError, MemsieveError
from memsieve.parts import Reranker

__all__ = ["DEFAULT_RERANK_DEPTH", "Reranker", "RerankerError", "check_reranker", "rerank_order"]

#: How many fused candidates a reranker sees by default: deep enough to lift a
#: memory the first stage ranked low, shallow enough for a cross-encoder.
DEFAULT_RERANK_DEPTH = 50


class RerankerError(MemsieveError):
    """The configured reranker failed or returned scores of the wrong shape."""


def check_reranker(reranker: object) -> Reranker | None:
    """The reranker as given, or None; anything without ``rerank`` is refused."""
    if reranker is None:
        return None
    if not isinstance(reranker, Reranker):
        raise ConfigError(f"reranker must have a rerank(query, texts) -> scores method, "
                          f"got {type(reranker).__name__}")
    return reranker


def rerank_order(reranker: Reranker, query: str, texts: Sequence[str]) -> list[tuple[int, float]]:
    """(position in ``texts``, score) ordered by the reranker's score, ties kept in first-stage order.

    Raises:
        RerankerError: the reranker raised, or did not return one finite number per text.
    """
    if not texts:
        return []
    try:
        raw = list(reranker.rerank(query, list(texts)))
    except MemsieveError:
        raise
    except Exception as exc:  # a user's model may raise anything
        raise RerankerError(f"the reranker {type(reranker).__name__} failed: {exc}") from exc
    if len(raw) != len(texts):
        raise RerankerError(f"the reranker returned {len(raw)} scores for {len(texts)} texts; "
                            "return one score per text")
    scores = []
    for i, value in enumerate(raw):
        try:
            score = float(value)
        except (TypeError, ValueError) as exc:
            raise RerankerError(f"the reranker's score {i} is {value!r}, not a number") from exc
        if not math.isfinite(score):
            raise RerankerError(f"the reranker's score {i} is {score}; return finite scores")
        scores.append(score)
    return sorted(enumerate(scores), key=lambda p: (-p[1], p[0]))
