"""How rare a plain word is in English, from a list the package already ships.

In a scope of a few memories the scope's own IDF says nothing (every term is
in one or two memories), so the information term leans on a prior. A constant
prior counts "give" and "sesame" alike, and a paraphrase that swaps in common
words ("Cats give my daughter an allergic reaction" for "My daughter is
allergic to cats") then looks as informative as a new detail. The packaged
MiniLM tokenizer's WordPiece vocabulary lists whole words roughly in order of
corpus frequency (ids from about 2,000 up: "the" first); a word that is not a
whole piece is rarer still. Its rank is the word-frequency prior here.

``word_rarity`` maps that rank to a weight: ``COMMON_WEIGHT`` up to rank
``COMMON_RANK``, 1.0 from rank ``RARE_RANK`` or for words the vocabulary does
not hold whole, log-linear between. Numbers and names are weighed by their
kind elsewhere and never pass through here.
"""

from __future__ import annotations

import functools
import json
import math

from memsieve.embedding.onnx import packaged_tokenizer_path

COMMON_RANK, RARE_RANK = 3_000, 20_000
COMMON_WEIGHT = 0.25


@functools.cache
def _ranks() -> dict[str, int]:
    with open(packaged_tokenizer_path(), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    return {w: int(i) for w, i in vocab.items() if w.isalpha()}


def word_rarity(word: str) -> float:
    """A weight in [COMMON_WEIGHT, 1.0]: low for common English words, 1.0 for rare ones."""
    rank = _ranks().get(word.casefold())
    if rank is None or rank >= RARE_RANK:
        return 1.0
    if rank <= COMMON_RANK:
        return COMMON_WEIGHT
    t = math.log(rank / COMMON_RANK) / math.log(RARE_RANK / COMMON_RANK)
    return COMMON_WEIGHT + t * (1.0 - COMMON_WEIGHT)
