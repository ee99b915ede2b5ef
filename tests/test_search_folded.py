"""Texts folded into a memory that say words it does not: shown with it by search, and forgotten on request.

A NOOP keeps the memory as it was; what a repeat in other words adds ("and flowers") lived only in
its rejection record. Search now hands the latest such texts back with their memory
(``SearchResult.folded``) and ``render_line`` shows them, so they reach the reader; a request to
forget reads them as it reads memories.
"""

from __future__ import annotations

import math

import pytest

from memsieve import Memory
from memsieve.read.folded import FOLDED_PER_HIT, told_since
from memsieve.read.render import render_line, render_results
from memsieve.records import Folded
from memsieve.scope import Scope

MARKET = "I love going to the farmers market on Saturday mornings to buy fresh vegetables."
AGAIN = "I really love visiting the farmers market every Saturday morning for fresh vegetables and flowers."
OTHERS = ["My sister Ana works as a nurse in Boston.", "I adopted a cat named Miso last year.",
          "We repainted the kitchen cabinets last spring."]


def _folded_pair(mem: Memory, user: str = "u"):
    mem.add_many(OTHERS, user_id=user)
    (first,) = mem.add(MARKET, user_id=user, valid_from="2023-05-01")
    (later,) = mem.add(AGAIN, user_id=user, valid_from="2023-06-20")
    assert first.event == "ADD"
    assert later.event == "NOOP" and later.memory_id == first.memory_id, (
        f"the pair must fold for this test to weigh what search shows of a fold: {later.reason}")
    return first, later


def _hit(mem: Memory, memory_id: str, user: str = "u", **kw):
    hits = {h.id: h for h in mem.search("the farmers market", user_id=user, limit=4, **kw)}
    return hits[memory_id]


def test_a_fold_that_says_more_is_shown_with_its_memory(mem):
    first, later = _folded_pair(mem)
    hit = _hit(mem, first.memory_id)
    assert hit.text == MARKET
    assert [f.text for f in hit.folded] == [AGAIN]
    assert hit.folded[0].id == later.rejection_id
    assert hit.folded[0].valid_from.startswith("2023-06-20")
    line = render_line(hit)
    assert line == f"[1 May 2023] {MARKET} (told again on 20 June 2023: {AGAIN})"
    assert render_line(hit, folded=False) == f"[1 May 2023] {MARKET}"
    assert "flowers" not in render_results([hit], folded=False)
    assert hit.to_dict()["folded"][0]["id"] == later.rejection_id
    assert "flowers" in mem.context("the farmers market", user_id="u", limit=4)


def test_an_exact_repeat_is_not_shown(mem):
    first, _ = _folded_pair(mem)
    (again,) = mem.add(MARKET, user_id="u")
    assert again.event == "NOOP" and again.layer == "exact"
    assert [f.text for f in _hit(mem, first.memory_id).folded] == [AGAIN]


def test_as_of_follows_the_merges_in_force_then(mem):
    """A point-in-time search shows a fold with the memory it went into as things stood then: as of
    before the merge that retired that memory into another, with that memory, though the merge holds
    now; after the merge, with the memory kept; after an undo of it, with its own memory again, and
    as of while the merge held, with the memory kept. Keyword search finds the fold's words the same
    way."""
    import time

    from memsieve.times import now_iso

    def shown(**kw):
        return {h.id: [f.id for f in h.folded]
                for h in mem.search("the farmers market", user_id="u", limit=5, **kw)}

    def keyword(**kw):
        return [h.id for h in mem.search("flowers", user_id="u", mode="keyword", limit=5, **kw)]

    first, later = _folded_pair(mem)
    (dup,) = mem.add(MARKET, user_id="u")
    copy = mem.restore(dup.rejection_id, user_id="u")
    mem.update(copy.id, MARKET.replace("vegetables.", "vegetables and goat cheese."), user_id="u")
    time.sleep(0.01)
    before_merge = now_iso()
    time.sleep(0.01)
    (merge,) = [g for g in mem.consolidate(user_id="u").merges if g.status == "merged"]
    assert merge.kept_id == copy.id and not mem.get(first.memory_id, user_id="u").is_active
    # The merge holds: the memory kept shows the fold now, the memory it went into as of before.
    now = shown()
    assert first.memory_id not in now and now[copy.id] == [later.rejection_id]
    assert keyword() == [copy.id]
    then = shown(as_of=before_merge)
    assert then[first.memory_id] == [later.rejection_id] and then[copy.id] == []
    # The memory kept, found alone, showed no fold then: the one it holds now was another's.
    (alone,) = mem.search("goat cheese", user_id="u", limit=1, as_of=before_merge)
    assert alone.id == copy.id and alone.folded == ()
    assert [f.id for f in mem.search("goat cheese", user_id="u", limit=1)[0].folded] == [later.rejection_id]
    assert keyword(as_of=before_merge) == [first.memory_id]
    time.sleep(0.01)
    while_merged = now_iso()
    time.sleep(0.01)
    # Undone: its own memory's again, now and as of before.
    mem.unconsolidate(merge.id, user_id="u")
    for kw in ({}, {"as_of": before_merge}):
        seen = shown(**kw)
        assert seen[first.memory_id] == [later.rejection_id] and seen[copy.id] == [], kw
        assert keyword(**kw) == [first.memory_id], kw
    # As of while the merge held, the member was retired and the memory kept showed its fold,
    # though the undo has put the member back since.
    held = shown(as_of=while_merged)
    assert first.memory_id not in held and held[copy.id] == [later.rejection_id]
    assert keyword(as_of=while_merged) == [copy.id]


