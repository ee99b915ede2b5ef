"""The command line, run as a user would (in-process through main(), and one real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memsieve.cli import main
from memsieve.write.ingest import conversations, parse_locomo_date


@pytest.fixture()
def db(tmp_path, monkeypatch, embedder):
    # The CLI builds its own Memory; hand it the session's embedder so the model loads once.
    import memsieve.memory as memory_mod

    monkeypatch.setattr(memory_mod.Memory, "embedder", property(lambda self: embedder))
    return str(tmp_path / "cli.db")


def run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def strict_loads(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity (Python's default accepts them)."""
    return json.loads(text, parse_constant=_no_constant)


def test_strict_loads_refuses_what_python_accepts():
    assert json.loads("[NaN]")[0] != json.loads("[NaN]")[0]
    with pytest.raises(ValueError, match="NaN is not JSON"):
        strict_loads("[NaN]")


def test_add_search_get_history_stats_restore(capsys, db):
    out = strict_loads(run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db, "--json"))
    assert out[0]["event"] == "ADD"
    mid = out[0]["memory_id"]
    out = strict_loads(run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db, "--json"))
    assert out[0]["event"] == "NOOP" and out[0]["layer"] == "exact"
    rid = out[0]["rejection_id"]
    hits = strict_loads(run(capsys, "search", "what food to avoid", "--user", "ana", "--db", db, "--json"))
    assert hits[0]["id"] == mid
    assert strict_loads(run(capsys, "get", mid, "--db", db, "--json"))["text"] == "I am allergic to peanuts."
    hist = strict_loads(run(capsys, "history", mid, "--db", db, "--json"))
    assert [h["event"] for h in hist] == ["ADD", "NOOP"]
    rej = strict_loads(run(capsys, "rejections", "--user", "ana", "--db", db, "--json"))
    assert [r["id"] for r in rej] == [rid]
    restored = strict_loads(run(capsys, "restore", rid, "--db", db, "--json"))
    assert restored["text"] == "I am allergic to peanuts."
    stats = strict_loads(run(capsys, "stats", "--user", "ana", "--db", db, "--json"))
    assert stats["events"] == {"ADD": 1, "NOOP": 1, "RESTORE": 1}


def test_search_prints_what_was_folded_into_a_hit(capsys, db):
    market = "I love going to the farmers market on Saturday mornings to buy fresh vegetables."
    again = "I really love visiting the farmers market every Saturday morning for fresh vegetables and flowers."
    run(capsys, "add", "My sister Ana works as a nurse in Boston.", "--user", "ana", "--db", db)
    run(capsys, "add", market, "--user", "ana", "--db", db)
    (noop,) = strict_loads(run(capsys, "add", again, "--user", "ana", "--db", db, "--json"))
    assert noop["event"] == "NOOP", noop["reason"]
    hits = strict_loads(run(capsys, "search", "farmers market", "--user", "ana", "--db", db, "--json"))
    assert hits[0]["folded"][0]["id"] == noop["rejection_id"]
    text = run(capsys, "search", "farmers market", "--user", "ana", "--db", db)
    assert f"told again ({noop['rejection_id']}): {again}" in text
    assert text.index(market) < text.index("told again")
    dry = run(capsys, "forget", "the flowers", "--user", "ana", "--db", db, "--dry-run")
    assert dry.startswith("would remove 0 memories") and f"would take 1 folded texts out of search:\n  {noop['rejection_id']}  {again}" in dry
    as_json = strict_loads(run(capsys, "forget", "the flowers", "--user", "ana", "--db", db, "--dry-run", "--json"))
    assert as_json["removed"] == [] and [f["id"] for f in as_json["folds"]] == [noop["rejection_id"]]
    assert as_json["folds"][0]["forgotten_at"] is None and as_json["dry_run"] is True and as_json["purged"] is False
    done = run(capsys, "forget", "the flowers", "--user", "ana", "--db", db)
    assert f"took 1 folded texts out of search:\n  {noop['rejection_id']}" in done
    assert "told again" not in run(capsys, "search", "farmers market", "--user", "ana", "--db", db)


def test_errors_are_reported_not_raised(capsys, db):
    assert main(["add", "text", "--db", db]) == 2
    assert "at least one of user_id, agent_id or run_id" in capsys.readouterr().err
    assert main(["get", "nope", "--db", db]) == 2


