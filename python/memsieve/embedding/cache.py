"""An in-memory cache in front of any embedder, so each distinct text is
embedded once (the evaluation runs many gate arms over the same turns)."""

from __future__ import annotations

import hashlib
import threading
from typing import Sequence

import numpy as np

from memsieve.embedding.protocol import Embedder, check_texts, validate_embeddings


class CachedEmbedder:
    """Wraps an embedder and remembers every vector it returned, by text.

    Entries are keyed by the SHA-256 of the UTF-8 text, so equal texts share
    one vector whatever object holds them. The cache is unbounded (about
    ``4 * dim`` bytes plus ~100 bytes of overhead per distinct text); call
    :meth:`clear` to drop it. Safe to share between threads; two threads that
    miss on the same text at once may both embed it.

    Args:
        inner: The embedder that computes vectors on a miss.

    Attributes:
        hits: Texts answered from the cache so far (repeats within one call count).
        misses: Distinct texts that had to be embedded by ``inner``.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.hits = 0
        self.misses = 0
        self._vectors: dict[bytes, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        """The wrapped embedder's dimension."""
        return int(self.inner.dim)

    @property
    def name(self) -> str:
        """The wrapped embedder's name: caching does not change the vectors."""
        return str(self.inner.name)

    def __len__(self) -> int:
        return len(self._vectors)

    def clear(self) -> None:
        """Forget every cached vector (the hit and miss counters are kept)."""
        with self._lock:
            self._vectors.clear()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts, calling the wrapped embedder only for unseen ones.

        Args:
            texts: n strings.

        Returns:
            float32 C-contiguous (n, dim) array of unit rows, in input order.

        Raises:
            InvalidTextError: ``texts`` is a bare string or holds a non-string.
            EmbedderError: The wrapped embedder's output failed validation.
        """
        items = check_texts(texts)
        dim = self.dim
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in items]
        with self._lock:
            found = {k: self._vectors[k] for k in set(keys) if k in self._vectors}
        todo: dict[bytes, str] = {}
        for key, text in zip(keys, items):
            if key not in found:
                todo.setdefault(key, text)
        if todo:
            fresh = validate_embeddings(self.inner.embed(list(todo.values())), len(todo), dim)
            for key, row in zip(todo, fresh):
                found[key] = row
        with self._lock:
            for key in todo:
                self._vectors[key] = found[key]
            self.misses += len(todo)
            self.hits += len(items) - len(todo)
        out = np.empty((len(items), dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out
