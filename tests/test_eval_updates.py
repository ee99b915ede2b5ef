"""The updates set (eval/updates/) and ``memsieve eval updates``: the data is
well-formed, and the scorer's criteria hold on hand-built cases run through the
real Memory, the real SQLite store and the packaged ONNX embedder."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError
from memsieve.eval.metrics import content_tokens
from memsieve.eval.updates import ItemRunner, UpdatesOptions, run_updates, score_hits
from memsieve.eval.updates_data import (KINDS, VERSION_KINDS, Item, Turn, UpdatesFormatError, default_dir,
                                        load_items, parse_item)
from memsieve.eval.updates_report import markdown

ITEMS = load_items(split="all")
MAIN_KINDS = KINDS  # every kind is a main kind: each needs at least 20 items


def _toks(text: str) -> set[str]:
    return set(content_tokens(text))


def _item(kind: str, texts: list[str], question: str, expected: list[str], stale: list[str],
          *, answer_turn: int | None = None, forget_last: bool = False) -> Item:
    turns = tuple(Turn(text=t, date=f"2024-0{i + 1}-10", forget=forget_last and i == len(texts) - 1)
                  for i, t in enumerate(texts))
    return Item(id=f"{kind}-x", kind=kind, split="dev", turns=turns, question=question, expected=tuple(expected),
                stale=tuple(stale), answer_turn=answer_turn)


# ---- the data ----------------------------------------------------------------

def test_counts_per_kind_and_split():
    assert len(ITEMS) >= 180
    kinds = Counter(it.kind for it in ITEMS)
    assert set(kinds) == set(KINDS)
    assert all(kinds[k] >= 20 for k in MAIN_KINDS), kinds
    test = [it for it in ITEMS if it.split == "test"]
    assert 0.15 <= len(test) / len(ITEMS) <= 0.25
    # the held-back split covers every kind, so a gate tuned on dev is checked on each
    assert {it.kind for it in test} == set(KINDS)
    assert len(load_items(split="dev")) + len(test) == len(ITEMS)


def test_dates_ordered_and_turn_counts():
    for it in ITEMS:
        days = [date.fromisoformat(t.date) for t in it.turns]
        assert days == sorted(days), it.id
        assert 1 <= len(it.turns) <= 6, it.id


def test_expected_tokens_sit_in_the_answer_turn():
    for it in ITEMS:
        if not it.expected:
            assert it.kind == "forget" and it.answer_turn is None, it.id
            continue
        assert it.answer_turn is not None, it.id
        assert set(it.expected) <= _toks(it.turns[it.answer_turn].text), it.id
        assert not it.turns[it.answer_turn].forget, it.id


def test_versions_are_new_and_later_than_what_they_replace():
    for it in (i for i in ITEMS if i.kind in VERSION_KINDS):
        a = it.answer_turn
        assert a is not None and a > 0, it.id
        earlier = [_toks(t.text) for t in it.turns[:a]]
        # the newer turn carries information none of the earlier ones had
        assert not set(it.expected) & set().union(*earlier), it.id
        for tok in it.stale:
            older = [i for i, toks in enumerate(earlier) if tok in toks]
            assert older, f"{it.id}: stale {tok!r} is in no older turn"
            assert it.turns[a].date > it.turns[older[0]].date, it.id
    # every kind but detail says what the newer version replaces
    for it in ITEMS:
        if it.kind in VERSION_KINDS - {"detail"}:
            assert it.stale, it.id


def test_paraphrases_filler_and_forget_requests_have_their_shape():
    for it in ITEMS:
        if it.kind == "paraphrase":
            assert it.stale == () and it.answer_turn == 0 and len(it.turns) >= 2, it.id
            assert it.turns[-1].text != it.turns[0].text, it.id  # a restatement, not a copy
        elif it.kind == "filler":
            assert len(it.turns) >= 3 and it.stale == (), it.id
            others = [t for i, t in enumerate(it.turns) if i != it.answer_turn]
            assert any(t.role == "assistant" or len(content_tokens(t.text)) <= 2 for t in others), it.id
        elif it.kind == "forget":
            assert it.forget_turns == [len(it.turns) - 1], it.id
            assert it.stale, it.id
            held = [_toks(t.text) for t in it.turns[:-1]]
            assert any(set(it.stale) & toks for toks in held), it.id
            if it.answer_turn is not None:  # what must stay holds nothing that must go
                assert not set(it.stale) & held[it.answer_turn], it.id
        else:
            assert not any(t.forget for t in it.turns), it.id


def test_no_item_duplicates_another():
    assert len({it.id for it in ITEMS}) == len(ITEMS)
    assert len({it.question.lower() for it in ITEMS}) == len(ITEMS)
    facts = Counter(t.text for it in ITEMS for t in it.turns if len(content_tokens(t.text)) >= 3)
    assert [t for t, n in facts.items() if n > 1] == []


def test_split_files_hold_their_own_split_only(tmp_path):
    for name in ("dev", "test"):
        raw = [json.loads(line) for line in (default_dir() / f"{name}.jsonl").read_text().splitlines()]
        assert {r["split"] for r in raw} == {name}
    (tmp_path / "dev.jsonl").write_text((default_dir() / "test.jsonl").read_text().splitlines()[0] + "\n")
    with pytest.raises(UpdatesFormatError, match="says split 'test' but sits in dev.jsonl"):
        load_items(tmp_path, split="dev")


@pytest.mark.parametrize("patch, message", [
    ({"kind": "rumour"}, "unknown kind 'rumour'"),
    ({"expected": ["The"]}, "expected token 'The' is not one content token"),
    ({"stale": ["of"]}, "stale token 'of' is not one content token"),
    ({"turns": []}, "'turns' is empty"),
    ({"turns": [{"text": "x", "date": "10/05/2024"}]}, "date '10/05/2024' is not YYYY-MM-DD"),
    ({"answer_turn": 7}, "answer_turn 7 is not a turn index"),
])
def test_malformed_items_are_refused_by_name(patch, message):
    raw = {"id": "a", "kind": "detail", "split": "dev", "turns": [{"text": "I live in Oslo.", "date": "2024-01-02"}],
           "question": "Where?", "expected": ["oslo"], "stale": [], "answer_turn": 0, **patch}
    with pytest.raises(UpdatesFormatError, match=message):
        parse_item(raw, where="dev.jsonl:3")


def test_missing_folder_names_the_fix(tmp_path):
    with pytest.raises(UpdatesFormatError, match="pass --data DIR"):
        load_items(tmp_path / "nowhere")


# ---- scoring logic on hand-built hits --------------------------------------

def test_score_hits_ranks_and_stale_rule():
    item = _item("correction", ["Lunch is at the Thai place.", "Lunch moved from the Thai place to the ramen bar."],
                 "where is lunch", ["ramen"], ["thai"], answer_turn=1)
    # a result naming both values is the correction, not the stale version
    both_first = score_hits(item, ["Lunch moved from the Thai place to the ramen bar.", "Lunch is at the Thai place."])
    assert both_first == {"found": True, "expected_recall": 1.0, "rank_expected": 1, "rank_stale": 2,
                          "newer_first": True}
    old_first = score_hits(item, ["Lunch is at the Thai place.", "Lunch moved from the Thai place to the ramen bar."])
    assert old_first["newer_first"] is False and old_first["rank_stale"] == 1
    gone = score_hits(item, ["Lunch is at the Thai place."])
    assert gone["found"] is False and gone["newer_first"] is False
    # beyond the cut-off counts as absent
    assert score_hits(item, ["a", "b", "the ramen bar"], limit=2)["found"] is False


def test_partial_expected_is_not_found():
    item = _item("detail", ["x"], "q", ["osaka", "ninth"], [], answer_turn=0)
    r = score_hits(item, ["I land in Osaka."])
    assert r["found"] is False and r["expected_recall"] == 0.5 and r["newer_first"] is None


# ---- end to end with the real embedder ---------------------------------------

@pytest.fixture()
def mem_none(embedder):
    m = Memory(":memory:", embedder=embedder, gate=GateConfig(profile="none"))
    yield m
    m.close()


def test_stale_version_ranking_first_scores_newer_first_false(mem_none):
    item = _item("correction",
                 ["The team dinner is at Luigi's trattoria on Friday, the team dinner at Luigi's trattoria.",
                  "We switched restaurants."],
                 "Where is the team dinner at Luigi's trattoria on Friday?", ["switched"], ["luigi"], answer_turn=1)
    row = ItemRunner(mem_none).run(item)
    assert row["hits"][0]["text"].startswith("The team dinner is at Luigi")
    assert row["rank_stale"] == 1 and row["rank_expected"] == 2
    assert row["found"] is True and row["newer_first"] is False and row["ok"] is False
    assert row["stored"] == 2 and row["noops"] == 0
    assert [h["valid_from"][:10] for h in row["hits"]] == ["2024-01-10", "2024-02-10"]


def test_newer_version_ranking_first_passes(mem_none):
    item = _item("preference", ["I like tea.", "These days I drink strong black coffee every morning instead of tea."],
                 "Do I drink strong black coffee every morning?", ["coffee"], ["like"], answer_turn=1)
    row = ItemRunner(mem_none).run(item)
    assert row["rank_expected"] == 1 and row["newer_first"] is True and row["ok"] is True


def test_paraphrase_noop_is_read_from_the_last_decision(embedder, mem_none):
    item = _item("paraphrase", ["My blood type is B positive.", "My blood type is B positive."],
                 "What is my blood type?", ["positive"], [], answer_turn=0)
    with Memory(":memory:", embedder=embedder) as gated:
        row = ItemRunner(gated).run(item)
    assert row["noop"] is True and row["ok"] is True and row["stored"] == 1 and row["noops"] == 1
    assert row["turns"][1]["decisions"][0]["layer"] == "exact"
    added = ItemRunner(mem_none).run(_item("paraphrase", ["My blood type is B positive.", "B positive is my blood type."],
                                           "What is my blood type?", ["positive"], [], answer_turn=0))
    assert added["noop"] is False and added["ok"] is False and added["stored"] == 2


class _NoForget:
    """A Memory seen through the methods of a version without ``forget``."""

    def __init__(self, mem):
        self.add, self.search, self.get_all = mem.add, mem.search, mem.get_all


class _ForgetByToken:
    """A stand-in ``forget`` (deletes the memories sharing a content token with the request,
    or nothing), so the leak check is tested apart from Memory.forget's own matching."""

    def __init__(self, mem, *, deletes: bool):
        self._mem, self.deletes = mem, deletes
        self.add, self.search, self.get_all = mem.add, mem.search, mem.get_all

    def forget(self, what, *, user_id):
        gone = []
        if self.deletes:
            for m in self._mem.get_all(user_id=user_id):
                if _toks(m.text) & _toks(what):
                    gone.append(self._mem.delete(m.id))
        return gone


