"""A query's "now": Memory.search(reference_time=...) and the read pipeline's time stage (memsieve.read.when)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import pytest

from memsieve import AsyncMemory, GateConfig, Memory
from memsieve.errors import InvalidInputError
from memsieve.read import when as when_stage
from memsieve.read.when import focus, promote

from conftest import TableEmbedder, unit

# Three equally relevant memories (the same vector), told on three dates.
MARCH = "I went to a pottery class with Lena."
APRIL = "I went to a climbing class with Lena."
MAY = "I went to a cooking class with Lena."
CLASS_Q = "Which class did I go to with Lena two weeks ago?"
PLAIN_Q = "Which class did I go to with Lena?"

# Three versions of one fact, linked by the write path.
CAR_1 = "I drive a small red hatchback."
CAR_2 = "I sold the hatchback and now drive a grey van."
CAR_3 = "I sold the van and now drive an electric car."
OTHER = "My neighbour drives a bus."


def _classes(target) -> Memory:
    v = unit(1, 0.2)
    table = {MARCH: v, APRIL: v, MAY: v, CLASS_Q: unit(1, 0), PLAIN_Q: unit(1, 0)}
    m = Memory(target, embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add(MARCH, user_id="u", valid_from="2024-03-01T10:00:00")
    m.add(APRIL, user_id="u", valid_from="2024-04-01T10:00:00")
    m.add(MAY, user_id="u", valid_from="2024-05-06T10:00:00")
    return m


def _cars(target) -> Memory:
    table = {CAR_1: unit(1, 0.05), CAR_2: unit(1, 0.3), CAR_3: unit(1, 0.5), OTHER: unit(0.3, 0, 1)}
    for q in ("What was the first car I drove?", "What car do I drive most recently?", "What car do I drive?"):
        table[q] = unit(1, 0)
    m = Memory(target, embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add(CAR_1, user_id="u", valid_from="2021-01-10")
    m.add(OTHER, user_id="u", valid_from="2022-02-01")
    m.add(CAR_2, user_id="u", valid_from="2022-03-05")
    m.add(CAR_3, user_id="u", valid_from="2024-03-05")
    return m


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    return tmp_path / "now.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.mark.parametrize("mode", ["hybrid", "dense", "keyword"])
def test_the_in_window_memory_ranks_first_among_equally_relevant_ones(target, mode):
    m = _classes(target)
    # 2024-05-20: "two weeks ago" is 2024-05-06; each of the three is the answer on its own date.
    for now, first in (("2024-05-20T09:00:00", MAY), ("2024-04-15", APRIL), (datetime(2024, 3, 15), MARCH)):
        hits = m.search(CLASS_Q, user_id="u", limit=3, mode=mode, reference_time=now)
        assert hits[0].text == first, (now, [h.text for h in hits])
        assert len(hits) == 3  # a boost, never a filter
    m.close()


def test_a_window_with_no_memory_inside_changes_nothing(target):
    m = _classes(target)
    plain = [h.id for h in m.search(CLASS_Q, user_id="u", limit=3)]
    far = [h.id for h in m.search(CLASS_Q, user_id="u", limit=3, reference_time="2030-01-01")]
    assert far == plain
    m.close()


def test_an_in_window_memory_is_pulled_up_from_below_the_cut(tmp_path):
    # 5 close memories, 55 loosely related ones, and the one of two weeks ago below all of them:
    # beyond the usual ranking's 50, found only by reading deeper.
    def at(cos: float):
        return unit(cos, (1 - cos * cos) ** 0.5)

    table = {CLASS_Q: unit(1, 0), MAY: at(0.44)}
    close = [f"I went to a meeting number {i} with Lena." for i in range(5)]
    loose = [f"Lena likes the colour number {i}." for i in range(55)]
    table.update({t: at(0.99 - 0.005 * i) for i, t in enumerate(close)})
    table.update({t: at(0.47 - 0.0005 * i) for i, t in enumerate(loose)})
    m = Memory(tmp_path / "deep.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    for t in close + loose:
        m.add(t, user_id="u", valid_from="2024-01-01")
    m.add(MAY, user_id="u", valid_from="2024-05-06")
    plain = m.search(CLASS_Q, user_id="u", limit=6, mode="dense", reference_time="2024-09-01")
    assert MAY not in [h.text for h in plain]
    hits = m.search(CLASS_Q, user_id="u", limit=6, mode="dense", reference_time="2024-05-20")
    assert [h.text for h in hits][:5] == [h.text for h in plain][:5] and hits[5].text == MAY
    m.close()


# Equally relevant chat turns (one vector): what each says about when is all that tells them apart.
TOLD = "Two weeks ago I went to a glass-blowing class with Lena."  # said later, tells of then
DATED = "I went to a weaving class with Lena."  # said then, tells of no day
ANSWER = "Today you went to a painting class with Lena, you said."  # the assistant's "today"
PLAIN = "I went to a sewing class with Lena."


def _told(target) -> Memory:
    # Each as close to the question as the others (cosine 0.6), and not versions of one another
    # (cosine 0.36 between any two, below the read path's version bar).
    table = {t: unit(0.6, *([0.0] * i), 0.8) for i, t in enumerate((TOLD, DATED, ANSWER, PLAIN))}
    table[CLASS_Q] = unit(1, 0)
    m = Memory(target, embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add([{"role": "assistant", "content": ANSWER}], user_id="u", valid_from="2024-05-06T10:00:00")
    m.add([{"role": "user", "content": DATED}], user_id="u", valid_from="2024-05-06T11:00:00")
    m.add([{"role": "user", "content": PLAIN}], user_id="u", valid_from="2024-04-01T10:00:00")
    m.add([{"role": "user", "content": TOLD}], user_id="u", valid_from="2024-05-19T10:00:00")
    return m


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_a_memory_that_tells_of_an_event_in_the_window_leads(target, mode):
    # Asked on 2024-05-20, "two weeks ago" is around 2024-05-06: TOLD was said on the 19th but
    # dates its class then; DATED and the assistant's ANSWER were said then; PLAIN in April.
    m = _told(target)
    hits = m.search(CLASS_Q, user_id="u", limit=4, mode=mode, reference_time="2024-05-20T09:00:00")
    texts = [h.text for h in hits]
    assert texts[0] == TOLD, texts
    assert texts.index(DATED) < texts.index(PLAIN), texts
    # the assistant's "today" dates no event: raised for its date, never above TOLD
    assert texts.index(ANSWER) > 0, texts
    # a month on, "two weeks ago" is June: TOLD's class is outside it, and so is every memory
    later = m.search(CLASS_Q, user_id="u", limit=4, mode=mode, reference_time="2024-06-20T09:00:00")
    with when_stage.stage_off():
        off = m.search(CLASS_Q, user_id="u", limit=4, mode=mode)
    assert [h.id for h in later] == [h.id for h in off]
    m.close()


@pytest.mark.parametrize("role, raised", [("assistant", False), ("user", True)])
def test_the_assistants_words_date_no_event(tmp_path, role, raised):
    # The same words said on 05-19 by either speaker: the user's tell of a class two weeks
    # before; the assistant's "two weeks ago" retells what it was told, or guesses.
    words = "Two weeks ago you went to a painting class with Lena."
    table = {words: unit(1, 0.2), PLAIN: unit(1, 0.2), CLASS_Q: unit(1, 0)}
    m = Memory(tmp_path / "told.db", embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add([{"role": "user", "content": PLAIN}], user_id="u", valid_from="2024-04-01T10:00:00")
    m.add([{"role": role, "content": words}], user_id="u", valid_from="2024-05-19T10:00:00")
    on = {h.text: h.score for h in m.search(CLASS_Q, user_id="u", limit=2, mode="dense",
                                            reference_time="2024-05-20T09:00:00")}
    with when_stage.stage_off():
        off = {h.text: h.score for h in m.search(CLASS_Q, user_id="u", limit=2, mode="dense")}
    assert (on[words] > off[words]) is raised
    assert on[PLAIN] == pytest.approx(off[PLAIN])
    m.close()


def test_most_recent_and_first_pick_the_right_version(target):
    m = _cars(target)
    latest = m.search("What car do I drive most recently?", user_id="u", mode="dense", limit=4,
                      reference_time="2024-06-01")
    assert latest[0].text == CAR_3
    plain = m.search("What car do I drive?", user_id="u", mode="dense", limit=4)
    assert plain[0].text == CAR_3
    first = m.search("What was the first car I drove?", user_id="u", mode="dense", limit=4,
                     reference_time="2024-06-01")
    cars = [h for h in first if h.text != OTHER]
    assert [h.text for h in cars] == [CAR_1, CAR_2, CAR_3]
    newest = next(h for h in first if h.text == CAR_3)
    assert cars[0].superseded_by == newest.id and newest.superseded_by is None
    # the order words need no reference time
    again = m.search("What was the first car I drove?", user_id="u", mode="dense", limit=4)
    assert [h.text for h in again if h.text != OTHER] == [CAR_1, CAR_2, CAR_3]
    m.close()


def test_no_reference_time_changes_nothing_without_time_words(target):
    m = _cars(target)
    for q in ("What car do I drive?", PLAIN_Q):
        for mode in ("hybrid", "dense", "keyword"):
            before = [(h.id, h.score, h.superseded_by) for h in m.search(q, user_id="u", mode=mode, limit=4)]
            with when_stage.stage_off():
                off = [(h.id, h.score, h.superseded_by) for h in m.search(q, user_id="u", mode=mode, limit=4)]
            dated = [(h.id, h.score, h.superseded_by)
                     for h in m.search(q, user_id="u", mode=mode, limit=4, reference_time="2024-06-01")]
            assert before == off == dated
    m.close()


def test_without_a_reference_time_an_old_store_ignores_the_window(tmp_path):
    # Memories of 2024 asked "two weeks ago" today: the store is an archive; nothing moves.
    m = _classes(tmp_path / "old.db")
    with when_stage.stage_off():
        off = [h.id for h in m.search(CLASS_Q, user_id="u", limit=3)]
    assert [h.id for h in m.search(CLASS_Q, user_id="u", limit=3)] == off
    m.close()


def test_without_a_reference_time_now_is_the_calls_time():
    now = datetime(2024, 5, 20, 9, tzinfo=timezone.utc)
    f = focus(CLASS_Q, None, clock=now)
    assert f is not None and f.implicit and f.window is not None and f.window.holds(datetime(2024, 5, 6, 12,
                                                                                          tzinfo=timezone.utc))
    pool = [(1, 0.9), (2, 0.9), (3, 0.9)]  # equally relevant
    recent = {1: "2024-03-01T10:00:00+00:00", 2: "2024-04-01T10:00:00+00:00", 3: "2024-05-06T10:00:00+00:00"}
    assert promote(pool, 3, recent, f) == ([(3, pytest.approx(0.9 * (1 + when_stage.WINDOW_BOOST))), (1, 0.9),
                                            (2, 0.9)], frozenset({3}))
    stale = {1: "2021-03-01T10:00:00", 2: "2021-04-01T10:00:00", 3: "2021-05-06T10:00:00"}
    f_old = focus("What did I do in May?", None, clock=now)
    assert f_old is not None and promote(pool, 3, stale, f_old) == (pool, frozenset())
    assert focus(PLAIN_Q, None, clock=now) is None


@pytest.mark.parametrize("bad", ["last tuesday", "2024-13-01", 20240501, ["2024-05-01"]])
def test_a_bad_reference_time_is_refused_with_the_value_and_the_fix(tmp_path, bad):
    m = Memory(tmp_path / "bad.db", embedder=TableEmbedder())
    m.add("I went to a pottery class.", user_id="u")
    with pytest.raises(InvalidInputError) as err:
        m.search("What did I do last week?", user_id="u", reference_time=bad)
    msg = str(err.value)
    assert "reference_time" in msg and str(bad)[:8] in msg and ("ISO-8601" in msg or "datetime" in msg)
    with pytest.raises(InvalidInputError):
        m.context("What did I do last week?", user_id="u", reference_time=bad)
    m.close()


def test_context_passes_the_reference_time(tmp_path):
    m = _classes(tmp_path / "ctx.db")
    text = m.context(CLASS_Q, user_id="u", limit=1, reference_time="2024-04-15")
    assert text == f"[1 April 2024] {APRIL}"
    m.close()


def test_async_memory_passes_the_reference_time_through(tmp_path):
    async def run() -> tuple[str, str]:
        async with AsyncMemory.wrap(_classes(tmp_path / "async.db")) as mem:
            hits = await mem.search(CLASS_Q, user_id="u", limit=3, reference_time="2024-03-15")
            text = await mem.context(CLASS_Q, user_id="u", limit=1, reference_time="2024-04-15")
            with pytest.raises(InvalidInputError):
                await mem.search(CLASS_Q, user_id="u", reference_time="soon")
            return hits[0].text, text

    first, text = asyncio.run(run())
    assert first == MARCH and APRIL in text


# A question about a time alone: what the memories say matters less than when they were said.
YESTERDAY_Q = "What happened yesterday?"
TOPIC_Q = "What concert did I go to yesterday?"
CONCERT = "I went to a jazz concert downtown."
CAT = "We adopted a cat named Miso."


def _yesterday(target) -> Memory:
    # The concert (four days before) is much closer to both questions than the cat.
    table = {CONCERT: unit(1, 0.3), CAT: unit(0.3, 1), YESTERDAY_Q: unit(1, 0.1), TOPIC_Q: unit(1, 0)}
    m = Memory(target, embedder=TableEmbedder(table=table), gate=GateConfig(profile="none"))
    m.add(CONCERT, user_id="u", valid_from="2024-05-30T10:00:00")
    m.add(CAT, user_id="u", valid_from="2024-06-02T10:00:00")
    return m


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_a_question_about_a_time_alone_puts_that_times_memories_first(target, mode):
    m = _yesterday(target)
    hits = m.search(YESTERDAY_Q, user_id="u", limit=2, mode=mode, reference_time="2024-06-03T09:00:00")
    assert [h.text for h in hits] == [CAT, CONCERT]
    # With a topic, the window is one signal among others: the concert, far closer, keeps its place.
    hits = m.search(TOPIC_Q, user_id="u", limit=2, mode=mode, reference_time="2024-06-03T09:00:00")
    assert hits[0].text == CONCERT
    m.close()


def test_asks_only_when_reads_the_words_outside_the_time_phrase():
    from memsieve.text.lexicon import ENGLISH

    assert ENGLISH.asks_only_when("What did I do last week?", "last week")
    assert ENGLISH.asks_only_when("Anything new this week?", "this week")
    assert not ENGLISH.asks_only_when("What did I buy last week?", "last week")
    assert not ENGLISH.asks_only_when("Who did I meet last week?", "last week")
