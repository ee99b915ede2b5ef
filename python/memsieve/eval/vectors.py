"""Embed each distinct text of the evaluation once, and share the vectors.

The parent process embeds every text the run will need (turns, facts,
questions) through one ``CachedEmbedder``. Worker processes then read those
vectors from a :class:`VectorTable` instead of running the model again; a text
the table lacks is embedded by a lazily created fallback embedder and counted,
so a miss costs time but never changes a result.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memsieve.embedding.protocol import check_texts, validate_embeddings
from memsieve.eval.locomo import Dataset
from memsieve.text.passages import part_spans


#: With a cache file, the vectors embedded so far are written to it every this many texts.
CHECKPOINT_TEXTS = 4096


def text_key(text: str) -> bytes:
    """SHA-256 of the UTF-8 text: the cache key."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class VectorTable:
    """An embedder that answers from precomputed vectors.

    Args:
        keys: n SHA-256 digests (see :func:`text_key`).
        vectors: float32 (n, dim) unit rows, aligned with ``keys``.
        name: the name of the embedder that produced them.
        fallback: builds an embedder for texts not in the table (called at most once).

    Attributes:
        hits: texts answered from the table.
        misses: texts that needed the fallback.
    """

    def __init__(self, *, keys: Sequence[bytes], vectors: np.ndarray, name: str,
                 fallback: Callable[[], Any] | None = None) -> None:
        self._rows = {k: i for i, k in enumerate(keys)}
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.dim = int(self._vectors.shape[1])
        self.name = name
        self._fallback_factory = fallback
        self._fallback: Any = None
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` as float32 (n, dim), in input order."""
        items = check_texts(texts)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        missing = []
        for i, t in enumerate(items):
            row = self._rows.get(text_key(t))
            if row is None:
                missing.append(i)
            else:
                out[i] = self._vectors[row]
        self.hits += len(items) - len(missing)
        if missing:
            self.misses += len(missing)
            if self._fallback is None:
                if self._fallback_factory is None:
                    raise KeyError(f"{len(missing)} text(s) not in the vector table and no fallback embedder")
                self._fallback = self._fallback_factory()
            fresh = validate_embeddings(self._fallback.embed([items[i] for i in missing]), len(missing), self.dim)
            out[missing] = fresh
        return out


def save_table(path: str | Path, *, keys: Sequence[bytes], vectors: np.ndarray, name: str) -> None:
    """Write vectors to an ``.npz`` file keyed by text hash, for a later run to reuse.

    The file is written beside its final path and renamed into place, so an
    interrupted run never leaves a truncated cache behind.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".partial")
    with open(tmp, "wb") as fh:
        np.savez(fh, keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 32),
                 vectors=np.asarray(vectors, dtype=np.float32), name=np.array(name))
    tmp.replace(p)


def load_table(path: str | Path, *, name: str) -> tuple[list[bytes], np.ndarray] | None:
    """Read a table written by :func:`save_table`; None if absent or made by another embedder."""
    p = Path(path)
    if not p.is_file():
        return None
    with np.load(p) as data:
        if str(data["name"]) != name:
            return None
        keys = [bytes(row) for row in data["keys"]]
        return keys, np.array(data["vectors"], dtype=np.float32)


def _default_embedder() -> Any:
    from memsieve.embedding import OnnxEmbedder

    return OnnxEmbedder()


def _texts(ds: Dataset, streams: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for conv in ds.conversations:
        for stream in streams:
            for _s, calls in conv.stream(stream):
                for chunk in calls:
                    for c in chunk:
                        if c.text in seen:
                            continue
                        seen[c.text] = None
                        # Its parts (passages, sentence keys) are cached with it.
                        for _, a, b in part_spans(c.text):
                            seen.setdefault(c.text[a:b], None)
        for q in conv.questions:
            seen.setdefault(q.question, None)
    return list(seen)


def embed_all(ds: Dataset, *, streams: Sequence[str], embedder_factory: Callable[[], Any] | None = None,
              embedding_cache: str | None = None, progress: bool = True) -> tuple[VectorTable, dict[str, Any]]:
    """Embed each distinct text of ``streams`` and every question once, and wrap the vectors.

    Args:
        ds: the loaded dataset.
        streams: the write streams whose texts are needed.
        embedder_factory: builds the embedder (default: the packaged ONNX model).
        embedding_cache: an ``.npz`` to reuse vectors from (and write them to).
        progress: show a progress bar.

    Returns:
        (table, info): see :func:`embed_texts`.
    """
    return embed_texts(_texts(ds, streams), embedder_factory=embedder_factory, embedding_cache=embedding_cache,
                       progress=progress)


def embed_texts(texts: Sequence[str], *, embedder_factory: Callable[[], Any] | None = None,
                embedding_cache: str | None = None, progress: bool = True) -> tuple[VectorTable, dict[str, Any]]:
    """Embed each distinct text of ``texts`` once, reusing and extending an on-disk cache.

    With ``embedding_cache``, the vectors already in that ``.npz`` (made by the
    same embedder) are reused and only the texts it lacks are embedded; the
    cache is then rewritten with the union, so a second run over the same texts
    embeds nothing and a run over more texts embeds only the new ones.

    Args:
        texts: the texts the run will embed (duplicates are embedded once).
        embedder_factory: builds the embedder (default: the packaged ONNX model).
        embedding_cache: an ``.npz`` to reuse vectors from (and write them to).
        progress: show a progress bar.

    Returns:
        (table, info): a :class:`VectorTable` answering every text of the run,
        and what it cost (``distinct_texts``, ``embedded``, ``reused``,
        ``embed_s``, ``source``, ``embedder``).
    """
    from memsieve.embedding import CachedEmbedder

    factory = embedder_factory or _default_embedder
    cached = CachedEmbedder(factory())
    distinct = list(dict.fromkeys(texts))
    keys = [text_key(t) for t in distinct]
    t0 = time.perf_counter()
    reused = load_table(embedding_cache, name=cached.name) if embedding_cache else None
    known = set(reused[0]) if reused is not None else set()
    todo = [(k, t) for k, t in zip(keys, distinct) if k not in known]
    if reused is not None and not todo:
        table = VectorTable(keys=reused[0], vectors=reused[1], name=cached.name, fallback=factory)
        source = f"reused {embedding_cache}"
    else:
        from tqdm import tqdm

        vectors = np.empty((len(todo), cached.dim), dtype=np.float32)
        new_keys = [k for k, _t in todo]
        step = 256
        with tqdm(total=len(todo), desc="embed distinct texts", unit="text", disable=not progress) as bar:
            for i in range(0, len(todo), step):
                vectors[i:i + step] = cached.embed([t for _k, t in todo[i:i + step]])
                bar.update(len(todo[i:i + step]))
                done = min(i + step, len(todo))
                if embedding_cache and done < len(todo) and done % CHECKPOINT_TEXTS == 0:
                    # A long embedding run that dies keeps what it did: the next run starts from here.
                    prior_keys, prior = reused if reused is not None else ([], vectors[:0])
                    save_table(embedding_cache, keys=prior_keys + new_keys[:done],
                               vectors=np.concatenate([prior, vectors[:done]]), name=cached.name)
        if reused is not None:
            all_keys, all_vectors = reused[0] + new_keys, np.concatenate([reused[1], vectors])
            source = f"extended {embedding_cache} (reused {len(distinct) - len(todo)}, embedded {len(todo)})"
        else:
            all_keys, all_vectors = new_keys, vectors
            source = "embedded"
        table = VectorTable(keys=all_keys, vectors=all_vectors, name=cached.name, fallback=factory)
        if embedding_cache:
            save_table(embedding_cache, keys=all_keys, vectors=all_vectors, name=cached.name)
    info = {"distinct_texts": len(distinct), "embedded": len(todo), "reused": len(distinct) - len(todo),
            "embed_s": round(time.perf_counter() - t0, 2), "source": source,
            "embedder": cached.name, "cache_misses_in_parent": cached.misses}
    return table, info