def test_ingest_locomo_format(tmp_path, capsys, db):
    conv = {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "A", "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I adopted a puppy."},
                          {"speaker": "B", "dia_id": "D1:2", "text": "Lovely!", "blip_caption": "a small dog"}],
            # the same day: a thing done told again on another day would be another event
            "session_2_date_time": "10:00 pm on 8 May, 2023",
            "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "I adopted a puppy."}],
        },
    }
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([conv]))
    (cid, turns), = conversations(path)
    assert cid == "c1" and turns[1].text == "B: Lovely! [image: a small dog]"
    assert turns[0].valid_from == "2023-05-08T13:56:00" and turns[2].source == "D2:1"
    out = strict_loads(run(capsys, "ingest", str(path), "--db", db, "--json"))
    assert out == {"conversations": 1, "turns": 3, "events": {"ADD": 2, "NOOP": 1}}


def test_ingest_jsonl_messages(tmp_path, capsys, db):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"u{i}", "messages": [{"role": "user", "content": f"fact {i}"}]})
                              for i in range(2)))
    out = strict_loads(run(capsys, "ingest", str(path), "--db", db, "--json"))
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
    # The demo runs the whole write path and search: the eval package must stay unloaded throughout.
    proc = _python("import sys\nfrom memsieve.cli import main\nrc = main(['demo'])\n" + _NO_EVAL
                   + "sys.exit(rc or (3 if leaked else 0))\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "NOOP   [exact" in out and "NOOP   [novelty]" in out and "ADD    [novelty]" in out
    assert "why:" in out and "rejections (" in out
    # the allergy fact answers the demo's question
    search_block = out.split("search:")[1].split("rejections")[0]
    assert "peanuts" in search_block.splitlines()[1]


def test_json_is_strict_with_null_for_missing_numbers(capsys, db):
    first = strict_loads(run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db, "--json"))
    # The first memory of a scope has no neighbour: its novelty is missing, so null (it was NaN).
    assert first[0]["novelty"] is None and first[0]["nearest_cos"] is None
    dup = strict_loads(run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db, "--json"))
    assert dup[0]["layer"] == "exact"
    rej = strict_loads(run(capsys, "rejections", "--user", "ana", "--db", db, "--json"))
    assert len(rej) == 1 and all(v is None or v == v for v in rej[0].values())
    for argv in (("stats", "--user", "ana"), ("search", "peanuts", "--user", "ana", "--mode", "keyword")):
        strict_loads(run(capsys, *argv, "--db", db, "--json"))


