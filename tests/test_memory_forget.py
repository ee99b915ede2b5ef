"""Memory.forget: a request in the user's words removes what it names, in one scope only."""

from __future__ import annotations

import pytest

from memsieve import GateConfig, Memory

FACTS = ["I live at 8 Juniper Close.", "We moved, the new place is 31 Harbour View.",
         "My neighbour Oskar grows tomatoes.", "My locker code is zebra-kumquat-8812."]


@pytest.fixture(params=["sqlite", "postgres"])
def filled(request, tmp_path, embedder):
    target = tmp_path / "f.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    m = Memory(target, embedder=embedder, gate=GateConfig(profile="none"))
    for i, text in enumerate(FACTS):
        m.add(text, user_id="u", valid_from=f"2024-0{i + 1}-01")
        m.add(text, user_id="other", valid_from=f"2024-0{i + 1}-01")
    yield m
    m.close()


def _texts(m, scope="u"):
    return sorted(it.text for it in m.get_all(user_id=scope))


def test_a_dry_run_lists_and_writes_nothing(filled):
    before = (_texts(filled), len(filled.history(filled.get_all(user_id="u")[0].id)))
    listed = filled.forget("please forget my locker code", user_id="u", dry_run=True)
    assert [it.text for it in listed] == [FACTS[3]]
    assert (_texts(filled), len(filled.history(filled.get_all(user_id="u")[0].id))) == before


def test_forget_soft_deletes_with_a_reason_and_never_touches_another_scope(filled):
    (gone,) = filled.forget("Please forget everything about Oskar.", user_id="u")
    assert gone.text == FACTS[2] and not gone.is_active
    assert FACTS[2] not in _texts(filled) and FACTS[2] in _texts(filled, "other")
    assert filled.history(gone.id)[-1].event == "DELETE" and "forgotten on request" in filled.history(gone.id)[-1].reason
    for mode in ("dense", "keyword", "hybrid"):
        assert all("Oskar" not in h.text for h in filled.search("Oskar tomatoes", user_id="u", mode=mode))
    assert filled.stats(user_id="u")["layers"].get("forget") == 1


def test_an_old_version_goes_and_the_newest_stays(tmp_path, embedder):
    # The request names no stored word ("address"): the subject's nearest memory
    # and its versions are found by meaning. (With the default embedder "address"
    # sits nearer "my locker code is ..." than either address, so a scope holding
    # that would fail this: a known limit of matching by meaning.)
    m = Memory(tmp_path / "o.db", embedder=embedder, gate=GateConfig(profile="none"))
    for i, text in enumerate(FACTS[:3]):
        m.add(text, user_id="u", valid_from=f"2024-0{i + 1}-01")
    removed = m.forget("Please forget my old address.", user_id="u")
    assert [it.text for it in removed] == [FACTS[0]]
    assert FACTS[1] in _texts(m) and FACTS[2] in _texts(m)
    m.close()


def test_nothing_named_removes_nothing(filled):
    assert filled.forget("forget what I said about my piano lessons", user_id="u") == []
    assert len(_texts(filled)) == 4


def test_a_purge_leaves_no_byte_of_the_text_in_the_file(tmp_path, embedder):
    path = tmp_path / "p.db"
    m = Memory(path, embedder=embedder)
    m.add(FACTS, user_id="u")
    m.add("My locker code is zebra-kumquat-8812, on the second floor.", user_id="u")  # a NOOP or a version
    m.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"kumquat" in raw
    m = Memory(path, embedder=embedder)
    removed = m.forget("Forget my locker code.", user_id="u", purge=True)
    assert removed and all(it.text == "" for it in removed)
    m.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"kumquat" not in raw and b"t-8812" not in raw  # "8812" alone is in a random uuid by chance
    assert b"Juniper" in raw  # the rest is still there


def test_the_cli_forgets_with_a_dry_run_first(tmp_path, embedder, monkeypatch, capsys):
    from memsieve.cli import main

    db = tmp_path / "cli.db"
    m = Memory(db, embedder=embedder, gate=GateConfig(profile="none"))
    m.add(FACTS, user_id="u")
    m.close()
    monkeypatch.setattr("memsieve.embedding.default_embedder", lambda: embedder)
    assert main(["forget", "forget my locker code", "--user", "u", "--db", str(db), "--dry-run"]) == 0
    assert "would remove 1 memories" in capsys.readouterr().out
    assert main(["forget", "forget my locker code", "--user", "u", "--db", str(db), "--purge"]) == 0
    assert "purged 1 memories" in capsys.readouterr().out
    with Memory(db, embedder=embedder) as again:
        assert FACTS[3] not in [it.text for it in again.get_all(user_id="u")]


