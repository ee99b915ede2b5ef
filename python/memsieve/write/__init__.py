"""The write path: candidates, the decision per candidate, edits and forgetting.

``candidates`` turns input into candidates; ``path`` decides each one (exact
dedup, the gate, the band) inside one transaction; ``edits`` updates, deletes
and restores; ``forget`` and ``forgetting`` find and remove what a request
names; ``ingest`` reads conversation files.
"""
