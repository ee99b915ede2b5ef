"""Scheduled consolidation: the offline fourth layer of the write path, undoable.

The write path would rather keep a near-duplicate than lose a fact;
consolidation merges what accumulates, with the whole scope in view:

- ``candidates``: every close pair (the Rust kernel) and complete-link groups;
- ``information``: the gate's information term says duplicates or versions;
- ``plan``: the deterministic merge rule, and the report;
- ``llm_merge``: an optional merged text, behind guards;
- ``apply``: the merge and its undo, recorded in history and the merges table;
- ``runner``: one scope's run under the scope's write lock, and ``Schedule``.
"""

from memsieve.consolidation.apply import MergeConflictError
from memsieve.consolidation.candidates import DEFAULT_MIN_SIM, CompleteLink, close_pairs
from memsieve.consolidation.plan import ConsolidationReport, Merge
from memsieve.consolidation.runner import Consolidator, Schedule

__all__ = ["DEFAULT_MIN_SIM", "CompleteLink", "ConsolidationReport", "Consolidator", "Merge",
           "MergeConflictError", "Schedule", "close_pairs"]
