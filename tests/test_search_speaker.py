"""Whose words a question asks about: the read pipeline's speaker stage (memsieve.read.speaker)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings, strategies as st

from memsieve import GateConfig, Memory
from memsieve.read import speaker as speaker_stage
from memsieve.read.speaker import SPEAKER_SHARE, raise_speaker, role_of
from memsieve.text import ENGLISH

from conftest import TableEmbedder, unit

# The user's own words are a little less like the question than the assistant's answers.
USER_FACT = "I keep my kayak at the boathouse on pier 9."
ANSWERS = [f"Kayak storage tip {i}: a boathouse rack, a wall mount or a ceiling hoist keeps a kayak dry."
           for i in range(6)]
THANKS = "You're welcome, happy paddling!"
Q_USER = "Where do I keep my kayak?"
Q_ASSISTANT = "Which kayak storage tip did you recommend in our previous chat?"


def _chat(target) -> Memory:
    table = {USER_FACT: unit(1, -3), Q_USER: unit(1, 0), Q_ASSISTANT: unit(1, 0), THANKS: unit(-1, 0, 1)}
    table.update({a: unit(1, 0.3, 0.01 * i) for i, a in enumerate(ANSWERS)})
    m = Memory(target, embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add([{"role": "user", "content": USER_FACT}], user_id="u", infer=False)
    for a in [*ANSWERS, THANKS]:
        m.add([{"role": "assistant", "content": a}], user_id="u", infer=False)
    return m


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    return tmp_path / "speaker.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_a_question_about_the_user_finds_their_own_words_before_the_assistants(target, mode):
    m = _chat(target)
    if mode == "dense":  # (in hybrid the user's words match the question's words anyway)
        with speaker_stage.stage_off():
            before = [h.text for h in m.search(Q_USER, user_id="u", limit=3, mode=mode)]
        assert USER_FACT not in before  # the assistant's answers crowd it out without the stage
    hits = m.search(Q_USER, user_id="u", limit=3, mode=mode)
    assert hits[0].text == USER_FACT and hits[0].metadata["role"] == "user"
    assert len(hits) == 3 and {h.text for h in hits[1:]} <= set(ANSWERS)  # a boost, not a filter
    m.close()


def test_a_question_about_what_the_assistant_said_keeps_the_assistants_answers_first(target):
    m = _chat(target)
    hits = m.search(Q_ASSISTANT, user_id="u", limit=3)
    assert [h.metadata["role"] for h in hits] == ["assistant"] * 3
    m.close()


def test_a_scope_without_roles_is_searched_exactly_as_before(tmp_path):
    table = {USER_FACT: unit(1, 0.6), Q_USER: unit(1, 0)}
    table.update({a: unit(1, 0.3, 0.01 * i) for i, a in enumerate(ANSWERS)})
    m = Memory(tmp_path / "plain.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    for text in [USER_FACT, *ANSWERS]:
        m.add(text, user_id="u")
    on = [(h.id, h.score) for h in m.search(Q_USER, user_id="u", limit=5)]
    with speaker_stage.stage_off():
        off = [(h.id, h.score) for h in m.search(Q_USER, user_id="u", limit=5)]
    assert on == off
    m.close()


@pytest.mark.parametrize("question, whose", [
    ("What was the name of the bakery you suggested last week?", "assistant"),
    ("Remind me which exercises you were telling me about.", "assistant"),
    ("Did you mention a deadline for the grant?", "assistant"),
    ("Going back to our earlier conversation about tax forms, which one applied?", "assistant"),
    ("In our previous chat I told you my sister's name. What is it?", "user"),
    ("Can you recommend a good novel for a long flight?", "user"),
    ("Could you suggest a weekend hike near me?", "user"),
    ("How many concerts have I been to this year?", "user"),
])
def test_whose_words_a_question_asks_about(question, whose):
    assert ENGLISH.speaker_asked(question) == whose


def test_role_of_reads_only_chat_speakers():
    assert role_of({"role": "user"}) == "user" and role_of({"role": "assistant"}) == "assistant"
    assert role_of({"role": "system"}) is None and role_of({}) is None and role_of(None) is None


@example(rows=[(6.5e-92, None), (-1.0, 'user')], head=1, speaker='user', limit=2)
@example(rows=[(5e-324, 'user')], head=1, speaker='user', limit=1)
@example(rows=[(0.0, 'user'), (0.0, None)], head=2, speaker='user', limit=1)
@example(rows=[(6.5e-92, None), (0.0, 'user'), (-4.6, 'user')], head=3, speaker='user', limit=3)
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5, allow_nan=False), st.sampled_from(["user", "assistant", None])),
                min_size=1, max_size=30), st.integers(1, 30), st.sampled_from(["user", "assistant"]),
       st.integers(1, 20))
def test_raising_a_speaker_keeps_every_memory_and_the_order_within_each_side(rows, head, speaker, limit):
    pool = sorted(((i, x) for i, (x, _) in enumerate(rows)), key=lambda t: -t[1])
    roles = {i: r for i, (_, r) in enumerate(rows)}
    out = raise_speaker(pool, head, roles, speaker, limit=limit)
    assert sorted(out) == sorted((s, x) for s, x in out) and {s for s, _ in out} == {s for s, _ in pool}
    raised = [s for s, _ in out if roles[s] == speaker]
    others = [s for s, _ in out if roles[s] != speaker]
    assert raised == [s for s, _ in pool if roles[s] == speaker]  # each side keeps its order
    assert others == [s for s, _ in pool if roles[s] != speaker]
    scores = [x for _, x in out]
    assert scores == sorted(scores, reverse=True)
    # The first ceil(SPEAKER_SHARE * limit) of the speaker's memories are raised and no other, even
    # when the usual ranking's spread is 0 or tiny against the scores (the raise then has a floor).
    expected = set(raised[:max(1, math.ceil(SPEAKER_SHARE * limit))])
    before, after = dict(pool), dict(out)
    assert all(after[s] > before[s] for s in expected)
    assert all(after[s] == before[s] for s in after if s not in expected)
