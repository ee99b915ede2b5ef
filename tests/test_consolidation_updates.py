"""The updates set (eval/updates) after consolidation: no newest version loses its first place."""

from __future__ import annotations

import pytest

from memsieve import Memory
from memsieve.eval.metrics import content_tokens
from memsieve.eval.updates_data import VERSION_KINDS, load_items


@pytest.mark.slow
def test_newest_versions_stay_first_after_consolidation(embedder):
    items = [i for i in load_items(split="dev") if i.kind in VERSION_KINDS]

    def first(mem: Memory) -> dict[str, bool]:
        out = {}
        for it in items:
            hits = mem.search(it.question, user_id=it.id, limit=1)
            out[it.id] = bool(hits) and set(it.expected) <= set(content_tokens(hits[0].text))
        return out

    with Memory(":memory:", embedder=embedder) as mem:
        for it in items:
            for t in it.turns:
                if not t.forget:
                    mem.add(t.text, user_id=it.id, valid_from=t.date)
        before = first(mem)
        merges = sum(len(mem.consolidate(user_id=it.id, min_sim=0.8).merges) for it in items)
        after = first(mem)
    assert merges >= 5, "the set must give consolidation something to merge"
    assert [k for k in before if before[k] and not after[k]] == []
    assert sum(after.values()) >= sum(before.values())
