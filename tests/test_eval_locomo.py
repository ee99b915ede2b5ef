"""The LoCoMo loader on a small conversation written here in LoCoMo's schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsieve.eval.locomo import (LocomoFormatError, check_category_labels, load_locomo, parse_dia_ids,
                                  parse_session_date)


def synthetic_sample(sample_id: str = "conv-x") -> dict:
    """Two sessions, an image turn, messy evidence, a list-valued fact source,
    a malformed fact and a session with no observation."""
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat named Miso last week. "},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I started learning the violin.",
                 "blip_caption": "a photo of a violin on a chair", "img_url": ["x"]},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "My sister lives in Lisbon now."},
            ],
            "session_2_date_time": "10:04 am on 20 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I played my first violin concert in Porto."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Miso the cat knocked over my coffee today."},
            ],
            "session_3_date_time": "garbled date",
            "session_3": [],
        },
        "observation": {
            "session_1_observation": {
                "Ana": [["Ana adopted a grey cat named Miso.", "D1:1"],
                        ["Ana's sister lives in Lisbon.", ["D1:3", "D1:1"]],
                        ["no source here"],
                        "not a fact at all"],
                "Ben": [["Ben is learning the violin.", "D1:2; D2:1"]],
            },
        },
        "qa": [
            {"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
            {"question": "When did Ben play a concert?", "answer": "June 2023", "evidence": ["D:2:1", "D1:"],
             "category": 2},
            {"question": "Where does Ana's sister live?", "answer": "Lisbon", "evidence": ["D:1", "", "D9:9"],
             "category": 1},
            {"question": "What instrument did Ana learn?", "evidence": ["D1:2"], "category": 5,
             "adversarial_answer": "violin"},
            {"question": "How many years is 2023?", "answer": 2023, "evidence": ["D1:1; D2:2"], "category": 3},
        ],
    }


def write_synthetic(tmp_path: Path, samples: list[dict] | None = None) -> Path:
    path = tmp_path / "locomo_synth.json"
    path.write_text(json.dumps(samples or [synthetic_sample()]))
    return path


def test_turns_stream_has_speaker_caption_source_and_session_date(tmp_path):
    ds = load_locomo(write_synthetic(tmp_path))
    conv = ds.conversations[0]
    sessions = conv.stream("turns")
    assert [s.index for s, _ in sessions] == [1, 2]  # the empty session 3 is skipped
    calls = sessions[0][1]
    assert all(len(call) == 1 for call in calls)
    first, image = calls[0][0], calls[1][0]
    assert first.text == "Ana: I adopted a grey cat named Miso last week."
    assert image.text == "Ben: Lovely! I started learning the violin. [image: a photo of a violin on a chair]"
    assert image.sources == ("D1:2",)
    assert first.valid_from == "2023-05-08T13:56:00"
    assert sessions[1][1][0][0].valid_from == "2023-06-20T10:04:00"
    assert ds.counts.turns_with_image == 1


def test_observations_group_facts_by_speaker_and_keep_every_source(tmp_path):
    ds = load_locomo(write_synthetic(tmp_path))
    conv = ds.conversations[0]
    obs = conv.stream("observations")
    s1_calls = obs[0][1]
    assert [len(c) for c in s1_calls] == [3, 1]  # Ana's 3 usable facts in one call, Ben's 1
    ana = s1_calls[0]
    assert ana[0].sources == ("D1:1",)
    assert ana[1].sources == ("D1:3", "D1:1")
    assert ana[2].sources == ()  # a fact without a dia_id is kept, with no source
    assert s1_calls[1][0].sources == ("D1:2", "D2:1")  # "D1:2; D2:1" split in two
    assert obs[1][1] == []  # session 2 has no observation
    c = ds.counts
    assert c.facts_malformed == 1 and c.facts_without_source == 1
    assert c.sessions_without_observation == 1
    assert c.fact_ids_repaired == 1


def test_malformed_evidence_is_repaired_or_counted_never_raised(tmp_path):
    ds = load_locomo(write_synthetic(tmp_path))
    qs = {q.index: q for q in ds.conversations[0].questions}
    assert qs[1].evidence == ("D2:1",)  # "D:2:1" repaired, "D1:" unusable
    assert qs[2].evidence == ()  # "D:1", "" unusable; "D9:9" names no turn
    assert qs[4].evidence == ("D1:1", "D2:2")
    c = ds.counts
    assert c.evidence_repaired == 1
    assert c.evidence_malformed == 3  # "D1:", "D:1", ""
    assert c.evidence_unknown_turn == 1
    assert c.evidence_split == 1
    assert c.questions_without_evidence == 1


def test_answers_are_strings_and_category_five_keeps_only_its_distractor(tmp_path):
    ds = load_locomo(write_synthetic(tmp_path))
    qs = ds.conversations[0].questions
    assert qs[4].answer == "2023"
    assert qs[3].answer is None and qs[3].adversarial_answer == "violin"
    assert qs[0].qid == "conv-x/0"


@pytest.mark.parametrize("raw, ids", [
    ("D1:3", ["D1:3"]), ("D:11:26", ["D11:26"]), ("D8:6; D9:17", ["D8:6", "D9:17"]),
    ("D26:14, D26:34", ["D26:14", "D26:34"]), (["D1:1", "D1:1"], ["D1:1"]),
    ("D", []), ("D1:", []), ("", []), (None, []), (7, []),
])
def test_parse_dia_ids(raw, ids):
    assert parse_dia_ids(raw)[0] == ids


def test_session_dates_parse_or_give_none():
    assert parse_session_date("7:55 pm on 9 June, 2023") == "2023-06-09T19:55:00"
    assert parse_session_date("12:09 am on 13 September, 2023") == "2023-09-13T00:09:00"
    assert parse_session_date("garbled") is None
    assert parse_session_date(None) is None


def test_not_locomo_and_unknown_conversation_are_typed_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"a": 1}))
    with pytest.raises(LocomoFormatError, match="expected a list of samples"):
        load_locomo(bad)
    with pytest.raises(LocomoFormatError, match=r"conv-404"):
        load_locomo(write_synthetic(tmp_path), conversations=["conv-404"])


def test_category_check_flags_a_swapped_map(tmp_path):
    ds = load_locomo(write_synthetic(tmp_path))
    questions = list(ds.conversations[0].questions)
    ok = check_category_labels(questions)
    temporal = next(c for c in ok["checks"] if c["label"] == "temporal")
    assert temporal["ok"] and temporal["winner"] == 2
    # Relabel the "When" question as single-hop and the cat question as temporal.
    from dataclasses import replace
    swapped = [replace(q, category={2: 4, 4: 2}.get(q.category, q.category)) for q in questions]
    bad = check_category_labels(swapped)
    assert not bad["consistent"]
    assert not next(c for c in bad["checks"] if c["label"] == "temporal")["ok"]


def test_a_text_gate_override_reaches_the_arm_and_its_label():
    from memsieve.eval.arms import memsieve_spec
    from memsieve.eval.runner import _gate_overrides

    over = _gate_overrides("gamma=0.6,vectors=int8")
    assert over == {"gamma": 0.6, "vectors": "int8"}
    spec = memsieve_spec(**over)
    assert spec.label == "memsieve gamma=0.6 vectors=int8"
    assert spec.gate == {"profile": "memsieve", "gamma": 0.6, "vectors": "int8"}
