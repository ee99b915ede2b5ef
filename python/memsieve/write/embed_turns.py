"""One embedder shared by a Memory's writes: one call at a time, and the batch embedded ahead yields.

``Writer.add_many`` embeds its next batch on a second thread while the current one is decided,
and deciding may embed too: the swapped word read back (memsieve.write.swaps), an LLM's UPDATE
text, the text of an LLM merge in a scheduled consolidation. A caller's embedder is called by one
of them at a time. A decision waiting for a whole batch of 256 texts to be embedded ahead stalls
the batch it decides, and what the stalled decisions would have overlapped is lost: the batch
embedded ahead is cut into slices of ``AHEAD_SLICE`` texts of like lengths, and a decision that
waits is served before the next slice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

#: Texts per embedder call of a batch embedded ahead: eight of the default embedder's batches,
#: four on each of its two workers, so that a decision waits for a fraction of a batch.
AHEAD_SLICE = 64

Embed = Callable[[list[str]], np.ndarray]


class EmbedTurns:
    """``embed`` behind a lock, with work embedded ahead giving way between slices.

    Args:
        embed: texts -> (n, d) float32 unit rows; called by one thread at a time.
    """

    def __init__(self, embed: Embed) -> None:
        self._embed = embed
        self._lock = threading.Lock()
        self._state = threading.Condition()
        self._waiting = 0  # decisions waiting for the embedder

    def __call__(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` now, before any slice embedded ahead that has not started."""
        with self._state:
            self._waiting += 1
        try:
            with self._lock:
                return self._embed(texts)
        finally:
            with self._state:
                self._waiting -= 1
                self._state.notify_all()

    def ahead(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in slices of like lengths, letting waiting decisions in between.

        Returns:
            (len(texts), d) float32 rows in the order of ``texts``, as ``embed`` gives them.
        """
        texts = list(texts)
        if len(texts) <= AHEAD_SLICE:
            return self._turn(texts)
        # By length, so that each slice pads about as the whole call would have been padded.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: np.ndarray | None = None
        for start in range(0, len(order), AHEAD_SLICE):
            rows = order[start:start + AHEAD_SLICE]
            vectors = np.asarray(self._turn([texts[i] for i in rows]))
            if out is None:
                out = np.empty((len(texts), *vectors.shape[1:]), dtype=vectors.dtype)
            out[rows] = vectors
        assert out is not None
        return out

    def _turn(self, texts: list[str]) -> np.ndarray:
        with self._state:
            self._state.wait_for(lambda: self._waiting == 0)
        with self._lock:
            return self._embed(texts)
