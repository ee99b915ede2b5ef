"""Passages: a text longer than the embedder's window, cut so that every part of it has a vector.

The default embedder reads at most 256 tokens (about 1,000 characters of
English); the rest of a longer text would be judged and found by its opening
only. ``passage_spans`` cuts such a text at paragraph and sentence boundaries
into passages of about ``PASSAGE_CHARS`` characters (~200 tokens), each
starting a little before the previous one ends, and ``embed_passages`` embeds
them in the same call as the whole texts.

Passage 0 has no vector of its own: the memory's embedding (the whole text,
which the embedder reads from its opening) is it.

A text that fits the window is read whole, but one vector of a chat turn
that says several things is pulled toward all of them at once, and a
question about one of them may not find it. ``key_spans`` gives such a text
sentence keys: a vector for each sentence after its first (a sentence of
fewer than ``KEY_MIN_CHARS`` characters joins its neighbour). Keys are parts
numbered from ``KEY_BASE``: dense search finds a memory by its best key,
while the gate scores the whole text and its passages only, so what the
gate decides never depends on them (``GateConfig(sentence_keys=False)``
turns them off).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memsieve.errors import InvalidTextError

#: A text of at most this many characters is read whole by the embedder: one vector.
WINDOW_CHARS = 1000
#: The length a passage is cut to (at a boundary at or before it), ~200 tokens of English.
PASSAGE_CHARS = 800
#: How far back from a passage's end the next one starts (at a sentence boundary).
OVERLAP_CHARS = 120
#: Parts of one text, at most; a memory's part is stored under seq * PART_BASE + part.
PART_BASE = 1 << 16
#: Sentence keys are parts KEY_BASE + 1..; passages are numbered below it.
KEY_BASE = 1 << 15
#: A sentence shorter than this (stripped) joins the next one in a key (the last one: the previous).
KEY_MIN_CHARS = 40

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"[.!?;:\u3002]['\")\]\u201d\u2019]*\s+|\n\s*")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Part:
    """Part ``index`` (1 or more) of a memory's text: ``text[start:end]`` and its (d,) float32 unit vector.

    A passage below ``KEY_BASE``, a sentence key above it (``is_key``).
    """

    index: int
    start: int
    end: int
    vector: np.ndarray

    @property
    def is_key(self) -> bool:
        return is_key(self.index)


def is_key(index: Any) -> Any:
    """Whether part number ``index`` is a sentence key (searched) rather than a passage (searched and gated).

    ``index`` is an int (a bool back) or an int64 array of part numbers (a bool array back).
    """
    return index > KEY_BASE


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
        InvalidTextError: the text would need more than ``KEY_BASE`` passages.
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
        if len(spans) >= KEY_BASE - 1:
            raise InvalidTextError(f"a text of {n} characters needs more than {KEY_BASE} passages; "
                                   "split it into several texts")
    spans.append((start, n))
    return spans


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Spans tiling ``text``, each ending after a sentence boundary (the last at the text's end)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE.finditer(text):
        if m.end() > start and m.end() < len(text):
            spans.append((start, m.end()))
            start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def key_spans(text: str, *, window: int = WINDOW_CHARS, min_chars: int = KEY_MIN_CHARS) -> list[tuple[int, int]]:
    """The (start, end) spans of a short text's sentence keys: its sentences after the first, in order.

    A sentence of fewer than ``min_chars`` non-space characters joins the one
    after it (a short last one, the one before), so a key says something on
    its own. A text longer than ``window`` has passages instead, and one of a
    single sentence is its own key: both get none.
    """
    if len(text) > window:
        return []
    merged: list[tuple[int, int]] = []
    pending: int | None = None
    for a, b in _sentence_spans(text):
        a = a if pending is None else pending
        if len(text[a:b].strip()) < min_chars:
            pending = a
            continue
        merged.append((a, b))
        pending = None
    if pending is not None:
        if merged:
            merged[-1] = (merged[-1][0], len(text))
        else:
            merged.append((pending, len(text)))
    return merged[1:]


def part_spans(text: str, *, passages: bool = True, keys: bool = True) -> list[tuple[int, int, int]]:
    """(part number, start, end) of every part 1.. of ``text``: passages of a long text, keys of a short one.

    Args:
        text: the memory's text.
        passages: False: no passages (``GateConfig(passages=False)``).
        keys: False: no sentence keys (``GateConfig(sentence_keys=False)``).
    """
    out = [(j + 1, a, b) for j, (a, b) in enumerate(passage_spans(text)[1:])] if passages else []
    if keys:
        out += [(KEY_BASE + j + 1, a, b) for j, (a, b) in enumerate(key_spans(text))]
    return out


def embed_passages(embed: Callable[[list[str]], np.ndarray], texts: Sequence[str], *,
                   enabled: bool = True, keys: bool = True) -> tuple[np.ndarray, list[list[Part]]]:
    """Each text's own (d,) vector and its parts 1.. (passages and sentence keys), in one call.

    Args:
        embed: embeds texts to (n, d) float32 unit rows.
        texts: the texts.
        enabled: False embeds no passages (``GateConfig(passages=False)``).
        keys: False embeds no sentence keys (``GateConfig(sentence_keys=False)``).

    Returns:
        (n, d) vectors of the whole texts (passage 0), and per text its parts.
    """
    texts = list(texts)
    spans = [part_spans(t, passages=enabled, keys=keys) for t in texts]
    pieces = [t[a:b] for t, sp in zip(texts, spans) for _, a, b in sp]
    vectors = embed(texts + pieces)
    own, rest = vectors[:len(texts)], vectors[len(texts):]
    return np.ascontiguousarray(own), _assemble(spans, rest)


def text_parts(embed: Callable[[list[str]], np.ndarray], text: str, *, enabled: bool = True,
               keys: bool = True) -> list[Part]:
    """The parts 1.. of one text whose own vector is known already (an LLM's merged or updated
    text, a text an undo puts back): only its pieces are embedded, none for a text without parts.

    Args: as for ``embed_passages``, for one text.
    """
    spans = part_spans(text, passages=enabled, keys=keys)
    if not spans:
        return []
    return _assemble([spans], embed([text[a:b] for _, a, b in spans]))[0]


def _assemble(spans: Sequence[Sequence[tuple[int, int, int]]], rest: np.ndarray) -> list[list[Part]]:
    """Per text, its ``Part``s from its spans and their vectors, ``rest`` holding them in order."""
    parts: list[list[Part]] = []
    i = 0
    for sp in spans:
        parts.append([Part(index=n, start=a, end=b, vector=np.ascontiguousarray(rest[i + j]))
                      for j, (n, a, b) in enumerate(sp)])
        i += len(sp)
    return parts
