"""Passages: a text longer than the embedder's window, cut so that every part of it has a vector.

The default embedder reads at most 256 tokens (about 1,000 characters of
English); the rest of a longer text would be judged and found by its opening
only. ``passage_spans`` cuts such a text at paragraph and sentence boundaries
into passages of about ``PASSAGE_CHARS`` characters (~200 tokens), each
starting a little before the previous one ends, and ``embed_passages`` embeds
them in the same call as the whole texts.

Passage 0 has no vector of its own: the memory's embedding (the whole text,
which the embedder reads from its opening) is it. A text of at most
``WINDOW_CHARS`` characters has passage 0 alone, so everything stored and
decided for it is exactly what it was before passages existed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memsieve.errors import InvalidTextError

#: A text of at most this many characters is read whole by the embedder: one vector.
WINDOW_CHARS = 1000
#: The length a passage is cut to (at a boundary at or before it), ~200 tokens of English.
PASSAGE_CHARS = 800
#: How far back from a passage's end the next one starts (at a sentence boundary).
OVERLAP_CHARS = 120
#: Passages of one text, at most; a memory's part is stored under seq * PART_BASE + part.
PART_BASE = 1 << 16

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"[.!?;:\u3002]['\")\]\u201d\u2019]*\s+|\n\s*")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Part:
    """Passage ``index`` (1 or more) of a memory's text: ``text[start:end]`` and its (d,) float32 unit vector."""

    index: int
    start: int
    end: int
    vector: np.ndarray


def _last_break(text: str, lo: int, hi: int) -> int:
    """The end of the strongest boundary in text[lo:hi] nearest ``hi``: paragraph, sentence, space, else hi."""
    for pattern in (_PARAGRAPH, _SENTENCE, _SPACE):
        ends = [m.end() for m in pattern.finditer(text, lo, hi)]
        if ends:
            return ends[-1]
    return hi


def _first_start(text: str, lo: int, hi: int) -> int:
    """The first sentence start in text[lo:hi] (a word start without one; ``hi`` without either)."""
    for pattern in (_SENTENCE, _SPACE):
        m = pattern.search(text, lo, hi)
        if m is not None and m.end() < hi:
            return m.end()
    return hi


def passage_spans(text: str, *, window: int = WINDOW_CHARS, size: int = PASSAGE_CHARS,
                  overlap: int = OVERLAP_CHARS) -> list[tuple[int, int]]:
    """The (start, end) character spans of ``text``'s passages, in order; one span for a text that fits.

    Every character lies in some passage; a passage ends at the last paragraph
    or sentence boundary within ``size`` characters of its start (not before
    half of it), and the next starts at the first sentence start in the last
    ``overlap`` characters of it. A last piece of up to ``size + size // 4``
    characters stays one passage.

    Raises:
        InvalidTextError: the text would need more than ``PART_BASE`` passages.
    """
    n = len(text)
    if n <= window:
        return [(0, n)]
    spans: list[tuple[int, int]] = []
    start = 0
    while n - start > size + size // 4:
        end = _last_break(text, start + size // 2, start + size)
        spans.append((start, end))
        nxt = _first_start(text, max(start + 1, end - overlap), end)
        start = nxt if nxt > start else end
        if len(spans) >= PART_BASE - 1:
            raise InvalidTextError(f"a text of {n} characters needs more than {PART_BASE} passages; "
                                   "split it into several texts")
    spans.append((start, n))
    return spans


def embed_passages(embed: Callable[[list[str]], np.ndarray], texts: Sequence[str], *,
                   enabled: bool = True) -> tuple[np.ndarray, list[list[Part]]]:
    """Each text's own (d,) vector and its parts 1.. (none for a text that fits the window), in one call.

    Args:
        embed: embeds texts to (n, d) float32 unit rows.
        texts: the texts.
        enabled: False embeds the texts alone (``GateConfig(passages=False)``).

    Returns:
        (n, d) vectors of the whole texts (passage 0), and per text its parts 1..P-1.
    """
    texts = list(texts)
    spans = [passage_spans(t)[1:] if enabled else [] for t in texts]
    pieces = [t[a:b] for t, sp in zip(texts, spans) for a, b in sp]
    vectors = embed(texts + pieces)
    own, rest = vectors[:len(texts)], vectors[len(texts):]
    parts: list[list[Part]] = []
    i = 0
    for sp in spans:
        parts.append([Part(index=j + 1, start=a, end=b, vector=np.ascontiguousarray(rest[i + j]))
                      for j, (a, b) in enumerate(sp)])
        i += len(sp)
    return np.ascontiguousarray(own), parts