def test_a_restored_fold_is_its_own_memory_and_no_longer_shown(mem):
    first, later = _folded_pair(mem)
    restored = mem.restore(later.rejection_id, user_id="u")
    assert _hit(mem, first.memory_id).folded == ()
    assert _hit(mem, restored.id).text == AGAIN


def test_as_of_before_the_fold_shows_none(mem):
    first, later = _folded_pair(mem)
    told = mem.rejections(user_id="u")[-1].created_at
    at_memory = mem.get(first.memory_id, user_id="u").created_at
    assert at_memory < told
    assert _hit(mem, first.memory_id, as_of=at_memory).folded == ()
    assert [f.id for f in _hit(mem, first.memory_id, as_of=told).folded] == [later.rejection_id]


def test_forget_takes_a_fold_out_of_search_and_keeps_its_record(mem):
    first, later = _folded_pair(mem)
    mem.forget("the flowers", user_id="u")
    hit = _hit(mem, first.memory_id)
    assert hit.folded == ()
    assert "flowers" not in mem.context("the farmers market", user_id="u", limit=4)
    (record,) = [r for r in mem.rejections(user_id="u") if r.id == later.rejection_id]
    assert record.forgotten_at is not None and record.text == AGAIN
    assert "forgotten on request" in record.reason and first.memory_id in record.reason
    # The memory it went into says nothing of flowers and stays.
    assert mem.get(first.memory_id, user_id="u").is_active


def test_forget_says_which_folds_it_took_and_a_dry_run_which_it_would(mem):
    first, later = _folded_pair(mem)
    dry = mem.forget("the flowers", user_id="u", dry_run=True)
    assert list(dry) == [] and [r.id for r in dry.folds] == [later.rejection_id]
    assert dry.folds[0].forgotten_at is None and dry.folds[0].text == AGAIN
    # The dry run changed nothing: the fold is still shown.
    assert [f.id for f in _hit(mem, first.memory_id).folded] == [later.rejection_id]
    done = mem.forget("the flowers", user_id="u")
    assert list(done) == [] and [r.id for r in done.folds] == [later.rejection_id]
    assert done.folds[0].forgotten_at is not None and "forgotten on request" in done.folds[0].reason
    # Asked again, there is nothing left to take.
    assert mem.forget("the flowers", user_id="u").folds == []
    assert mem.scope(user_id="u").forget("the flowers", dry_run=True).folds == []


def test_forget_lists_a_memory_and_its_named_fold_together(mem):
    first, later = _folded_pair(mem)
    done = mem.forget("the farmers market", user_id="u")
    assert [m.id for m in done] == [first.memory_id] and not done[0].is_active
    assert [r.id for r in done.folds] == [later.rejection_id]
    assert "Forgotten(" in repr(done) and later.rejection_id in repr(done)


def test_a_purge_lists_the_memory_a_named_fold_went_into_and_no_fold(mem):
    first, later = _folded_pair(mem)
    dry = mem.forget("the flowers", user_id="u", purge=True, dry_run=True)
    assert [m.id for m in dry] == [first.memory_id] and dry.folds == []


def test_forget_of_something_else_leaves_the_fold(mem):
    first, later = _folded_pair(mem)
    gone = mem.forget("my cat Miso", user_id="u")
    assert [g.text for g in gone] == [OTHERS[1]] and gone.folds == []
    assert [f.id for f in _hit(mem, first.memory_id).folded] == [later.rejection_id]
    assert all(r.forgotten_at is None for r in mem.rejections(user_id="u"))


def test_forget_with_purge_erases_the_folds_text(mem):
    first, later = _folded_pair(mem)
    mem.forget("the flowers", user_id="u", purge=True)
    # A purge by description erases the memory a named text went into, with every text it holds.
    assert "flowers" not in mem.context("the farmers market", user_id="u", limit=4)
    (record,) = [r for r in mem.rejections(user_id="u") if r.id == later.rejection_id]
    assert record.text == ""


