"""``memsieve eval longmemeval`` on a small LongMemEval-format file written here,
through the CLI entry, the real Memory on SQLite and the packaged ONNX embedder;
plus one run on the real development half when ../shared/data/longmemeval/ exists."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from memsieve.errors import MemsieveError
from memsieve.eval import longmemeval as lme
from memsieve.eval.commands import BENCHMARKS, build_parser
from memsieve.eval.longmemeval_data import LongMemEvalFormatError, load_longmemeval, parse_lme_date, select

LME_DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"


def _session(*turns: tuple[str, str, bool | None]) -> list[dict]:
    out = []
    for role, text, has in turns:
        t = {"role": role, "content": text}
        if has is not None:
            t["has_answer"] = has
        out.append(t)
    return out


def synthetic_questions() -> list[dict]:
    """Three questions of two types; q-cat plants one has_answer turn, q-trip two, q-none_abs none."""
    garden = _session(("user", "My tomatoes finally ripened this week after a cold spring.", None),
                      ("assistant", "Congratulations, home-grown tomatoes taste far better than bought ones.", None))
    cat = _session(("user", "I adopted a grey kitten and named her Pistachio.", True),
                   ("assistant", "Pistachio is a lovely name for a grey kitten!", False),
                   ("user", "   ", None),  # empty: skipped, but it keeps its index
                   ("assistant", " \u200b ", None))  # nothing visible (a real log's lone zero-width space)
    bikes = _session(("user", "Can you suggest a stretching routine after cycling?", None),
                     ("assistant", "Try hamstring, quad and hip flexor stretches for thirty seconds each.", None))
    trip1 = _session(("user", "We booked the ferry to Gotland for the second of August.", True),
                     ("assistant", "Gotland in August is beautiful; Visby's old town is worth a walk.", None))
    trip2 = _session(("user", "The hotel on Gotland is called the Lighthouse Inn.", True),
                     ("assistant", "Lighthouse Inn sounds charming.", None))
    return [
        {"question_id": "q-cat", "question_type": "single-session-user", "question": "What is my kitten called?",
         "answer": "Pistachio", "question_date": "2023/06/01 (Thu) 09:00",
         "haystack_session_ids": ["s-garden", "s-cat"], "haystack_dates": ["2023/05/20 (Sat) 02:21",
                                                                           "2023/05/27 (Sat) 18:05"],
         "haystack_sessions": [garden, cat], "answer_session_ids": ["s-cat"]},
        {"question_id": "q-trip", "question_type": "multi-session",
         "question": "Which ferry date and which hotel did I book for Gotland?",
         "answer": "2 August, Lighthouse Inn", "question_date": "2023/07/01 (Sat) 10:00",
         "haystack_session_ids": ["s-bikes", "s-trip1", "s-trip2"],
         "haystack_dates": ["2023/06/02 (Fri) 08:00", "2023/06/10 (Sat) 12:30", "2023/06/15 (Thu) 19:45"],
         "haystack_sessions": [bikes, trip1, trip2], "answer_session_ids": ["s-trip1", "s-trip2"]},
        {"question_id": "q-none_abs", "question_type": "multi-session", "question": "What is my dog's name?",
         "answer": "You did not mention a dog.", "question_date": "2023/07/02 (Sun) 10:00",
         "haystack_session_ids": ["s-garden"], "haystack_dates": ["2023/05/20 (Sat) 02:21"],
         "haystack_sessions": [garden], "answer_session_ids": []},
    ]


def write_file(tmp_path: Path, data: object, *, gz: bool = False) -> Path:
    path = tmp_path / ("lme.json.gz" if gz else "lme.json")
    raw = json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


class CountingEmbedder:
    """The session's real embedder, counting every text it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.texts = inner, 0

    @property
    def dim(self):
        return self.inner.dim

    @property
    def name(self):
        return self.inner.name

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def _run_cli(argv: list[str]) -> int:
    ns = build_parser().parse_args(["longmemeval", *argv])
    return ns.func(ns)


# ---- loader ---------------------------------------------------------------------------------------------------


