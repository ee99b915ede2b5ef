"""The command line, run as a user would (in-process through main(), and one real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memsieve.cli import main
from memsieve.ingest import conversations, parse_locomo_date


@pytest.fixture()
def db(tmp_path, monkeypatch, embedder):
    # The CLI builds its own Memory; hand it the session's embedder so the model loads once.
    import memsieve.memory as memory_mod

    monkeypatch.setattr(memory_mod.Memory, "embedder", property(lambda self: embedder))
    return str(tmp_path / "cli.db")


def run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_add_search_get_history_stats_restore(capsys, db):
    out = json.loads(run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db, "--json"))
    assert out[0]["event"] == "ADD"
    mid = out[0]["memory_id"]
    out = json.loads(run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db, "--json"))
    assert out[0]["event"] == "NOOP" and out[0]["layer"] == "exact"
    rid = out[0]["rejection_id"]
    hits = json.loads(run(capsys, "search", "what food to avoid", "--user", "ana", "--db", db, "--json"))
    assert hits[0]["id"] == mid
    assert json.loads(run(capsys, "get", mid, "--db", db, "--json"))["text"] == "I am allergic to peanuts."
    hist = json.loads(run(capsys, "history", mid, "--db", db, "--json"))
    assert [h["event"] for h in hist] == ["ADD", "NOOP"]
    rej = json.loads(run(capsys, "rejections", "--user", "ana", "--db", db, "--json"))
    assert [r["id"] for r in rej] == [rid]
    restored = json.loads(run(capsys, "restore", rid, "--db", db, "--json"))
    assert restored["text"] == "I am allergic to peanuts."
    stats = json.loads(run(capsys, "stats", "--user", "ana", "--db", db, "--json"))
    assert stats["events"] == {"ADD": 1, "NOOP": 1, "RESTORE": 1}


def test_errors_are_reported_not_raised(capsys, db):
    assert main(["add", "text", "--db", db]) == 2
    assert "user_id=, agent_id= or run_id=" in capsys.readouterr().err
    assert main(["get", "nope", "--db", db]) == 2


def test_ingest_locomo_format(tmp_path, capsys, db):
    conv = {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "A", "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I adopted a puppy."},
                          {"speaker": "B", "dia_id": "D1:2", "text": "Lovely!", "blip_caption": "a small dog"}],
            "session_2_date_time": "10:00 am on 9 May, 2023",
            "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "I adopted a puppy."}],
        },
    }
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([conv]))
    (cid, turns), = conversations(path)
    assert cid == "c1" and turns[1].text == "B: Lovely! [image: a small dog]"
    assert turns[0].valid_from == "2023-05-08T13:56:00" and turns[2].source == "D2:1"
    out = json.loads(run(capsys, "ingest", str(path), "--db", db, "--json"))
    assert out == {"conversations": 1, "turns": 3, "events": {"ADD": 2, "NOOP": 1}}


def test_ingest_jsonl_messages(tmp_path, capsys, db):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"u{i}", "messages": [{"role": "user", "content": f"fact {i}"}]})
                              for i in range(2)))
    out = json.loads(run(capsys, "ingest", str(path), "--db", db, "--json"))
    assert out["conversations"] == 2 and out["events"] == {"ADD": 2}


def test_ingest_rejects_garbage(tmp_path, capsys, db):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    assert main(["ingest", str(path), "--db", db]) == 2
    assert "neither JSON nor JSONL" in capsys.readouterr().err


def test_locomo_date_parsing():
    assert parse_locomo_date("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00"
    assert parse_locomo_date("garbage") is None


def test_demo_runs_end_to_end_as_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "memsieve.cli", "demo"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "NOOP   [exact" in out and "NOOP   [novelty]" in out and "ADD    [novelty]" in out
    assert "why:" in out and "rejections (" in out
    # the allergy fact answers the demo's question
    search_block = out.split("search:")[1].split("rejections")[0]
    assert "peanuts" in search_block.splitlines()[1]