def test_another_users_search_never_shows_a_fold(mem):
    _folded_pair(mem, user="u")
    mem.add(MARKET, user_id="v", valid_from="2023-05-01")
    for hit in mem.search("the farmers market", user_id="v", limit=4):
        assert hit.folded == ()


def _store_folds(mem: Memory, memory_id: str, texts: list[str], scope: Scope) -> list[str]:
    return [mem.store.add_rejection(scope, text=t, sources=[], metadata={}, layer="novelty", novelty=0.01,
                                    tau=0.3, delta=0.05, kappa=20.0, nearest_id=memory_id, nearest_cos=0.99,
                                    reason="test fold", valid_from=None, now=f"2024-01-01T00:00:{i:02d}+00:00")
            for i, t in enumerate(texts)]


def test_the_store_reads_the_newest_folds_of_each_memory_in_its_scope(mem):
    (a,) = mem.add(MARKET, user_id="u")
    (b,) = mem.add(OTHERS[1], user_id="u")
    scope = Scope("u", None, None)
    many = _store_folds(mem, a.memory_id, [f"fold number {i}" for i in range(20)], scope)
    one = _store_folds(mem, b.memory_id, ["the cat sleeps all day"], scope)
    got = mem.store.folds_into(scope, [a.memory_id, b.memory_id, "no-such-id"], newest=8)
    assert [f.id for f in got[a.memory_id]] == list(reversed(many))[:8]
    assert [f.id for f in got[b.memory_id]] == one
    assert "no-such-id" not in got
    # Another scope asking for the same ids reads nothing: a fold belongs to its scope.
    assert mem.store.folds_into(Scope("v", None, None), [a.memory_id], newest=8) == {}
    assert mem.store.folds_into(scope, [], newest=8) == {}


def _fold(i: int, text: str) -> Folded:
    return Folded(id=f"r{i}", text=text, valid_from=None, created_at=f"2024-01-0{i}T00:00:00+00:00")


def test_told_since_keeps_the_newest_that_say_something_new_oldest_first():
    memory = "I have tried three Korean restaurants"
    newest_first = [_fold(5, "I have tried four Korean restaurants so far"),
                    _fold(4, "tried four Korean restaurants"),          # says only what r5 says
                    _fold(3, "I have tried three Korean restaurants"),  # says only what the memory says
                    _fold(2, "my friend Jun took me to a Korean restaurant"),
                    _fold(1, "I tried two Korean restaurants in Seoul")]
    kept = told_since(memory, newest_first)
    assert [f.id for f in kept] == ["r2", "r5"]
    assert len(told_since(memory, newest_first, most=5)) == 3
    assert told_since(memory, []) == ()
    assert FOLDED_PER_HIT == 2


def test_to_dict_of_a_result_without_folds_lists_none(mem):
    mem.add(MARKET, user_id="u")
    (hit,) = mem.search("market", user_id="u", limit=1)
    assert hit.to_dict()["folded"] == [] and not math.isnan(hit.score)


def test_a_filtered_search_shows_only_the_folds_its_filters_hold_for(mem):
    mem.add_many(OTHERS, user_id="u")
    (first,) = mem.add(MARKET, user_id="u", metadata={"chat": "a"})
    (later,) = mem.add(AGAIN, user_id="u", metadata={"chat": "b"})
    assert later.event == "NOOP" and later.memory_id == first.memory_id, later.reason
    assert _hit(mem, first.memory_id, filters={"chat": "a"}).folded == ()
    (shown,) = _hit(mem, first.memory_id).folded
    assert shown.metadata == {"chat": "b"} and shown.to_dict()["metadata"] == {"chat": "b"}


def test_a_memory_kept_by_a_merge_shows_what_was_folded_into_the_ones_it_retired(mem):
    first, later = _folded_pair(mem)
    (dup,) = mem.add(MARKET, user_id="u")
    assert dup.event == "NOOP" and dup.layer == "exact"
    copy = mem.restore(dup.rejection_id, user_id="u")  # two memories of one text: a merge keeps one
    report = mem.consolidate(user_id="u")
    (merge,) = [g for g in report.merges if g.status == "merged"]
    kept = merge.kept_id
    assert kept == copy.id, "a merge keeps the newest text: the copy, not the memory the fold went into"
    assert not mem.get(first.memory_id, user_id="u").is_active
    hits = {h.id: h for h in mem.search("the farmers market", user_id="u", limit=4)}
    assert first.memory_id not in hits
    assert [f.id for f in hits[kept].folded] == [later.rejection_id]
    # A request to forget reads the folds of a retired memory too, and they stay forgotten after an undo.
    mem.forget("the flowers", user_id="u")
    assert _hit(mem, kept).folded == ()
    mem.unconsolidate(merge.id, user_id="u")
    assert mem.get(first.memory_id, user_id="u").is_active
    assert _hit(mem, first.memory_id).folded == ()