FORGET_ITEM = _item("forget", ["My locker combination is 4417.", "The gym bag stays in the east wing.",
                               "Forget the combination 4417."],
                    "What is my locker combination?", ["east"], ["4417"], answer_turn=1, forget_last=True)


def test_forget_unsupported_counts_as_failure(mem_none):
    row = ItemRunner(_NoForget(mem_none)).run(FORGET_ITEM)
    assert row["turns"][2]["forget"]["supported"] is False
    assert row["forgotten"] is False and row["ok"] is False
    assert {leak["via"] for leak in row["leaks"]} >= {"get_all", "search dense", "search keyword", "search hybrid"}


def test_forget_that_removes_the_text_passes_and_keeps_the_rest(mem_none):
    row = ItemRunner(_ForgetByToken(mem_none, deletes=True)).run(FORGET_ITEM)
    assert row["turns"][2]["forget"]["removed"] == ["My locker combination is 4417."]
    assert row["leaks"] == [] and row["forgotten"] is True
    assert row["found"] is True and row["ok"] is True and row["stored"] == 1


def test_forget_that_removes_nothing_is_caught(mem_none):
    row = ItemRunner(_ForgetByToken(mem_none, deletes=False)).run(FORGET_ITEM)
    assert row["turns"][2]["forget"] == {"supported": True, "error": None, "removed": []}
    assert row["forgotten"] is False and any(leak["via"] == "get_all" for leak in row["leaks"])


