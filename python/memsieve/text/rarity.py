"""How rare a plain word is, from a word list the package already ships.

In a scope of a few memories the scope's own IDF says nothing (every term is
in one or two memories), so the information term leans on a prior. A constant
prior counts "give" and "sesame" alike, and a paraphrase that swaps in common
words ("Cats give my daughter an allergic reaction" for "My daughter is
allergic to cats") then looks as informative as a new detail. The packaged
MiniLM tokenizer's WordPiece vocabulary lists whole words roughly in order of
corpus frequency (ids from about 2,000 up: "the" first); a word that is not a
whole piece is rarer still. Its rank is the word-frequency prior here, and
which vocabulary is read is a lexicon's choice (memsieve.text.lexicon).

``rarity_of_rank`` maps that rank to a weight: ``COMMON_WEIGHT`` up to rank
``COMMON_RANK``, 1.0 from rank ``RARE_RANK`` or for words the vocabulary does
not hold whole, log-linear between. Numbers and names are weighed by their
kind elsewhere and never pass through here.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from memsieve.errors import ConfigError

COMMON_RANK, RARE_RANK = 3_000, 20_000
COMMON_WEIGHT = 0.25


def load_ranks(vocabulary: Any) -> dict[str, int]:
    """The whole alphabetic words of a Hugging Face ``tokenizer.json`` and their ids.

    Args:
        vocabulary: the file, as a path or an importlib ``Traversable``.

    Raises:
        ConfigError: the file is missing or holds no ``model.vocab`` mapping.
    """
    try:
        # A path opens with open(); a Traversable (package data, perhaps in a zip) opens itself.
        opened = (open(vocabulary, encoding="utf-8") if isinstance(vocabulary, (str, os.PathLike))
                  else vocabulary.open(encoding="utf-8"))
        with opened as f:
            vocab = json.load(f)["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"cannot read a word vocabulary from {vocabulary!s} ({exc}); give a lexicon "
                          f"the tokenizer.json of a WordPiece model, or vocabulary=None") from None
    return {w: int(i) for w, i in vocab.items() if w.isalpha()}


def rarity_of_rank(rank: int | None) -> float:
    """A weight in [COMMON_WEIGHT, 1.0] for a vocabulary rank (None: not a whole word, so rare)."""
    if rank is None or rank >= RARE_RANK:
        return 1.0
    if rank <= COMMON_RANK:
        return COMMON_WEIGHT
    t = math.log(rank / COMMON_RANK) / math.log(RARE_RANK / COMMON_RANK)
    return COMMON_WEIGHT + t * (1.0 - COMMON_WEIGHT)