def test_words_no_memory_holds_do_not_dilute_the_name_that_decides(embedder, tmp_path):
    # "oh", "gosh" and "really" are in no memory: counted at their (high) IDF they
    # would outweigh "ingmar", the one word that names the memory.
    m = Memory(tmp_path / "w.db", embedder=embedder, gate=GateConfig(profile="none"))
    m.add("I owe my colleague Ingmar 200 euros.", user_id="u", valid_from="2024-01-01")
    m.add("My colleague Pilar sits by the window.", user_id="u", valid_from="2024-01-02")
    gone = m.forget("Oh gosh, really forget what I said about Ingmar.", user_id="u")
    assert [g.text for g in gone] == ["I owe my colleague Ingmar 200 euros."]
    assert _texts(m) == ["My colleague Pilar sits by the window."]
    m.close()


def test_a_purge_reaches_the_members_a_consolidation_retired_into_the_memory(tmp_path, embedder):
    path = tmp_path / "c.db"
    m = Memory(path, embedder=embedder, gate=GateConfig(profile="none"))
    m.add("My safe's combination is 31-07-58, behind the painting.", user_id="u", valid_from="2024-01-01")
    m.add("My safe's combination is 31-07-58, it is behind the painting.", user_id="u", valid_from="2024-02-01")
    m.add("My neighbour Oskar grows tomatoes.", user_id="u", valid_from="2024-01-05")
    report = m.consolidate(user_id="u")
    assert report.merges and len(m.get_all(user_id="u")) == 2  # the two combinations became one
    removed = m.forget("Please forget my safe's combination.", user_id="u", purge=True)
    assert len(removed) == 2 and all(it.text == "" for it in removed)
    m.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"31-07-58" not in raw and b"painting" not in raw
    assert b"Oskar" in raw


@pytest.mark.parametrize("option", ["purge", "dry_run"])
def test_a_yes_no_option_takes_only_a_bool(filled, option):
    from memsieve import InvalidInputError

    before = _texts(filled)
    with pytest.raises(InvalidInputError, match=f"{option} must be True or False, got str 'no'"):
        filled.forget("forget my locker code", user_id="u", **{option: "no"})
    assert _texts(filled) == before


def test_a_request_is_about_its_subject_not_about_another_persons_same_fact(tmp_path, embedder):
    facts = ["I like tea.", "My mother likes tea with lemon.", "I live in Porto.", "My brother lives in Oslo.",
             "My sister's home is in Graz."]
    for purge in (False, True):
        m = Memory(tmp_path / f"s{purge}.db", embedder=embedder, gate=GateConfig(profile="none"))
        for text in facts:
            m.add(text, user_id="u")
        assert [it.text for it in m.forget("forget that I like tea", user_id="u", purge=purge)] != []
        assert [it.text for it in m.forget("forget where I live", user_id="u", purge=purge, dry_run=True)] == [
            "I live in Porto."]
        m.forget("forget where I live", user_id="u", purge=purge)
        assert _texts(m) == sorted(facts[1:2] + facts[3:])  # the mother's tea, the brother's and sister's homes
        assert [it.text for it in m.forget("forget where my brother lives", user_id="u", dry_run=True)] == [
            "My brother lives in Oslo."]
        assert [it.text for it in m.forget("forget her tea", user_id="u", dry_run=True)] == [
            "My mother likes tea with lemon."]
        m.close()


@pytest.mark.parametrize("purge", [False, True])
def test_over_the_forget_set_a_dry_run_lists_exactly_what_the_real_run_removes(purge, embedder):
    from memsieve.eval.forget import run_forget

    result = run_forget(purge=purge, embedder=embedder)
    assert result["splits"]["all"]["items"] >= 60
    assert [r["id"] for r in result["rows"] if not r["dry_matches"]] == []
    # Floors, not targets (eval/forget/README.md has the numbers): a regression shows here.
    assert result["splits"]["all"]["micro"]["precision"] >= 0.8 and result["splits"]["all"]["micro"]["recall"] >= 0.95
