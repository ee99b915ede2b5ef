"""`memsieve ingest` on readable but malformed files: one error line, exit 2, and nothing stored.

Each file is checked whole before anything is written, so a bad conversation
anywhere in it (the second one included) leaves the database without a memory.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import TableEmbedder

from memsieve import Memory
from memsieve.cli import main
from memsieve.scope import Scope


@pytest.fixture()
def db(tmp_path, monkeypatch):
    # A fake embedder keeps these tests fast; the checks under test run before any embedding.
    import memsieve.memory as memory_mod

    fake = TableEmbedder()
    monkeypatch.setattr(memory_mod.Memory, "embedder", property(lambda self: fake))
    return str(tmp_path / "ingest.db")


def stored(db: str, *user_ids: str) -> dict[str, list[str]]:
    """The texts the database holds, per scope: every scope it knows and each of ``user_ids``."""
    if not os.path.exists(db):
        return {}
    with Memory(db) as mem:
        scopes = [Scope.from_key(k) for k in mem.store.scope_keys()] + [Scope.of(user_id=u) for u in user_ids]
        found = {s.key: [m.text for m in mem.get_all(**s.as_dict(), include_inactive=True)] for s in scopes}
    return {k: v for k, v in found.items() if v}


def refused(capsys, path, db: str, *extra: str) -> str:
    """Run ``memsieve ingest``; assert it failed with one `memsieve: error:` line and return that line."""
    assert main(["ingest", str(path), "--db", db, *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("memsieve: error: ") and captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    return captured.err


def write(tmp_path, data, name: str = "convs.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _plain(conv_id: str, text: str, **msg) -> dict:
    return {"id": conv_id, "messages": [{"role": "user", "content": text, **msg}]}


def test_locomo_session_key_with_a_leading_zero_is_named(tmp_path, capsys, db):
    path = write(tmp_path, {"sample_id": "c1", "conversation": {
        "session_01": [{"speaker": "Ana", "text": "I live in Oslo"}]}})
    err = refused(capsys, path, db)
    assert stored(db, "c1") == {}
    assert "conversation 1 ('c1')" in err and "'session_01'" in err and "'session_1'" in err


def test_a_turn_whose_text_is_a_number_is_named(tmp_path, capsys, db):
    path = write(tmp_path, {"id": "c1", "sessions": [{"turns": [{"text": "I live in Oslo"}, {"text": 5}]}]})
    err = refused(capsys, path, db)
    assert stored(db, "c1") == {}
    assert "conversation 1 ('c1')" in err and "session 1, turn 2" in err and "must be a string" in err


def test_multi_part_content_keeps_its_text_parts(tmp_path, capsys, db):
    path = write(tmp_path, {"id": "c1", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "I live in Oslo."},
        {"type": "image_url", "image_url": {"url": "https://example.org/oslo.png"}},
        {"type": "text", "text": "I moved there in 2019."}]}]})
    assert main(["ingest", str(path), "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"] == {"ADD": 1}
    assert stored(db) == {Scope.of(user_id="c1").key: ["user: I live in Oslo.\nI moved there in 2019."]}


def test_a_malformed_content_part_is_named(tmp_path, capsys, db):
    path = write(tmp_path, [_plain("c1", "I live in Oslo."),
                            {"id": "c2", "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}])
    err = refused(capsys, path, db)
    assert stored(db, "c1", "c2") == {}
    assert "conversation 2 ('c2')" in err and "message 1 content part 1" in err


def test_a_bad_date_in_the_second_conversation_stores_nothing(tmp_path, capsys, db):
    path = write(tmp_path, [_plain("conv-one", "My sister Zelphine lives in Bergen."),
                            _plain("conv-two", "I play chess on Fridays.", date="last tuesday")])
    err = refused(capsys, path, db)
    assert stored(db, "conv-one", "conv-two") == {}
    assert "conversation 2 ('conv-two')" in err and "'last tuesday'" in err and "ISO-8601" in err


def test_a_bad_locomo_session_date_in_the_second_conversation_stores_nothing(tmp_path, capsys, db):
    def locomo(cid: str, date: str) -> dict:
        return {"sample_id": cid, "conversation": {
            "session_1_date_time": date, "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": f"{cid} fact"}]}}

    path = write(tmp_path, [locomo("c1", "1:56 pm on 8 May, 2023"), locomo("c2", "sometime in spring")])
    err = refused(capsys, path, db)
    assert stored(db, "c1", "c2") == {}
    assert "conversation 2 ('c2')" in err and "session_1_date_time" in err and "'sometime in spring'" in err


def test_a_control_character_in_the_second_conversation_id_stores_nothing(tmp_path, capsys, db):
    path = write(tmp_path, [_plain("conv-one", "My sister Zelphine lives in Bergen."),
                            _plain("conv\x01two", "I play chess on Fridays.")])
    err = refused(capsys, path, db)
    assert stored(db, "conv-one") == {}
    assert "conversation 2 of" in err and "control character" in err and "--user" in err


def test_a_nul_in_the_second_conversation_text_stores_nothing(tmp_path, capsys, db):
    path = write(tmp_path, [_plain("conv-one", "My sister Zelphine lives in Bergen."),
                            _plain("conv-two", "I play chess\x00 on Fridays.")])
    err = refused(capsys, path, db)
    assert stored(db, "conv-one", "conv-two") == {}
    assert "conversation 2 ('conv-two')" in err and "message 1 text" in err and "NUL" in err


def test_a_bad_turn_id_in_the_second_conversation_stores_nothing(tmp_path, capsys, db):
    path = write(tmp_path, [_plain("conv-one", "My sister Zelphine lives in Bergen."),
                            _plain("conv-two", "I play chess on Fridays.", id=["a", "b"])])
    err = refused(capsys, path, db)
    assert stored(db, "conv-one", "conv-two") == {}
    assert "conversation 2 ('conv-two')" in err and "message 1 id" in err


def test_a_bad_turn_in_a_jsonl_file_with_one_scope_stores_nothing(tmp_path, capsys, db):
    path = tmp_path / "convs.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in [
        _plain("conv-one", "My sister Zelphine lives in Bergen."),
        {"id": "conv-two", "messages": [{"role": {"name": "user"}, "content": "I play chess on Fridays."}]}]))
    err = refused(capsys, path, db, "--user", "ana")
    assert stored(db, "ana") == {}
    assert "conversation 2 ('conv-two')" in err and "role must be a string" in err


def test_a_message_of_only_invisible_characters_is_skipped_not_fatal(tmp_path, capsys, db):
    # Real chat logs hold messages of a lone zero-width space; the library refuses such a text
    # as empty, so the reader skips it (as a blank one) and the rest of the log goes in.
    path = write(tmp_path, {"id": "c1", "messages": [
        {"role": "user", "content": "I live in Oslo."}, {"role": "assistant", "content": "\u200b"},
        {"role": "user", "content": " \u200d\ufeff "}, {"role": "user", "content": "I moved there in 2019."}]})
    assert main(["ingest", str(path), "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"] == {"ADD": 2}
    assert stored(db) == {Scope.of(user_id="c1").key: ["user: I live in Oslo.", "user: I moved there in 2019."]}
