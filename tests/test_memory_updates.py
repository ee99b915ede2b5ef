"""What is said later reaches search, with the default gate and the real embedder:
new details, corrections, negations and later events are stored as newer versions,
paraphrases stay NOOPs, and a later fact about the same person is not taken for a
version. Texts are this file's own, not the updates set's."""

from __future__ import annotations

import math

import pytest

from memsieve import Memory


def _say(m: Memory, scope: str, *turns: tuple[str, str]):
    out = []
    for text, day in turns:
        out.append(m.add(text, user_id=scope, valid_from=day))
    return out


def test_a_negation_close_to_the_fact_reaches_the_band_as_its_newer_version(mem):
    (first,), (neg,) = _say(mem, "u", ("I sing in the church choir every Sunday.", "2024-03-01"),
                            ("I don't sing in the church choir anymore.", "2024-06-01"))
    assert neg.event == "ADD" and neg.layer == "band" and neg.link_kind == "updates"
    assert neg.linked_to == first.memory_id
    assert "says a change" in neg.reason and "anymore" in neg.reason
    hits = mem.search("Do I still sing in a choir?", user_id="u", limit=5)
    assert hits[0].text == neg.text and hits[1].superseded_by == hits[0].id
    assert [h.text for h in mem.search("Do I still sing in a choir?", user_id="u", limit=5,
                                       current_only=True)] == [neg.text]


def test_a_change_cue_the_nearest_memory_already_says_is_not_new(mem):
    (_,), (again,) = _say(mem, "u", ("I don't eat red meat anymore.", "2024-03-01"),
                          ("I don't eat red meat anymore, honestly.", "2024-03-02"))
    assert again.event == "NOOP", again.reason


def test_a_later_event_worded_apart_ranks_above_the_fact_it_ends(mem):
    _say(mem, "u", ("I work as a courier for Hollis Freight.", "2024-01-10"),
         ("I quit Hollis Freight after the summer.", "2024-09-20"))
    hits = mem.search("Who do I work for?", user_id="u", limit=5)
    assert hits[0].text.startswith("I quit") and hits[1].superseded_by == hits[0].id


def test_a_later_fact_about_the_same_person_is_not_a_version(mem):
    _say(mem, "u", ("My cousin Farid is a welder in Rotterdam.", "2024-01-10"),
         ("My cousin Farid now plays padel twice a week.", "2024-05-20"))
    # Both share only the person (and the newer says "now"): freshness must not
    # group them, so neither is marked superseded and current_only hides nothing.
    hits = mem.search("What is Farid's trade?", user_id="u", limit=5)
    assert len(hits) == 2 and all(h.superseded_by is None for h in hits)
    assert len(mem.search("What is Farid's trade?", user_id="u", limit=5, current_only=True)) == 2


# Paraphrases that rebuild the sentence. One that keeps it and puts a word in place
# ("My bicycle is kept in ...", "We celebrate our ...") is stored: the gate cannot tell
# such a word from a changed value ("My bike is blue" / "green"; tests/test_gate_restated.py).
@pytest.mark.parametrize("first, again", [
    ("I keep my bicycle in the hallway.", "The hallway is where my bicycle is kept."),
    ("Our wedding anniversary is on 3 May.", "3 May is our wedding anniversary."),
])
def test_paraphrases_with_common_new_words_stay_noops(mem, first, again):
    (_,), (d,) = _say(mem, "u", (first, "2024-01-01"), (again, "2024-02-01"))
    assert d.event == "NOOP", d.reason
    assert mem.rejections(user_id="u")[0].text == again


def test_a_detail_with_a_rare_word_is_kept(mem):
    (_,), (d,) = _say(mem, "u", ("My nephew Oren has a pet.", "2024-01-01"),
                      ("My nephew Oren has a pet: a chameleon.", "2024-02-01"))
    assert d.event == "ADD" and d.link_kind == "updates", d.reason
    assert "chameleon" in mem.search("What pet does Oren have?", user_id="u", limit=5)[0].text


def test_every_gated_decision_reports_both_signals(mem):
    texts = ["I grow chillies on the balcony.", "My chillies are ripening on the balcony.",
             "The quarterly tax return is due in April.", "I grow chillies on the balcony!"]
    decisions = [d for t in texts for d in mem.add(t, user_id="u")]
    assert decisions[0].reason == "first memory of this scope"
    scored = [d for d in decisions[1:] if d.layer != "exact"]
    assert scored and all(math.isfinite(d.novelty) and math.isfinite(d.information) for d in scored)
    added = [d for d in scored if d.layer == "novelty" and d.event == "ADD"]
    assert added and all("information" in d.reason for d in added)



_INFO_SCRIPT = r"""
import sys
from memsieve import Memory
from memsieve.write.ingest import conversations
cid, ts = conversations(sys.argv[2])[0]
m = Memory(sys.argv[1])
for ds in m.add_many([t.text for t in ts[:400]], user_id=cid):
    for d in ds:
        print(repr(d.information), d.event, d.layer)
"""


@pytest.mark.slow
def test_the_information_term_is_the_same_float_in_every_process(tmp_path):
    """The netting sums run in a fixed order, not a set's hash-seed order, so
    a decision's floats do not depend on PYTHONHASHSEED (400 LoCoMo dev turns)."""
    import os
    import subprocess
    import sys

    from conftest import shared_data

    locomo = shared_data("data/locomo/locomo_dev.json", what="the LoCoMo dev split")
    outs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1"}
        run = subprocess.run([sys.executable, "-c", _INFO_SCRIPT, str(tmp_path / f"m{seed}.db"), str(locomo)],
                             capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        outs.append(run.stdout.splitlines())
    assert len(outs[0]) == 400
    for other in outs[1:]:
        assert [i for i, (a, b) in enumerate(zip(outs[0], other)) if a != b] == []
