"""Text embedding for memsieve: the embedder protocol, output validation, the
default ONNX embedder (int8 all-MiniLM-L6-v2, 384-d) and a caching wrapper.

Example:
    >>> from memsieve.embedding import default_embedder
    >>> vectors = default_embedder().embed(["I moved to Lisbon in May."])
    >>> vectors.shape, vectors.dtype
    ((1, 384), dtype('float32'))
"""

from __future__ import annotations

from typing import Any

from memsieve.embedding.cache import CachedEmbedder
from memsieve.embedding.onnx import (
    DEFAULT_DIM,
    DEFAULT_NAME,
    OnnxEmbedder,
    packaged_model_path,
    packaged_tokenizer_path,
    pool,
)
from memsieve.embedding.protocol import Embedder, check_texts, validate_embeddings


def default_embedder(**options: Any) -> OnnxEmbedder:
    """Return a new default embedder: int8 all-MiniLM-L6-v2, mean pooling, L2.

    Args:
        **options: Keyword options of :class:`OnnxEmbedder` to override, e.g.
            ``device="cpu"`` or ``batch_size=64``.

    Returns:
        An :class:`OnnxEmbedder`; its model loads on the first ``embed``.
    """
    return OnnxEmbedder(**options)


def safe_across_threads(embedder: Any) -> bool:
    """Whether two threads may call ``embedder.embed`` at once and get what each would alone.

    True for memsieve's own ONNX embedder (its session's ``run`` is safe to call from several
    threads, and its loading is locked) unless a subclass overrides ``embed``, and for a
    :class:`CachedEmbedder` around one. Any other embedder is assumed not to be: a caller's
    model may hold state between calls, so the writes call it one call at a time.
    """
    if isinstance(embedder, CachedEmbedder):
        return type(embedder).embed is CachedEmbedder.embed and safe_across_threads(embedder.inner)
    return isinstance(embedder, OnnxEmbedder) and type(embedder).embed is OnnxEmbedder.embed


__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_NAME",
    "CachedEmbedder",
    "Embedder",
    "OnnxEmbedder",
    "check_texts",
    "default_embedder",
    "packaged_model_path",
    "packaged_tokenizer_path",
    "pool",
    "safe_across_threads",
    "validate_embeddings",
]
