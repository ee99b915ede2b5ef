"""A thing done, told again word for word on another day, or folded by the LLM band, is kept.

The gate keeps a thing done told on another day from folding into a memory told then
(tests/test_gate_days.py). Two other folds skipped that rule: exact dedup, which folded "I went
to the gym this morning." told on Tuesday into the same words told on Monday (one visit left,
dated Monday), and the LLM band, whose NOOP folded such a text wherever the model pointed. Both
now store it as an event of its own, linked ``near`` the memory. Controls: the same words told on
one day, a state repeated on another day, and a history imported twice (each text with its own
day) are still folded. Real ONNX embedder and SQLite; the LLM's wrong fold comes from a scripted
server (the adversarial output this project scripts), with a table embedder that puts the text
in the band.
"""

from __future__ import annotations

import pytest

from conftest import unit
from memsieve import GateConfig, Memory
from memsieve.llm import LLMConfig
from scripted_llm import ScriptedLLM

_FILLER = ["Sam has a cat named Pixel.", "Sam works as a nurse at the city hospital.",
           "Sam's sister lives in Denver.", "Sam likes hiking on weekends."]
_MONDAY, _TUESDAY = "2024-03-04T08:00:00", "2024-03-05T08:00:00"

_EVENTS = ["I went to the gym this morning.", "Sam ran five miles along the river.",
           "We watched a movie at the old cinema downtown."]
_STATES = ["Sam lives in Portland.", "I love the smell of fresh bread.",
           # a set phrase in the past tells of nothing done: said again, it is said again
           "You got this!"]


def _repeat(path, text: str, *, first: str, later: str):
    mem = Memory(str(path))
    for t in _FILLER:
        mem.add(t, user_id="u", valid_from="2024-03-01T10:00:00")
    (a,) = mem.add(text, user_id="u", valid_from=first)
    (d,) = mem.add(text, user_id="u", valid_from=later)
    return mem, a, d


@pytest.mark.parametrize("text", _EVENTS)
def test_a_thing_done_repeated_on_one_day_is_an_exact_duplicate(tmp_path, text):
    mem, a, d = _repeat(tmp_path / "m.db", text, first=_MONDAY, later="2024-03-04T19:00:00")
    assert a.event == "ADD" and d.event == "NOOP" and d.layer == "exact", d.reason
    assert d.memory_id == a.memory_id
    mem.close()


@pytest.mark.parametrize("text", _EVENTS)
def test_a_thing_done_repeated_on_another_day_is_another_event(tmp_path, text):
    mem, a, d = _repeat(tmp_path / "m.db", text, first=_MONDAY, later=_TUESDAY)
    assert d.event == "ADD", d.reason
    assert "told on 2024-03-05" in d.reason and "told on 2024-03-04" in d.reason, d.reason
    assert d.linked_to == a.memory_id and d.link_kind == "near"
    dated = sorted(h.valid_from[:10] for h in mem.search(text, user_id="u", limit=5) if h.text == text)
    assert dated == ["2024-03-04", "2024-03-05"]  # both days are findable
    mem.close()


@pytest.mark.parametrize("text", _STATES)
def test_a_state_repeated_on_another_day_is_still_an_exact_duplicate(tmp_path, text):
    mem, a, d = _repeat(tmp_path / "m.db", text, first=_MONDAY, later=_TUESDAY)
    assert d.event == "NOOP" and d.layer == "exact" and d.memory_id == a.memory_id, d.reason
    mem.close()


_DATED = ["Sam ran the Boston marathon in 2019.", "I visited the Louvre on 12 March 2022."]


@pytest.mark.parametrize("text", _DATED)
def test_a_thing_done_that_names_its_date_repeated_on_another_day_is_an_exact_duplicate(tmp_path, text):
    # an agent saving a fact it already saved: the words say the day, so the fold loses nothing
    mem, a, d = _repeat(tmp_path / "m.db", text, first=_MONDAY, later=_TUESDAY)
    assert d.event == "NOOP" and d.layer == "exact" and d.memory_id == a.memory_id, d.reason
    mem.close()


def test_a_thing_done_that_names_its_year_reworded_on_another_day_is_folded(tmp_path):
    # the words carry the year, so a reader of the memory it folds into loses no day
    mem = Memory(str(tmp_path / "m.db"))
    for t in _FILLER:
        mem.add(t, user_id="u", valid_from="2024-03-01T10:00:00")
    (a,) = mem.add("Sam ran the Boston marathon in 2019 and loved the crowds.", user_id="u", valid_from=_MONDAY)
    (d,) = mem.add("In 2019 Sam ran the Boston marathon.", user_id="u", valid_from=_TUESDAY)
    assert d.event == "NOOP" and d.memory_id == a.memory_id, d.reason
    mem.close()


def test_a_history_imported_twice_is_stored_once(tmp_path):
    history = [{"content": t, "valid_from": day} for t, day in
               [(_EVENTS[0], _MONDAY), (_EVENTS[0], _TUESDAY), (_EVENTS[1], _TUESDAY), (_STATES[0], _MONDAY)]]
    mem = Memory(str(tmp_path / "m.db"))
    first = [d for ds in mem.add_many(history, user_id="u") for d in ds]
    again = [d for ds in mem.add_many(history, user_id="u") for d in ds]
    assert [d.event for d in first] == ["ADD"] * 4  # the gym told on two days: two visits
    assert [(d.event, d.layer) for d in again] == [("NOOP", "exact")] * 4, [d.reason for d in again]
    assert len(mem.get_all(user_id="u")) == 4
    mem.close()


