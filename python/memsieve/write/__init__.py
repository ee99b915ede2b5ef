"""The write path: candidates, the decision per candidate, edits and forgetting.

``writer`` is the one home of a Memory's writes: it opens the scope's write
lock and hands the transaction to the stage below. ``candidates`` turns input
into candidates; ``infer`` turns messages into extracted facts (``add(infer=
True)``); ``path`` decides each candidate (exact dedup, the gate, the band)
inside one transaction; ``edits`` updates, deletes and restores; ``forget``
and ``forgetting`` find and remove what a request names; ``ingest`` reads
conversation files.
"""