def test_dates_parse_in_longmemeval_form():
    assert parse_lme_date("2023/05/20 (Sat) 02:21") == "2023-05-20T02:21:00"
    assert parse_lme_date("2023/05/20") == "2023-05-20T00:00:00"
    assert parse_lme_date("2023/02/30 (Thu) 10:00") is None
    assert parse_lme_date("May 20, 2023") is None and parse_lme_date(None) is None


def test_loader_reads_turns_sources_dates_and_evidence(tmp_path):
    ds = load_longmemeval(write_file(tmp_path, synthetic_questions(), gz=True))
    cat = ds.questions[0]
    pairs = cat.candidates()
    assert [t.id for _c, t in pairs] == ["s-garden:0", "s-garden:1", "s-cat:0", "s-cat:1"]  # the empty turn is out
    assert pairs[2][0].valid_from == "2023-05-27T18:05:00" and pairs[2][1].role == "user"
    assert list(cat.evidence) == ["s-cat:0"] and cat.question_date == "2023-06-01T09:00:00"
    assert ds.counts.empty_turns_skipped == 2 and ds.counts.evidence_turns == 3
    assert ds.counts.abstention_questions == 1 and ds.counts.questions_without_evidence == 1
    assert ds.questions[2].abstention


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d[0].pop("answer"), "missing key(s) ['answer']"),
    (lambda d: d[0].update(haystack_dates=["2023/05/20 (Sat) 02:21"]), "must have the same length"),
    (lambda d: d[0]["haystack_dates"].__setitem__(1, "yesterday"), "session 1 ('s-cat'): date 'yesterday'"),
    (lambda d: d[0].update(question_date="soon"), "question_date 'soon' is not a date"),
    (lambda d: d[0]["haystack_sessions"][1][0].update(role="narrator"), "'role' must be 'user' or 'assistant'"),
    (lambda d: d[0]["haystack_sessions"][1][0].update(has_answer="yes"), "'has_answer' must be true or false"),
    (lambda d: d[0]["haystack_sessions"][1].__setitem__(0, "just text"), "a turn must be an object"),
    (lambda d: d[0].update(answer_session_ids=["s-elsewhere"]), "are not among its haystack_session_ids"),
    (lambda d: d[1].update(question_id="q-cat"), "appears 2 times"),
])
def test_schema_errors_say_what_and_where(tmp_path, mutate, message):
    data = synthetic_questions()
    mutate(data)
    with pytest.raises(LongMemEvalFormatError) as err:
        load_longmemeval(write_file(tmp_path, data))
    assert message in str(err.value) and isinstance(err.value, MemsieveError)