def test_run_on_real_items_writes_consistent_outputs(tmp_path, embedder):
    ids = ["detail-01", "correction-01", "paraphrase-01", "filler-01", "forget-01"]
    out = tmp_path / "out"
    result = run_updates(UpdatesOptions(split="dev", gates=("default", "none"), ids=ids, out=str(out),
                                        embedder=embedder))
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert sorted((r["arm"], r["id"]) for r in rows) == sorted((a, i) for a in ("default", "none") for i in ids)
    for arm, summary in result["arms"].items():
        mine = [r for r in rows if r["arm"] == arm]
        assert summary["micro"]["items"] == 5 and summary["micro"]["ok"]["hits"] == sum(r["ok"] for r in mine)
        assert summary["micro"]["stored"] == sum(r["stored"] for r in mine)
        accs = [g["accuracy"] for g in summary["per_kind"].values()]
        assert summary["macro"] == pytest.approx(sum(accs) / len(accs))
    none = [r for r in rows if r["arm"] == "none"]
    assert all(r["noops"] == 0 for r in none)  # add-all stores every turn
    forgotten = sum(len(t["forget"]["removed"]) for r in none for t in r["turns"] if "forget" in t)
    assert forgotten >= 1  # forget-01's request removed what it named
    assert sum(r["stored"] for r in none) + forgotten == sum(r["candidates"] for r in none)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["meta"]["items"] == 5 and set(on_disk["arms"]) == {"default", "none"}
    md = (out / "summary.md").read_text()
    assert md == markdown(result)
    m = result["arms"]["default"]["micro"]
    assert f"{m['ok']['hits']} of 5 items pass" in md and "## Arms side by side" in md