# tau fixed at 0.1 with a band of 0.3: a text at cos 0.78 to its nearest memory goes to the LLM.
_GATE = GateConfig(profile="maxcos", tau=0.1, delta=0.3)
_CONCERT = "I went to a jazz concert downtown."
_AGAIN = "I went to a jazz concert in the city centre."


@pytest.fixture()
def band(tmp_path, table_embedder):
    table_embedder.table.update({_CONCERT: unit(1, 0, 0), _AGAIN: unit(1, 0.8, 0), "Sam lives in Portland.": unit(0, 0, 1)})
    with ScriptedLLM() as server:
        mem = Memory(tmp_path / "m.db", embedder=table_embedder, gate=_GATE,
                     llm=LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5))
        mem.add("Sam lives in Portland.", user_id="u", valid_from=_MONDAY)
        (a,) = mem.add(_CONCERT, user_id="u", valid_from=_MONDAY)
        yield mem, server, a
        mem.close()


def test_the_llm_band_does_not_fold_a_thing_done_on_another_day(band):
    mem, server, a = band
    server.reply_json({"event": "NOOP", "index": 0, "text": None, "reason": "already known"})
    (d,) = mem.add(_AGAIN, user_id="u", valid_from=_TUESDAY)
    assert server.requests, "the band must have asked the LLM"
    assert d.event == "ADD" and d.layer == "llm", d.reason
    assert d.reason.startswith("LLM: already known") and "an event of its own" in d.reason, d.reason
    assert d.linked_to == a.memory_id and d.link_kind == "near"
    assert {it.text for it in mem.get_all(user_id="u")} >= {_CONCERT, _AGAIN}


def test_the_llm_band_still_folds_a_thing_done_told_the_same_day(band):
    mem, server, a = band
    server.reply_json({"event": "NOOP", "index": 0, "text": None, "reason": "already known"})
    (d,) = mem.add(_AGAIN, user_id="u", valid_from="2024-03-04T21:00:00")
    assert d.event == "NOOP" and d.layer == "llm" and d.memory_id == a.memory_id, d.reason
    assert _AGAIN not in {it.text for it in mem.get_all(user_id="u")}


def test_the_llm_band_does_not_rewrite_a_thing_done_over_another_day(band):
    # The model calls the second concert an UPDATE of the first: a rewrite keeps Monday's day, so
    # one concert, dated Monday, would be left. It is stored as its own memory, Monday's kept as is.
    mem, server, a = band
    server.reply_json({"event": "UPDATE", "index": 0, "text": _AGAIN, "reason": "newer concert"})
    (d,) = mem.add(_AGAIN, user_id="u", valid_from=_TUESDAY)
    assert server.requests, "the band must have asked the LLM"
    assert d.event == "ADD" and d.layer == "llm", d.reason
    assert d.reason.startswith("LLM: newer concert") and "not rewritten" in d.reason, d.reason
    assert "2024-03-05" in d.reason and "2024-03-04" in d.reason, d.reason
    assert d.linked_to == a.memory_id and d.link_kind == "near"  # both concerts happened
    assert mem.get(a.memory_id).text == _CONCERT
    by_text = {it.text: it for it in mem.get_all(user_id="u")}
    assert by_text[_AGAIN].valid_from.startswith("2024-03-05"), by_text[_AGAIN].valid_from


def test_the_llm_band_still_rewrites_a_thing_done_told_the_same_day(band):
    mem, server, a = band
    server.reply_json({"event": "UPDATE", "index": 0, "text": _AGAIN, "reason": "same concert, better said"})
    (d,) = mem.add(_AGAIN, user_id="u", valid_from="2024-03-04T21:00:00")
    assert d.event == "UPDATE" and d.memory_id == a.memory_id, d.reason
    assert mem.get(a.memory_id).text == _AGAIN


_STATE, _DONE = "I am training for a half marathon.", "I ran a half marathon this morning."


def test_the_llm_band_stores_a_thing_done_the_model_would_write_over_a_state(tmp_path, table_embedder):
    # A thing done written over a state told on another day would carry the state's day; stored
    # apart, it is that memory's neighbour, not its newer version: the state is not retired.
    table_embedder.table.update({_STATE: unit(1, 0, 0), _DONE: unit(1, 0.8, 0)})
    with ScriptedLLM() as server:
        mem = Memory(tmp_path / "m.db", embedder=table_embedder, gate=_GATE,
                     llm=LLMConfig(base_url=server.base_url, model="scripted", retries=0, timeout=5))
        (a,) = mem.add(_STATE, user_id="u", valid_from=_MONDAY)
        server.reply_json({"event": "UPDATE", "index": 0, "text": "I ran a half marathon.", "reason": "done now"})
        (d,) = mem.add(_DONE, user_id="u", valid_from=_TUESDAY)
        assert server.requests, "the band must have asked the LLM"
        assert d.event == "ADD" and d.linked_to == a.memory_id and d.link_kind == "near", d.reason
        assert mem.get(a.memory_id).text == _STATE
        assert _DONE in {it.text for it in mem.get_all(user_id="u")}
        mem.close()
