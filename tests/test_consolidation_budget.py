"""A consolidation bounded in time: ``max_seconds`` on ``Memory.consolidate``, the CLI and the
server (``--consolidate-seconds`` bounds what a request may ask). Past the bound no new cluster is
begun; the merges made are kept and the report says how many clusters wait for the next run."""

from __future__ import annotations

import math

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import ConfigError

from serve_helper import ServeProcess, cli, make_keys

U = {"user_id": "ana"}
# Four pairs of restatements, each pair its own cluster, and two unrelated facts.
PAIRS = [
    ("I love hiking in the mountains on weekends", "I love hiking in the mountains on weekends."),
    ("My cat Miso sleeps on the sofa all day", "My cat Miso sleeps on the sofa all day!"),
    ("I am learning to play the violin", "I am learning to play the violin."),
    ("Our flat has two bedrooms and a balcony", "Our flat has two bedrooms and a balcony."),
]
OTHERS = ["The dentist appointment is on Monday at 3pm", "I drink my coffee black"]


def _fill(m: Memory) -> None:
    for a, b in PAIRS:
        m.add(a, **U)
        m.add(b, **U)
    for text in OTHERS:
        m.add(text, **U)


def _active(m: Memory) -> set[str]:
    return {i.text for i in m.get_all(**U)}


def test_a_spent_budget_merges_one_cluster_and_leaves_the_rest_for_the_next_run(tmp_path, embedder):
    with Memory(tmp_path / "a.db", embedder=embedder, gate=GateConfig(profile="none")) as whole, \
            Memory(tmp_path / "b.db", embedder=embedder, gate=GateConfig(profile="none")) as parts:
        _fill(whole)
        _fill(parts)
        full = whole.consolidate(**U)
        assert full.complete and full.clusters_left == 0 and len(full.merges) == len(PAIRS)
        # A budget spent at once: the first cluster is still weighed, so that every run makes headway.
        first = parts.consolidate(**U, max_seconds=1e-9)
        assert not first.complete and len(first.merges) == 1 and first.clusters_left == len(PAIRS) - 1
        assert first.active_after == first.active_before - 1
        runs = 1
        while True:
            report = parts.consolidate(**U, max_seconds=1e-9)
            runs += 1
            if report.complete:
                break
        assert report.clusters_left == 0 and runs == len(PAIRS)
        # The bounded runs end where one unbounded run does, and each merge undoes on its own.
        assert _active(parts) == _active(whole)
        merge = parts.merges(**U)[0]
        assert parts.unconsolidate(merge.id, **U)


def test_a_spent_budget_stops_weighing_pairs_and_the_next_run_ends_where_an_unbounded_one_does(tmp_path, embedder):
    """At a low min_sim most pairs of a scope are close: the weighing of them is cut too (the most
    similar are weighed first, the clock read every 64), and the pairs not weighed join no cluster."""
    texts = [f"I went to the {place} on {day}" for place in ("gym", "park", "library", "market", "beach")
             for day in ("Monday", "Friday", "Sunday", "Tuesday")]
    assert len(texts) * (len(texts) - 1) // 2 > 64
    with Memory(tmp_path / "a.db", embedder=embedder, gate=GateConfig(profile="none")) as whole, \
            Memory(tmp_path / "b.db", embedder=embedder, gate=GateConfig(profile="none")) as parts:
        for m in (whole, parts):
            for text in texts:
                m.add(text, **U)
        cut = parts.consolidate(**U, min_sim=0.05, max_seconds=1e-9, dry_run=True)
        assert not cut.complete and cut.pairs_left == cut.pairs - 64 > 0
        full = whole.consolidate(**U, min_sim=0.05, dry_run=True)
        assert full.complete and full.pairs_left == 0 and full.pairs == cut.pairs


def test_a_dry_run_under_a_spent_budget_proposes_one_cluster(tmp_path, embedder):
    with Memory(tmp_path / "a.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        _fill(m)
        report = m.consolidate(**U, dry_run=True, max_seconds=1e-9)
        assert report.dry_run and len(report.merges) == 1 and report.clusters_left == len(PAIRS) - 1
        assert len(_active(m)) == 2 * len(PAIRS) + len(OTHERS)  # nothing written


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "5", True, 86401])
def test_a_bad_max_seconds_is_refused_before_anything_is_read(tmp_path, embedder, bad):
    with Memory(tmp_path / "a.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        _fill(m)
        with pytest.raises(ConfigError, match="max_seconds"):
            m.consolidate(**U, max_seconds=bad)
        assert m.merges(**U) == []


def test_the_cli_says_how_many_clusters_are_left(tmp_path, embedder):
    with Memory(tmp_path / "a.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        _fill(m)
    r = cli("consolidate", "--db", str(tmp_path / "a.db"), "--user", "ana", "--max-seconds", "1e-9")
    assert r.returncode == 0, r.stderr
    assert f"{len(PAIRS) - 1} clusters and 0 close pairs left" in r.stdout


@pytest.mark.slow
def test_the_server_bounds_a_consolidation_and_a_request_may_ask_for_less(tmp_path, embedder):
    with Memory(tmp_path / "mem.db", embedder=embedder, gate=GateConfig(profile="none")) as m:
        _fill(m)
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    with ServeProcess(tmp_path / "mem.db", tmp_path / "keys.json",
                      extra=("--consolidate-seconds", "0.1")) as srv, srv.client(keys["ana"]) as c:
        r = c.post("/v1/consolidate", json={"dry_run": True, "max_seconds": 1e-9, **U})
        assert r.status_code == 200, r.text
        report = r.json()["consolidation"]
        assert report["complete"] is False and report["clusters_left"] == len(PAIRS) - 1
        # asking for more than the server's bound gets the bound, which these clusters fit in
        r = c.post("/v1/consolidate", json={"max_seconds": 3600, **U})
        assert r.json()["consolidation"]["complete"] is True, r.text
        r = c.post("/v1/consolidate", json={"max_seconds": 0, **U})
        assert r.status_code == 400 and "max_seconds" in r.json()["error"]["message"]
    r = cli("serve", "--db", str(tmp_path / "mem.db"), "--keys", str(tmp_path / "keys.json"), "--port", "0",
            "--consolidate-seconds", "0")
    assert r.returncode == 2 and "--consolidate-seconds takes seconds" in r.stderr
