"""A word a text puts where its memory says another, read by the embedder.

The information term nets a text's new words against words of the memory it would fold into
that the text does not say: a paraphrase swaps words ("Heights scare me" / "I'm afraid of
heights") and says nothing new. So does a rebuilt sentence that changes one value in plain words
("In the orchestra, my instrument is the viola" / "I play the cello in the orchestra"), and a
fold would leave the reader the cello. The index cannot tell the two apart; the embedder can:
put the memory's word back in the text's place and the paraphrase reads as it did (its meaning
was the memory's already), while the changed value reads much closer to the memory. That rise
in cosine is what this module measures, for the few folds where it can decide: a text that
lacks one to three of the memory's content words and swaps them for as few.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import memsieve._core as _core

#: How much closer to the memory (in cosine) the text must read with the memory's word put
#: back in place of its own for the swap to count as a change of what it says. Measured on
#: the gate-changes set (eval/gate-changes/, written for this project): the paraphrase
#: repeats that fold rise by at most 0.056, the plain-word changes that folded by 0.168 to
#: 0.251; docs/GATE.md ("A word put where the memory says another") has the choice.
SWAP_RISE = 0.12
#: The least novelty, as a share of tau, of a fold the test is run for. A text that changes a
#: value in plain words moves away from its memory in meaning: the changes of the gate-changes
#: set and of tests/test_gate_swaps.py folded at 0.56-0.97 of tau, its paraphrases at 0.05-0.4.
#: Below it nothing is embedded (most of LoCoMo's and LongMemEval's folds).
SWAP_FROM = 0.5
#: Most content words the text may say that the memory lacks, and the memory say that the text
#: lacks, for the test to run: past them the two differ in more than a swap, and the variants
#: to embed multiply.
MOST_NEW, MOST_DROPPED = 3, 6

_WORD = re.compile(r"[^\W\d_][\w'-]*")


@dataclass(frozen=True)
class Swap:
    """The text's word, the memory's word read back in its place, and the cosines to the memory.

    Attributes:
        said: the text's word (as written).
        memory_says: the memory's word put in its place (as written there).
        cosine: the text's cosine to the memory.
        cosine_back: the cosine with ``memory_says`` in place of ``said``.
    """

    said: str
    memory_says: str
    cosine: float
    cosine_back: float


def _surfaces(text: str) -> dict[str, str]:
    """Index term -> its first spelling in ``text``, for words that are one term each."""
    out: dict[str, str] = {}
    for match in _WORD.finditer(text):
        terms = _core.tokenize(match.group())
        if len(terms) == 1:
            out.setdefault(terms[0], match.group())
    return out


def swapped_value(text: str, memory: str, *, cosine: float, memory_vector: np.ndarray,
                  embed: Callable[[list[str]], np.ndarray], rise: float = SWAP_RISE) -> Swap | None:
    """The swap that changes what ``text`` says against ``memory``, or None.

    Args:
        text: the candidate a fold would put into ``memory``.
        memory: that memory's text.
        cosine: the candidate's cosine to the memory's vector.
        memory_vector: (d,) float32 unit vector of the memory.
        embed: texts -> (n, d) float32 unit rows (one call for every variant).
        rise: the least rise in cosine that makes a swap a change.

    Returns:
        The swap with the largest rise, when it is at least ``rise``; None when no swap is
        one, or when the test does not apply (no word, or too many, on either side).
    """
    mine, theirs = _surfaces(text), _surfaces(memory)
    new = [t for t in mine if t not in theirs]
    dropped = [t for t in theirs if t not in mine]
    if not new or not dropped or len(new) > MOST_NEW or len(dropped) > MOST_DROPPED:
        return None
    pairs = [(mine[w], theirs[d]) for w in new for d in dropped]
    variants = [re.sub(rf"(?<!\w){re.escape(said)}(?!\w)", back, text, count=1) for said, back in pairs]
    rows = np.asarray(embed(variants), dtype=np.float32)
    backs = rows @ np.asarray(memory_vector, dtype=np.float32)
    best = int(np.argmax(backs))
    if float(backs[best]) - cosine < rise:
        return None
    return Swap(said=pairs[best][0], memory_says=pairs[best][1], cosine=cosine, cosine_back=float(backs[best]))


def swap_said(swap: Swap) -> str:
    """How a reason names a swap: "'viola' where it says 'cello' (cosine 0.743, 0.919 with 'cello')"."""
    return (f"{swap.said!r} where it says {swap.memory_says!r} (cosine {swap.cosine:.3f}, "
            f"{swap.cosine_back:.3f} with {swap.memory_says!r})")
