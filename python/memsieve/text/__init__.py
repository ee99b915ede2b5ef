"""Language: the one stage that knows what words mean.

Change cues ("no longer", "moved"), relation words, forget-request phrasings
and word rarity live here; the gate, the write path and the read path are
handed them and hold no word list of their own.
"""
