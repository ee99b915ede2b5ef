"""The consolidation arms of ``memsieve eval locomo``: ingest, then consolidate every scope.

``add-all+consolidate`` ingests with the gate off (as ``add-all``) and then
runs ``Memory.consolidate`` on each conversation's scope before the questions
are asked; ``memsieve+consolidate`` does the same after the default gate, to
show what consolidation adds to what the gate already removed.

Credit follows the merge rule: a duplicates merge attaches the retired
members' sources to the kept memory, so their dia_ids become its provenance
(like NOOPs folded into it), never its own evidence; a versions merge
attaches nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memsieve.eval.arms import ArmSpec, StreamRun

#: The arms this module adds, by name.
CONSOLIDATE_ARMS = ("add-all+consolidate", "memsieve+consolidate")


def consolidate_specs(*, memsieve_gate: dict[str, Any] | None = None,
                      min_sim: float | None = None) -> dict[str, ArmSpec]:
    """The two consolidation arms (``min_sim`` None: consolidation's default)."""
    params = {"consolidate": True, "min_sim": min_sim}
    at = "" if min_sim is None else f" (min_sim {min_sim:g})"
    return {
        "add-all+consolidate": ArmSpec(arm="add-all+consolidate", label=f"add-all, then consolidate{at}",
                                       gate={"profile": "none"}, params=params),
        "memsieve+consolidate": ArmSpec(arm="memsieve+consolidate", label=f"memsieve, then consolidate{at}",
                                        gate={"profile": "memsieve", **(memsieve_gate or {})}, params=params),
    }


def wants_consolidation(spec: ArmSpec) -> bool:
    return bool(spec.params.get("consolidate"))


def consolidate_all(mem: Any, conversations: Sequence[Any], run: StreamRun, spec: ArmSpec) -> dict[str, Any]:
    """Consolidate each conversation's scope; returns counts for the result row."""
    before = after = merges = duplicates = 0
    for conv in conversations:
        report = mem.consolidate(user_id=conv.sample_id, min_sim=spec.params.get("min_sim"))
        before += report.active_before
        after += report.active_after
        for m in report.merges:
            merges += 1
            if m.kind != "duplicates":
                continue
            duplicates += 1
            prov = run.provenance.setdefault(m.kept_id, set())
            for member in m.member_ids:
                prov.update(run.provenance.get(member, set()))
    run.stats["active_memories"] = after
    return {"active_before_consolidation": before, "active_after_consolidation": after,
            "merges": merges, "duplicate_merges": duplicates, "retired": before - after}
