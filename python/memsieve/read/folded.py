"""What the texts folded into a result say that the result does not: the read path's last stage.

A NOOP keeps the memory it folds into as it was: the gate judged the text a repeat. A repeat in
other words may still say something the memory does not ("I've tried four different ones so
far", folded into "I've tried three different Korean restaurants", or a follow-up question on
the same subject), and its rejection record, which keeps it, is read by no reader. So each
result carries the latest texts folded into it whose index terms the memory lacks
(``SearchResult.folded``, at most ``FOLDED_PER_HIT``), and ``render_line`` shows them after the
memory, dated: what is folded stays findable by the search that finds its memory, and the reader
sees the newer word beside the older one.

A fold that says only words the memory says (an exact repeat, a paraphrase in its words) is
left out, and so is one that says only what a newer fold shown already says.
"""

from __future__ import annotations

from collections.abc import Sequence

import memsieve._core as _core
from memsieve.records import Folded

#: Most folded texts one result shows. Two keep a reader's context small (a result grows by at
#: most two texts) and show a value and the one before it.
FOLDED_PER_HIT = 2
#: The latest folds of a memory read to choose them from: a memory that thousands of texts were
#: folded into ("thanks!") costs a search as much as one with a few.
FOLDS_READ = 8


def told_since(memory_text: str, folds: Sequence[Folded], *, most: int = FOLDED_PER_HIT) -> tuple[Folded, ...]:
    """The folds to show with a memory, oldest first.

    Args:
        memory_text: the memory's text.
        folds: texts folded into it, newest first (``store.folds_into``).
        most: the most to keep.

    Returns:
        Up to ``most`` of ``folds``, the newest that each say an index term that neither the
        memory nor a newer fold kept says, in the order they were told.
    """
    if not folds:
        return ()  # most results: nothing to tokenize
    said = set(_core.tokenize(memory_text))
    kept: list[Folded] = []
    for fold in folds:
        if len(kept) >= most:
            break
        terms = set(_core.tokenize(fold.text))
        if terms - said:
            kept.append(fold)
            said |= terms
    return tuple(reversed(kept))