def test_search_mode_is_checked_by_memory(capsys, db):
    run(capsys, "add", "I am allergic to peanuts.", "--user", "ana", "--db", db)
    assert main(["search", "food", "--user", "ana", "--mode", "bogus", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "'bogus'" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [("search", "q", "--user", "ana"), ("get", "some-id"), ("history", "some-id"),
                                  ("rejections", "--user", "ana"), ("stats", "--user", "ana")])
def test_read_commands_refuse_a_missing_database(tmp_path, capsys, argv):
    path = tmp_path / "no" / "such" / "folder" / "m.db"
    assert main([*argv, "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "--db" in err
    assert not (tmp_path / "no").exists()  # neither the file nor its folders were created


def test_read_command_refuses_a_missing_default_database(tmp_path, capsys, monkeypatch):
    path = tmp_path / "m.db"  # its folder exists: only the file is missing
    monkeypatch.setenv("MEMSIEVE_DB", str(path))
    assert main(["stats", "--user", "ana"]) == 2
    assert str(path) in capsys.readouterr().err and not path.exists()


@pytest.mark.parametrize("content", [b"garbage, not a database", b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_bad_database_file_is_one_error_line(tmp_path, capsys, content):
    path = tmp_path / "bad.db"
    path.write_bytes(content)
    for argv in (("stats", "--user", "ana"), ("add", "text", "--user", "ana")):
        assert main([*argv, "--db", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memsieve: error: ") and err.count("\n") == 1 and str(path) in err
    assert path.read_bytes() == content


def test_ingest_errors_are_one_line(tmp_path, capsys, db):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for path in (tmp_path / "missing.json", tmp_path, deep, binary):
        assert main(["ingest", str(path), "--db", db]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memsieve: error: ") and err.count("\n") == 1 and str(path) in err


def test_ingest_skips_turns_that_are_not_objects(tmp_path, capsys, db):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps([{"sample_id": "x", "conversation": {
        "session_1": "not a list", "session_2_date_time": "9:05 am on 3 June, 2023",
        "session_2": [1, None, {"speaker": "A", "text": "I moved to Porto."}]}}]))
    (cid, turns), = conversations(path)
    assert [t.text for t in turns] == ["A: I moved to Porto."] and turns[0].valid_from == "2023-06-03T09:05:00"
    assert strict_loads(run(capsys, "ingest", str(path), "--db", db, "--json"))["events"] == {"ADD": 1}


def _python(code: str, *, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


_NO_EVAL = ("leaked = sorted(m for m in sys.modules if m.startswith('memsieve.eval'))\n"
            "print('LEAKED', leaked, file=sys.stderr) if leaked else None\n")


def test_runtime_never_imports_the_eval_package(tmp_path):
    db = tmp_path / "m.db"
    code = ("import sys, memsieve, memsieve.cli\n"
            "memsieve.cli.build_parser()\n"
            f"assert memsieve.cli.main(['add', 'I like tea.', '--user', 'u', '--db', {str(db)!r}]) == 0\n"
            f"assert memsieve.cli.main(['search', 'tea', '--user', 'u', '--db', {str(db)!r}]) == 0\n"
            + _NO_EVAL + "sys.exit(3 if leaked else 0)\n")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert "LEAKED" not in proc.stderr and "I like tea." in proc.stdout


def test_eval_without_its_extra_names_the_install_command(tmp_path):
    # A None entry in sys.modules makes "import matplotlib" raise ImportError, as if it were not installed.
    code = ("import sys\nsys.modules['matplotlib'] = None\nfrom memsieve.cli import main\n"
            f"sys.exit(main(['eval', 'locomo', 'data.json', '--out', {str(tmp_path / 'o')!r}]))\n")
    proc = _python(code, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and 'pip install "memsieve[eval]"' in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()


def test_eval_subcommands_come_from_the_registry(capsys):
    from memsieve.eval.commands import BENCHMARKS

    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert BENCHMARKS and all(name in out for name in BENCHMARKS)


def test_demo_json_is_one_strict_object_with_prose_on_stderr():
    proc = subprocess.run([sys.executable, "-m", "memsieve.cli", "demo", "--json"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = strict_loads(proc.stdout)
    assert {d["event"] for d in out["decisions"]} >= {"ADD", "NOOP"}
    assert "peanuts" in out["search"][0]["text"] and out["stats"]["active_memories"] >= 1
    assert "memsieve demo:" in proc.stderr and "rejections (" in proc.stderr


# ---- sixth review: refused before the store is opened, one line, the right line number ----------------------

@pytest.mark.parametrize("argv", [["add", "", "--user", "ana"], ["add", "I adopted a kitten."],
                                  ["ingest", "FILE", "--batch-size", "0"]])
def test_a_refused_creating_command_leaves_no_database(tmp_path, capsys, argv):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps([{"id": "c1", "messages": [{"role": "user", "content": "I adopted a kitten."}]}]))
    db = tmp_path / "never.db"
    assert main([a.replace("FILE", str(path)) for a in argv] + ["--db", str(db)]) == 2
    assert capsys.readouterr().err.startswith("memsieve: error: ")
    assert not db.exists()


def test_all_scopes_with_a_scope_is_refused(capsys, db):
    run(capsys, "add", "I am allergic to peanuts.", "--user", "bob", "--db", db)
    assert main(["consolidate", "--all-scopes", "--user", "ana", "--db", db]) == 2
    assert "--all-scopes consolidates every scope" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["search", "x", "--user", "u", "--limit", "ten"], ["add", "--user", "u"],
                                  ["rejections", "--user", "u", "--layer", "Exact"], ["frobnicate"]])
def test_a_usage_error_is_one_line(capsys, argv):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memsieve: error: ") and "--help" in lines[0]


def test_a_bad_jsonl_line_is_named_by_its_number(tmp_path, capsys, db):
    good = json.dumps({"id": "c1", "messages": [{"role": "user", "content": "hi there"}]})
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join([good] * 5 + [good[:-2]]) + "\n")
    assert main(["ingest", str(path), "--db", db]) == 2
    assert "at line 6, column" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["eval", "updates", "--ids", "detail-01", "--out", "FILE"], "is a file; pass a folder"),
    (["eval", "forget", "--ids", "self-01", "--out", "DIR"], "is a folder; pass the path"),
    (["eval", "forget", "--ids", "self-01", "--out", "DIR/missing/out.json"], "does not exist"),
    (["eval", "locomo", "FILE", "--out", "DIR/o", "--memsieve-gate", "bogus=1"], "names no GateConfig option"),
    (["eval", "locomo", "FILE", "--out", "DIR/o", "--memsieve-gate", "gamma=-3"], "gamma"),
])
def test_an_eval_refuses_what_it_could_not_finish_before_any_work(tmp_path, capsys, argv, said):
    file = tmp_path / "a.txt"
    file.write_text("x")
    assert main([a.replace("FILE", str(file)).replace("DIR", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memsieve: error: ") and said in err and err.count("\n") == 1, err