def test_cli_prints_json(capsys, monkeypatch, embedder):
    from memsieve.cli import run_eval
    from memsieve.eval import updates

    monkeypatch.setattr(updates, "load_embedder", lambda spec: embedder)  # the session's model, loaded once
    assert run_eval(["updates", "--ids", "event-01,negation-01", "--gate", "none", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["meta"]["items"] == 2 and printed["arms"]["none"]["micro"]["candidates"] == 4


@pytest.mark.parametrize("opts, message", [
    ({"gates": ("strict",)}, "unknown gate arm"),
    ({"ids": ["detail-99"]}, "no item with id"),
    ({"infer": True}, "--infer needs an LLM"),
])
def test_bad_options_are_config_errors(opts, message):
    with pytest.raises(ConfigError, match=message):
        run_updates(UpdatesOptions(**opts))


@pytest.mark.parametrize("spec, message", [
    ("no_colon_here", "--embedder expects module:callable"),
    ("memsieve.embedding:no_such_factory", "cannot load the embedder"),
    ("no_such_module_xyz:make", "cannot load the embedder"),
])
def test_bad_embedder_spec_is_a_config_error(spec, message):
    from memsieve.eval.updates import load_embedder

    with pytest.raises(ConfigError, match=message):
        load_embedder(spec)


def test_llm_endpoint_is_used_and_its_calls_reported(tmp_path, llama_server, embedder):
    """With --llm-base-url and --infer, every turn goes through the real server's
    fact extraction, so the arm must report calls and tokens; a turn whose reply
    cannot be parsed is counted as an error, and the run goes on."""
    result = run_updates(UpdatesOptions(split="dev", ids=["correction-11"], embedder=embedder, infer=True,
                                        llm_base_url=llama_server.base_url, out=str(tmp_path)))
    usage = result["arms"]["default"]["llm"]
    assert usage["calls"] >= 2 and usage["prompt_tokens"] > 0  # one extraction per turn at least
    assert result["meta"]["llm"] == llama_server.base_url and result["meta"]["infer"] is True
    md = markdown(result)
    assert f"{usage['calls']} LLM calls" in md
    (row,) = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    failed = [t for t in row["turns"] if t.get("error")]
    assert all(t["error"].startswith("LLM") and t["decisions"] == [] for t in failed)
    micro = result["arms"]["default"]["micro"]
    assert micro["items"] == 1 and micro["errors"] == row["errors"] == len(failed)
    assert (f"{len(failed)} turns failed in the LLM step" in md) == bool(failed)
