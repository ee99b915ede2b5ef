"""The same data ranks the same on SQLite and PostgreSQL, in every search mode.

One LoCoMo dev conversation (every turn, dated by its session, the gate off) is
written to both stores with the real ONNX embedder; then 40 of its questions
are searched in every mode ``Memory.search`` accepts. The top 10 must be the
same memories in the same order, with the same scores. Memory ids are random
per store, so a memory is named by its position in the scope (``get_all``
lists memories in the order they were written, and both stores were written
in the same order).
"""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory
from memsieve.eval.arms import search_modes
from memsieve.eval.locomo import load_locomo

from conftest import shared_data

CONVERSATION = "conv-30"  # the smallest dev conversation: 369 turns, 105 questions
QUESTIONS = 40


@pytest.fixture(scope="module")
def conversation():
    locomo = shared_data("data/locomo/locomo_dev.json", what="the LoCoMo dev split")
    (conv,) = load_locomo(locomo, conversations=[CONVERSATION]).conversations
    return conv


def fill(target, embedder, conv) -> Memory:
    mem = Memory(target, embedder=embedder, gate=GateConfig(profile="none"))
    for session in conv.sessions:
        mem.add([t.text for t in session.turns], user_id=conv.sample_id, valid_from=session.valid_from,
                source=[s for t in session.turns for s in t.sources] or None)
    return mem


def rankings(mem: Memory, conv) -> dict[tuple[str, int], list[tuple[int, float]]]:
    """(mode, question index) -> [(position of the memory in the scope, score)] of the top 10."""
    position = {m.id: i for i, m in enumerate(mem.get_all(user_id=conv.sample_id))}
    out = {}
    for mode in search_modes():
        for i, q in enumerate(conv.questions[:QUESTIONS]):
            hits = mem.search(q.question, user_id=conv.sample_id, limit=10, mode=mode)
            out[(mode, i)] = [(position[h.id], h.score) for h in hits]
    return out


def test_sqlite_and_postgres_return_the_same_top_10_in_every_mode(tmp_path, embedder, pg_url, conversation):
    lite = fill(tmp_path / "lite.db", embedder, conversation)
    pg = fill(pg_url, embedder, conversation)
    try:
        stored = len(lite.get_all(user_id=conversation.sample_id))
        assert stored == len(pg.get_all(user_id=conversation.sample_id)) > 300
        a, b = rankings(lite, conversation), rankings(pg, conversation)
    finally:
        lite.close()
        pg.close()
    assert len(a) == len(search_modes()) * QUESTIONS
    assert all(len(v) == 10 for k, v in a.items() if k[0] != "keyword"), "dense and fused fill their top 10"
    differ = sorted(k for k in a if [p for p, _ in a[k]] != [p for p, _ in b[k]])
    per_mode = {m: sum(k[0] == m for k in differ) for m in search_modes()}
    assert not differ, (f"{len(differ)} of {len(a)} (mode, question) rankings differ between SQLite and "
                        f"PostgreSQL (per mode, of {QUESTIONS}: {per_mode}); first {differ[0]}: "
                        f"{a[differ[0]]} vs {b[differ[0]]}")
    for k in a:
        assert [s for _, s in b[k]] == pytest.approx([s for _, s in a[k]], rel=1e-5, abs=1e-7), k
