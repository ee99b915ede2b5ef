"""Language: the one stage that knows what words mean.

Change cues ("no longer", "moved"), relation words, forget-request phrasings
and word rarity live here, in a ``Lexicon`` (``ENGLISH`` by default); the
gate, the write path and the read path are handed one and hold no word list
of their own.
"""

from memsieve.text.lexicon import ENGLISH, Lexicon, check_lexicon

__all__ = ["ENGLISH", "Lexicon", "check_lexicon"]
