"""``memsieve consolidate`` and ``memsieve unconsolidate`` end to end (real SQLite, the real embedder)."""

from __future__ import annotations

import json

from memsieve import GateConfig, Memory
from memsieve.cli import main

TEXTS = ["I love hiking in the mountains on weekends", "I love hiking in the mountains on weekends.",
         "The cat is named Miso"]


def fill(path, embedder) -> None:
    with Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as mem:
        for user in ("ana", "bo"):
            for k, text in enumerate(TEXTS):
                mem.add(text, user_id=user, source=f"{user}{k}")


def active(path, embedder, user: str) -> int:
    with Memory(path, embedder=embedder) as mem:
        return len(mem.get_all(user_id=user))


def test_dry_run_all_scopes_lists_and_writes_nothing(tmp_path, embedder, capsys):
    db = tmp_path / "c.db"
    fill(db, embedder)
    assert main(["consolidate", "--all-scopes", "--dry-run", "--json", "--db", str(db)]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["scope"]["user_id"] for r in reports] == ["ana", "bo"]
    assert all(r["dry_run"] and len(r["merges"]) == 1 and r["merges"][0]["id"] is None for r in reports)
    assert active(db, embedder, "ana") == active(db, embedder, "bo") == 3


def test_consolidate_one_scope_then_undo(tmp_path, embedder, capsys):
    db = tmp_path / "c.db"
    fill(db, embedder)
    assert main(["consolidate", "--user", "ana", "--json", "--db", str(db)]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["active_before"] == 3 and report["active_after"] == 2
    assert active(db, embedder, "ana") == 2 and active(db, embedder, "bo") == 3
    merge_id = report["merges"][0]["id"]
    assert main(["unconsolidate", merge_id, "--db", str(db)]) == 0
    assert "restored 1 memories" in capsys.readouterr().out
    assert active(db, embedder, "ana") == 3


def test_bad_input_is_one_error_line(tmp_path, embedder, capsys):
    db = tmp_path / "c.db"
    fill(db, embedder)
    assert main(["consolidate", "--user", "ana", "--min-sim", "3", "--db", str(db)]) == 2
    assert "min_sim must be a cosine in (0, 1], got float 3.0" in capsys.readouterr().err
    assert main(["consolidate", "--db", str(db)]) == 2
    assert "no scope given" in capsys.readouterr().err
    assert main(["unconsolidate", "nope", "--db", str(db)]) == 2
    assert "no merge with id 'nope'" in capsys.readouterr().err
