"""The retrieval table (``memsieve eval locomo --retrieval``) and ``--search``, on a synthetic
conversation through the real Memory, SQLite store and ONNX embedder."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import memsieve
from memsieve import ConfigError
from memsieve.cli import main
from memsieve.eval.arms import check_search_mode, default_search_mode, search_modes
from memsieve.eval.retrieval import RetrievalOptions, run_retrieval
from memsieve.read.search import SearchMode
from test_eval_locomo import synthetic_sample, write_synthetic


def _strict(text):
    return json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retrieval")
    data = write_synthetic(tmp, [synthetic_sample("conv-a"), synthetic_sample("conv-b")])
    out = tmp / "out"
    run_retrieval(RetrievalOptions(data=str(data), out=str(out), ks=(1, 3), progress=False))
    return out, _strict((out / "retrieval.json").read_text())


def test_every_mode_on_every_stream_with_everything_stored(report):
    _out, rep = report
    assert set(rep["results"]) == {"turns", "observations"}
    for stream, stored in (("turns", 10), ("observations", 8)):  # 5 turns and 4 usable facts per conversation
        modes = rep["results"][stream]
        assert list(modes) == list(search_modes()) and len(modes) >= 3
        for e in modes.values():
            assert e["stored"] == stored
            lat = e["latency_ms"]
            assert lat["n"] == 10 and 0 < lat["p50"] <= lat["p95"]
            assert set(e["per_category"]) == {"1", "2", "3", "4", "5"}


def test_dated_recall_is_primary_and_never_below_undated(report):
    _out, rep = report
    for modes in rep["results"].values():
        for e in modes.values():
            for avg in ("micro", "macro"):
                for k in (1, 3):
                    assert e[avg][f"answer_recall@{k}"] >= e[avg][f"answer_recall_undated@{k}"]
        # "How many years is 2023?": only a date says 2023, so only dated rendering finds it (dense search
        # always returns k hits; keyword search may return none for a question sharing no word with the texts).
        open_domain = modes["dense"]["per_category"]["3"]
        assert open_domain["answer_recall@1"] == 1.0 and open_domain["answer_recall_undated@3"] == 0.0


def test_prose_names_the_mode_the_numbers_make_best(report):
    out, rep = report
    for stream, modes in rep["results"].items():
        top = max(e["micro"]["answer_recall@3"] for e in modes.values())
        leaders = [m for m, e in modes.items() if e["micro"]["answer_recall@3"] == top]
        sentence = next(s for s in rep["narrative"] if s.startswith(f"On `{stream}`"))
        named = sentence.split("highest with ", 1)[1].split(" (", 1)[0]
        assert named.split(" and ") == leaders and f"{100 * top:.1f}" in sentence
    md = (out / "retrieval.md").read_text()
    assert "## Stream `turns`" in md and "undated@3" in md and "p95 ms" in md


def test_an_unknown_mode_fails_before_any_work(tmp_path):
    data = write_synthetic(tmp_path)
    with pytest.raises(ConfigError, match="'fuzzy'"):
        run_retrieval(RetrievalOptions(data=str(data), out=str(tmp_path / "o"), modes=("fuzzy",)))
    assert main(["eval", "locomo", str(data), "--out", str(tmp_path / "o2"), "--search", "auto"]) == 2
    assert main(["eval", "locomo", str(tmp_path / "missing.json"), "--out", str(tmp_path / "o3")]) == 2
    assert not any((tmp_path / name).exists() for name in ("o", "o2", "o3"))


def test_the_default_mode_is_read_from_memory_search(monkeypatch):
    original = memsieve.Memory.search

    def search(self, query: str, *, mode: SearchMode = "keyword", **kw):  # another default, same modes
        return original(self, query, mode=mode, **kw)

    monkeypatch.setattr(memsieve.Memory, "search", search)
    assert default_search_mode() == "keyword" and check_search_mode(None) == "keyword"
    assert check_search_mode("hybrid") == "hybrid"


def test_cli_search_mode_reaches_every_question(tmp_path, capsys):
    data = write_synthetic(tmp_path, [synthetic_sample("conv-k")])
    out = tmp_path / "o"
    assert main(["eval", "locomo", str(data), "--out", str(out), "--retrieval", "--modes", "keyword,dense",
                 "--stream", "turns", "--k", "1,2", "--no-progress"]) == 0
    rep = _strict((out / "retrieval.json").read_text())
    assert list(rep["results"]["turns"]) == ["keyword", "dense"] and rep["meta"]["modes"] == ["keyword", "dense"]
    assert "# LoCoMo retrieval" in capsys.readouterr().out


class _LimitDependentSearch:
    """A search whose top hit depends on the limit, as a fusion whose candidate depth grows with it."""

    def __init__(self):
        self.limits = []

    def search(self, query, *, user_id, limit, mode=None):
        self.limits.append(limit)
        hit = lambda i, text: SimpleNamespace(id=f"m{i}", text=text, source=f"D1:{i}", sources=[f"D1:{i}"],  # noqa: E731
                                              valid_from="2023-05-08T13:56:00")
        right, wrong = hit(1, "Ana: my cat is called Miso."), hit(2, "Ben: I play the violin.")
        return [right][:limit] if limit == 1 else [wrong, right][:limit]


def test_recall_at_k_is_scored_on_search_with_limit_k(tmp_path):
    from memsieve.eval.arms import StreamRun, score_questions
    from memsieve.eval.locomo import load_locomo

    conv = load_locomo(write_synthetic(tmp_path)).conversations[0]
    fake = _LimitDependentSearch()
    rows = score_questions(fake, [conv], StreamRun(), (1, 2), mode="hybrid")
    cat = next(r for r in rows if r["qid"] == "conv-x/0")  # "What is the name of Ana's cat?" -> Miso
    # Cutting the limit-2 list would put the violin turn first; search(limit=1) finds Miso.
    assert cat["answer_recall@1"] == 1.0 and cat["evidence_recall@1"] == 1.0
    assert cat["retrieved_ids"] == ["m2", "m1"] and sorted(set(fake.limits)) == [1, 2]


def test_each_date_format_is_scored_and_the_default_is_answer_recall(report):
    from memsieve.read.render import DATE_FORMATS, DEFAULT_DATE_FORMAT

    out, rep = report
    assert rep["meta"]["date_format_default"] == DEFAULT_DATE_FORMAT
    for modes in rep["results"].values():
        for e in modes.values():
            for avg in ("micro", "macro"):
                assert e[avg]["answer_recall@3"] == e[avg][f"answer_recall_{DEFAULT_DATE_FORMAT}@3"]
                for fmt in DATE_FORMATS:  # any date format adds tokens to the bare text, never removes them
                    assert e[avg][f"answer_recall_{fmt}@3"] >= e[avg]["answer_recall_undated@3"]
    md = (out / "retrieval.md").read_text()
    assert "Date formats, answer@3" in md and "long micro" in md and "iso temporal" in md
    assert any("Long dates (`[8 May 2023]`)" in s for s in rep["narrative"])


def test_memory_context_passes_the_date_format_through(tmp_path, embedder):
    from memsieve import GateConfig, Memory

    with Memory(tmp_path / "c.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        m.add("Caroline: I went to the support group yesterday.", user_id="c", valid_from="2023-05-08T13:56:00")
        assert m.context("support group", user_id="c", date_format="long") == (
            "[8 May 2023] Caroline: I went to the support group yesterday.")
        assert m.context("support group", user_id="c", date_format="iso").startswith("[2023-05-08] ")
        with pytest.raises(ConfigError, match="date_format"):
            m.context("support group", user_id="c", date_format="rfc")