def test_unreadable_and_wrong_top_level_files(tmp_path):
    with pytest.raises(LongMemEvalFormatError, match="cannot read LongMemEval file"):
        load_longmemeval(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(LongMemEvalFormatError, match="cannot read LongMemEval file"):
        load_longmemeval(tmp_path / "bad.json")
    with pytest.raises(LongMemEvalFormatError, match="expected a non-empty list of questions"):
        load_longmemeval(write_file(tmp_path, {"question_id": "x"}))
    with pytest.raises(LongMemEvalFormatError, match=r"question id\(s\) \['nope'\] are not in the file"):
        load_longmemeval(write_file(tmp_path, synthetic_questions()), ids=["nope"])


def test_per_type_selection_is_seeded_and_limited():
    qs = [{"question_id": f"q{i}", "question_type": "ab"[i % 2]} for i in range(20)]
    picked = select(qs, per_type=3, seed=7)
    assert picked == select(qs, per_type=3, seed=7) and picked == sorted(picked) and len(picked) == 6
    assert sum(i % 2 == 0 for i in picked) == 3
    assert select(qs, per_type=3, seed=7, limit=2) == picked[:2]
    assert select(qs, per_type=50) == list(range(20))


# ---- metrics --------------------------------------------------------------------------------------------------


def test_recall_all_is_every_evidence_turn_and_share_is_the_fraction():
    from types import SimpleNamespace

    from memsieve.records import SearchResult

    turn = SimpleNamespace
    q = SimpleNamespace(evidence={"s1:0": turn(text="I adopted a cat."), "s2:3": turn(text="The cat is Miso."),
                                  "s3:1": turn(text="Miso is two.")},
                        answer_session_ids=["s1", "s2", "s3"], abstention=False, answer="Miso")
    hits = [SearchResult(id=f"m{i}", text=t, score=1.0 - i / 10, source=src, sources=[src], metadata={},
                         valid_from="2023-05-08T00:00:00+00:00", created_at="2023-05-08T00:00:00+00:00")
            for i, (t, src) in enumerate([("The cat is Miso.", "s2:3"), ("Unrelated.", "s9:0"),
                                          ("I adopted a cat.", "s1:0")])]
    prov = [{h.source} for h in hits]
    m = lme.score_hits(q, hits, prov, prov, 10)
    assert m["recall_any@10"] == 1.0 and m["recall_all@10"] == 0.0 and m["recall_share@10"] == pytest.approx(2 / 3)
    assert lme.score_hits(q, hits[:1], prov[:1], prov[:1], 1)["recall_share@1"] == pytest.approx(1 / 3)


def test_extractive_answer_recall_counts_only_answers_the_evidence_states():
    from types import SimpleNamespace

    from memsieve.records import SearchResult

    turn = SimpleNamespace
    stated = SimpleNamespace(evidence={"s1:0": turn(text="Our cat Miso turned two in May.")},
                             answer_session_ids=["s1"], abstention=False, answer="Miso")
    counted = SimpleNamespace(evidence={"s1:0": turn(text="I visited Lisbon."), "s2:0": turn(text="And Porto.")},
                              answer_session_ids=["s1", "s2"], abstention=False, answer="2")
    hits = [SearchResult(id="m0", text="Room 2 has the cat Miso.", score=1.0, source="s9:0", sources=["s9:0"],
                         metadata={}, valid_from=None, created_at="2023-05-08T00:00:00+00:00")]
    prov = [{"s9:0"}]
    assert lme.is_extractive(stated) and not lme.is_extractive(counted)
    a = lme.score_hits(stated, hits, prov, prov, 10)
    assert a["answer_recall@10"] == 1.0 and a["answer_recall_extractive@10"] == 1.0
    # "2" found by chance in an unrelated hit: answer recall says 1.0, the extractive one leaves it out
    b = lme.score_hits(counted, hits, prov, prov, 10)
    assert b["answer_recall@10"] == 1.0 and b["answer_recall_extractive@10"] is None
    assert b["recall_any@10"] == 0.0
    assert not lme.is_extractive(SimpleNamespace(evidence={}, abstention=False, answer="Miso"))


def test_ceilings_read_evidence_answer_sessions_and_haystack_whole(tmp_path):
    from memsieve.eval.longmemeval_ceiling import question_ceilings, reader_ceilings

    ds = load_longmemeval(write_file(tmp_path, synthetic_questions()))
    by = {q.question_id: q for q in ds.questions}
    # "2 August, Lighthouse Inn": the evidence and answer sessions say "second of August" on 10 and
    # 15 June, never a bare "2"; the unrelated cycling session's date, 2 June 2023, holds it by chance.
    assert question_ceilings(by["q-trip"]) == {"evidence turns": 0.75, "answer sessions": 0.75,
                                               "whole haystack": 1.0}
    assert question_ceilings(by["q-cat"]) == dict.fromkeys(("evidence turns", "answer sessions",
                                                            "whole haystack"), 1.0)
    assert set(question_ceilings(by["q-none_abs"]).values()) == {None}  # abstention: no answer to find
    ceil = reader_ceilings(ds.questions)
    assert ceil["answer sessions"]["n"] == 2 and ceil["answer sessions"]["micro"] == pytest.approx(0.875)
    assert ceil["whole haystack"]["macro"] == 1.0
    assert ceil["evidence turns"]["per_type"] == {"multi-session": {"recall": 0.75, "n": 1},
                                                  "single-session-user": {"recall": 1.0, "n": 1}}


def test_ndcg_by_hand():
    assert lme.ndcg([True, False], 1, 10) == 1.0
    assert lme.ndcg([False, True], 1, 10) == pytest.approx(1 / __import__("math").log2(3))
    assert lme.ndcg([False, False], 2, 10) == 0.0
    assert lme.ndcg([True], 0, 10) is None


def test_search_hook_passes_the_question_date_only_when_search_takes_it(tmp_path):
    q = load_longmemeval(write_file(tmp_path, synthetic_questions())).questions[0]

    def old(query, *, user_id=None, limit=10):
        return []

    def new(query, *, user_id=None, limit=10, reference_time=None):
        return []

    assert lme.search_kwargs(old, q) == {}
    assert lme.search_kwargs(new, q) == {"reference_time": "2023-06-01T09:00:00"}


# ---- end to end -----------------------------------------------------------------------------------------------


def test_cli_end_to_end_with_hand_computed_metrics(tmp_path, embedder, monkeypatch, capsys):
    counting = CountingEmbedder(embedder)
    monkeypatch.setattr("memsieve.eval.vectors._default_embedder", lambda: counting)
    data = write_file(tmp_path, synthetic_questions(), gz=True)
    out, cache = tmp_path / "out", tmp_path / "vectors.npz"
    argv = [str(data), "--out", str(out), "--arms", "add-all,memsieve,random", "--embedding-cache", str(cache),
            "--store", str(tmp_path / "stores" / "lme.sqlite"), "--no-progress"]
    assert _run_cli(argv) == 0
    assert "LongMemEval evaluation" in capsys.readouterr().out
    assert {"summary.json", "summary.md", "questions.jsonl", "recall_by_type.png", "stored_vs_recall.png"} <= \
        {p.name for p in out.iterdir()}
    assert (tmp_path / "stores" / "lme.add-all.sqlite").is_file()  # --store keeps every arm's file
    assert (tmp_path / "stores" / "lme.random-seed0.sqlite").is_file()
    summary = json.loads((out / "summary.json").read_text())
    meta, base = summary["meta"], summary["arms"]["add-all"]
    assert list(summary["arms"]) == ["add-all", "random", "memsieve"]
    # 4 + 6 + 2 non-empty turns; q-none_abs repeats the garden session in a scope of its own.
    assert base["stored"] == 12 and base["stored_fraction"] == 1.0 and base["candidates"] == 12
    assert meta["embedding"]["embedded"] > 0 and meta["embedding"]["misses_in_arms"] == 0
    assert meta["reference_time_passed"]  # Memory.search takes the question date
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * 5  # 3 questions x (add-all, memsieve, 3 random seeds)
    by = {r["question_id"]: r for r in rows if r["arm"] == "add-all"}
    cat, trip, none = by["q-cat"], by["q-trip"], by["q-none_abs"]
    # q-cat's scope holds 4 memories, so the top 5 and top 10 hold all of them, the planted turn included.
    for k in (5, 10):
        assert cat[f"recall_any@{k}"] == cat[f"recall_all@{k}"] == 1.0
        assert cat[f"recall_any_text@{k}"] == cat[f"session_recall_any@{k}"] == 1.0
        assert cat[f"answer_recall@{k}"] == 1.0  # "pistachio"
    assert trip["recall_all@10"] == trip["recall_all_text@10"] == 1.0  # both planted turns, of 6 memories
    # Answer tokens of "2 August, Lighthouse Inn": 2, august, lighthouse, inn. Undated texts say "second of
    # August", never "2", so 3 of 4; the dated lines "[10 Jun 2023] ..." do not hold a bare "2" either.
    assert trip["answer_recall_undated@10"] == 0.75
    # NDCG: one evidence turn; relevant at rank r gives 1/log2(r+1).
    rank = next(i for i, s in enumerate(cat["retrieved_sources"]) if "s-cat:0" in s) + 1
    assert cat["ndcg@10"] == pytest.approx(1 / __import__("math").log2(rank + 1))
    # The abstention question has no evidence and no answer to find.
    assert none["recall_any@10"] is None and none["answer_recall@10"] is None and none["ndcg@10"] is None
    assert none["session_recall_any@10"] is None
    assert base["micro"]["recall_all@10"] == 1.0 and base["micro"]["n_recall_all@10"] == 2
    assert base["micro"]["n_answer_recall@10"] == 2  # q-cat and q-trip
    assert set(base["per_category"]) == {"single-session-user", "multi-session"}
    assert base["per_category"]["single-session-user"]["recall_any@10"] == 1.0
    macro = base["macro"]["answer_recall_undated@10"]
    assert macro == pytest.approx((1.0 + 0.75) / 2)  # one answerable question per type
    assert base["evidence_turns"] == 3 and base["evidence_stored"] == 3 and base["evidence_kept_fraction"] == 1.0
    md = (out / "summary.md").read_text()
    assert "## Per question type" in md and "**Macro**" in md and "set to its question date" in md
    ceil = summary["ceilings"]
    assert ceil["evidence turns"]["micro"] == pytest.approx((1.0 + 0.75) / 2)
    assert ceil["whole haystack"]["per_type"]["multi-session"] == {"recall": 1.0, "n": 1}
    assert "## What the data holds" in md and "add-all, first 10 hits" in md
    assert "Pistachio" not in md and "Pistachio" not in (out / "summary.json").read_text()  # no data text

    # Second run over the same data: every vector from the cache, nothing embedded.
    counting.texts = 0
    out2 = tmp_path / "out2"
    assert _run_cli([str(data), "--out", str(out2), "--arms", "add-all", "--embedding-cache", str(cache),
                     "--no-progress"]) == 0
    again = json.loads((out2 / "summary.json").read_text())["meta"]["embedding"]
    assert again["embedded"] == 0 and again["source"].startswith("reused") and counting.texts == 0
    assert json.loads((out2 / "summary.json").read_text())["arms"]["add-all"]["micro"] == base["micro"]


def test_a_dropped_evidence_turn_is_recorded_with_its_reason(tmp_path, embedder):
    """A has_answer turn that repeats a stored one word for word, the same day, is an
    exact-duplicate NOOP, folded into the memory it repeats: counted by reason, its record in the
    per-question row. (Told on another day, a thing done is stored as another event.)"""
    data = synthetic_questions()[:1]
    data[0]["haystack_sessions"][1].insert(0, {"role": "user", "content": "I adopted a grey kitten and named her Pistachio."})
    out = tmp_path / "o"
    summary = lme.run_longmemeval(lme.LmeOptions(data=str(write_file(tmp_path, data)), out=str(out),
                                                 arms=("add-all", "memsieve"), embedder_factory=lambda: embedder,
                                                 progress=False))
    e = summary["arms"]["memsieve"]
    assert e["evidence_turns"] == 1 and e["evidence_stored"] == 0 and e["evidence_folded"] == 1
    assert e["evidence_drop_reasons"] == {"exact duplicate": 1}
    row = next(r for r in map(json.loads, (out / "questions.jsonl").read_text().splitlines())
               if r["arm"] == "memsieve")
    (drop,) = row["evidence_dropped"]
    assert drop["turn"] == "s-cat:1" and drop["event"] == "NOOP" and drop["reason_kind"] == "exact duplicate"
    assert drop["folded_into_text"].startswith("I adopted a grey kitten")
    # Folded, it is still found by provenance: the memory it was folded into carries its id.
    assert row["recall_all@10"] == 1.0 and row["recall_all_text@10"] == 1.0
    # Beside add-all, the prose tells it, in the singular.
    assert "kept 0 of 1 evidence (has_answer) turns as memories of their own; 1 was not stored (1 folded" in \
        " ".join(summary["meta"]["narrative"])


def test_bad_options_are_config_errors(tmp_path):
    from memsieve.errors import ConfigError

    data = str(write_file(tmp_path, synthetic_questions()))
    with pytest.raises(ConfigError, match="unknown arm"):
        lme.run_longmemeval(lme.LmeOptions(data=data, out=str(tmp_path / "x"), arms=("everything",)))
    with pytest.raises(LongMemEvalFormatError, match="per_type must be at least 1"):
        lme.run_longmemeval(lme.LmeOptions(data=data, out=str(tmp_path / "x"), per_type=0))
    assert BENCHMARKS["longmemeval"] == "memsieve.eval.longmemeval"


def test_real_dev_half_two_questions(tmp_path, embedder):
    if not LME_DEV.is_file():
        pytest.skip(f"LongMemEval_S dev half not found at {LME_DEV} (../shared/data/longmemeval/longmemeval_s_dev.json.gz)")
    ds = load_longmemeval(LME_DEV)
    assert len(ds.questions) == 246 and ds.counts.evidence_turns == 442
    assert ds.counts.types_in_file["temporal-reasoning"] == 68
    out = tmp_path / "dev"
    summary = lme.run_longmemeval(lme.LmeOptions(data=str(LME_DEV), out=str(out), arms=("add-all",),
                                                 questions=["gpt4_2655b836"], embedder_factory=lambda: embedder,
                                                 progress=False))
    base = summary["arms"]["add-all"]
    assert base["stored"] > 400 and base["evidence_turns"] >= 1
    assert 0.0 <= base["micro"]["recall_any@10"] <= 1.0


def test_vector_cache_checkpoints_a_long_embedding_and_resumes(tmp_path, monkeypatch):
    """An embedding run that dies keeps the checkpointed vectors; the next run embeds only the rest."""
    from conftest import TableEmbedder

    from memsieve.eval import vectors

    monkeypatch.setattr(vectors, "CHECKPOINT_TEXTS", 256)
    texts = [f"note number {i}" for i in range(700)]
    cache = tmp_path / "v.npz"

    class Dies(TableEmbedder):
        def embed(self, batch):
            if self.calls == 2:
                raise RuntimeError("killed")
            return super().embed(batch)

    with pytest.raises(RuntimeError):
        vectors.embed_texts(texts, embedder_factory=Dies, embedding_cache=str(cache), progress=False)
    keys, _vecs = vectors.load_table(cache, name="table")
    assert len(keys) == 512  # two batches of 256 were checkpointed before the third failed
    fresh = TableEmbedder()
    table, info = vectors.embed_texts(texts, embedder_factory=lambda: fresh, embedding_cache=str(cache),
                                      progress=False)
    assert info["embedded"] == 700 - 512 and info["reused"] == 512
    assert np.allclose(table.embed(["note number 3"]), TableEmbedder().embed(["note number 3"]))
    again = vectors.embed_texts(texts, embedder_factory=TableEmbedder, embedding_cache=str(cache), progress=False)[1]
    assert again["embedded"] == 0 and again["source"].startswith("reused")


def test_before_now_scores_each_arm_before_and_after_on_the_same_store(tmp_path, embedder, monkeypatch):
    monkeypatch.setattr("memsieve.eval.vectors._default_embedder", lambda: CountingEmbedder(embedder))
    data = write_file(tmp_path, synthetic_questions())
    out = tmp_path / "out"
    argv = [str(data), "--out", str(out), "--arms", "add-all", "--embedding-cache", str(tmp_path / "v.npz"),
            "--before-now", "--no-progress"]
    assert _run_cli(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["arms"]) == ["add-all", "add-all before now"] and summary["meta"]["before_now"]
    after, before = summary["arms"]["add-all"], summary["arms"]["add-all before now"]
    assert before["stored"] == after["stored"] == 12 and before["stored_fraction"] == 1.0
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    passed = {(r["arm"], r["question_id"]): r["reference_time_passed"] for r in rows}
    assert len(passed) == 6 and all(passed[("add-all", q)] and not passed[("add-all before now", q)]
                                    for _a, q in passed)
    # these questions say nothing about time: before and after are the same search
    assert before["micro"] == after["micro"]


def test_answer_recall_reads_a_hits_folded_texts_and_says_so_beside_it():
    from types import SimpleNamespace

    from memsieve.read.render import render_line
    from memsieve.records import Folded, SearchResult

    q = SimpleNamespace(evidence={"s2:0": SimpleNamespace(text="I've tried four different ones so far.")},
                        answer_session_ids=["s2"], abstention=False, answer="four")
    fold = Folded(id="r1", text="I've tried four different ones so far.", valid_from="2023-06-20T00:00:00+00:00",
                  created_at="2023-06-20T00:00:00+00:00")
    hit = SearchResult(id="m0", text="I've tried three different Korean restaurants.", score=1.0, source="s1:0",
                       sources=["s1:0", "s2:0"], metadata={}, valid_from="2023-05-01T00:00:00+00:00",
                       created_at="2023-05-01T00:00:00+00:00", folded=(fold,))
    prov = [{"s1:0", "s2:0"}]
    m = lme.score_hits(q, [hit], prov, [{"s1:0"}], 10)
    assert m["answer_recall@10"] == 1.0 and m["answer_recall_unfolded@10"] == 0.0
    assert m["reader_chars@10"] == len(render_line(hit)) > len(render_line(hit, folded=False))
    assert "reader_chars@10" in lme.metric_keys([10]) and "answer_recall_unfolded@5" in lme.metric_keys([5])
