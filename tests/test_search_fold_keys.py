"""A folded text's words find its memory in keyword search (memsieve.read.fold_keys), on both stores.

"I really love visiting the farmers market ... for fresh vegetables and flowers." folds into "I love
going to the farmers market ... to buy fresh vegetables." Search shows the fold beside the memory;
these tests ask that a keyword search for a word only the fold says ("flowers") finds the memory,
and that the fold stops lifting it once it leaves search (forgotten, restored, purged), before it
was told (``as_of``), outside a filter, for another user, or when the memory is deleted.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from memsieve.read.fold_keys import FoldKeys, best_of, words_of
from memsieve.scope import Scope
from test_search_folded import MARKET, OTHERS, _folded_pair, _store_folds


def _keyword(mem, query="flowers", user="u", limit=5, **kw):
    return [(h.id, h.folded) for h in mem.search(query, user_id=user, mode="keyword", limit=limit, **kw)]


def test_a_word_only_a_fold_says_finds_its_memory_with_the_fold_shown(mem):
    first, later = _folded_pair(mem)
    ((memory_id, folded),) = _keyword(mem)
    assert memory_id == first.memory_id and [f.id for f in folded] == [later.rejection_id]
    assert "flowers" in mem.context("flowers", user_id="u", mode="keyword", limit=3)
    # The memory's own words still find it first where it says them.
    assert _keyword(mem, "farmers market vegetables")[0][0] == first.memory_id


def test_a_fold_told_after_a_search_is_found_by_the_next(mem):
    mem.add_many(["My sister Ana works as a nurse in Boston.", "I adopted a cat named Miso last year."], user_id="u")
    assert _keyword(mem) == []
    first, later = _folded_pair(mem)  # read forward from the index the first search built
    assert [m for m, _ in _keyword(mem)] == [first.memory_id]


def test_a_forgotten_fold_lifts_nothing(mem):
    first, _ = _folded_pair(mem)
    assert _keyword(mem)
    mem.forget("the flowers", user_id="u")
    assert _keyword(mem) == []
    assert mem.get(first.memory_id, user_id="u").is_active


def test_a_restored_fold_is_found_as_its_own_memory_only(mem):
    first, later = _folded_pair(mem)
    assert [m for m, _ in _keyword(mem)] == [first.memory_id]
    restored = mem.restore(later.rejection_id, user_id="u")
    assert [m for m, _ in _keyword(mem)] == [restored.id]


def test_a_purged_folds_words_find_nothing(mem):
    _folded_pair(mem)
    mem.forget("the flowers", user_id="u", purge=True)
    assert _keyword(mem) == []


def test_a_deleted_memory_is_not_returned_for_its_folds_words(mem):
    first, _ = _folded_pair(mem)
    mem.delete(first.memory_id, user_id="u")
    assert _keyword(mem) == []
    assert _keyword(mem, as_of="2999-01-01T00:00:00Z") == []


def test_as_of_before_the_fold_does_not_find_it_by_the_folds_words(mem):
    first, _ = _folded_pair(mem)
    told = mem.rejections(user_id="u")[-1].created_at
    at_memory = mem.get(first.memory_id, user_id="u").created_at
    assert _keyword(mem, as_of=at_memory) == []
    assert [m for m, _ in _keyword(mem, as_of=told)] == [first.memory_id]


def test_a_filtered_search_is_lifted_only_by_folds_its_filters_hold_for(mem):
    mem.add_many(["My sister Ana works as a nurse in Boston.", "I adopted a cat named Miso last year."], user_id="u")
    first = mem.add("I love going to the farmers market on Saturday mornings to buy fresh vegetables.",
                    user_id="u", metadata={"chat": "a"})[0]
    later = mem.add("I really love visiting the farmers market every Saturday morning for fresh vegetables and "
                    "flowers.", user_id="u", metadata={"chat": "b"})[0]
    assert later.event == "NOOP" and later.memory_id == first.memory_id, later.reason
    assert _keyword(mem, filters={"chat": "a"}) == []
    assert [m for m, _ in _keyword(mem)] == [first.memory_id]


def test_a_memory_kept_by_a_merge_is_found_by_the_words_folded_into_the_ones_it_retired(mem):
    first, later = _folded_pair(mem)
    (dup,) = mem.add(MARKET, user_id="u")
    copy = mem.restore(dup.rejection_id, user_id="u")  # two memories of one text: a merge keeps one
    (merge,) = [g for g in mem.consolidate(user_id="u").merges if g.status == "merged"]
    assert merge.kept_id == copy.id and not mem.get(first.memory_id, user_id="u").is_active
    # The fold went into the memory the merge retired; its words find the memory kept, fold shown.
    ((memory_id, folded),) = _keyword(mem)
    assert memory_id == copy.id and [f.id for f in folded] == [later.rejection_id]
    assert copy.id in [h.id for h in mem.search("flowers", user_id="u", limit=5)]  # the keyword side of hybrid
    assert [m for m, _ in _keyword(mem, filters={"no": "such"})] == []
    assert [m for m, _ in _keyword(mem, as_of="2999-01-01T00:00:00Z")] == [copy.id]  # a restricted search too
    # Undone, the fold's words find the memory it went into again, and not the copy.
    mem.unconsolidate(merge.id, user_id="u")
    assert [m for m, _ in _keyword(mem)] == [first.memory_id]
    # Merged again (now the copy's folds are none) and forgotten: nothing.
    mem.consolidate(user_id="u")
    mem.forget("the flowers", user_id="u")
    assert _keyword(mem) == []


def test_a_deleted_kept_memory_is_not_returned_for_its_retired_members_folds(mem):
    first, _ = _folded_pair(mem)
    (dup,) = mem.add(MARKET, user_id="u")
    copy = mem.restore(dup.rejection_id, user_id="u")
    mem.consolidate(user_id="u")
    assert [m for m, _ in _keyword(mem)] == [copy.id]
    mem.delete(copy.id, user_id="u")
    assert _keyword(mem) == []


def test_the_merges_are_read_once_a_search_and_only_for_a_hit_search_may_not_return():
    class Store:  # three memories with folds saying "flowers"; memory 3 was retired into 9
        reads = 0

        def folds_signature(self, scope):
            return 3, 0

        def folds_after(self, scope, after):
            return [(s, f"fresh flowers {s}", s, "2024-01-01", {}) for s in (1, 2, 3) if s > after]

        def merges_signature(self, scope):
            self.reads += 1
            return 1, 0

        def retired_into(self, scope):
            return {3: 9}

    store = Store()
    keys, scope = FoldKeys(store), Scope.of("u")
    assert sorted(s for s, _ in keys.hits(scope, "flowers", 5, holds=lambda s: True)) == [1, 2, 3]
    assert store.reads == 0
    assert [s for s, _ in keys.hits(scope, "flowers", 5, holds=lambda s: s == 9)] == [9]
    assert store.reads == 1  # three hits search may not return, one read
    assert keys.hits(scope, "flowers", 5, holds=lambda s: False) == [] and store.reads == 2


def test_the_store_reads_where_each_retired_member_lives_on_through_chains_and_undos(mem):
    mem.add_many(["I keep bees in the garden.", "My sister Ana works as a nurse in Boston.",
                  "I adopted a cat named Miso last year.", "We repainted the kitchen cabinets last spring."],
                 user_id="u")
    a, b, c, d = [it.id for it in mem.get_all(user_id="u")]
    seq = {it.id: mem.store.memory_row(it.id).seq for it in mem.get_all(user_id="u")}
    scope, store, now = Scope.of("u"), mem.store, "2024-01-01T00:00:00+00:00"
    assert store.merges_signature(scope) == (0, 0) and store.retired_into(scope) == {}
    with store.transaction(scope):
        first = store.add_merge(scope, kind="duplicates", kept_id=b, member_ids=[a, b], reason="t", state={}, now=now)
        store.add_merge(scope, kind="duplicates", kept_id=c, member_ids=[b], reason="t", state={}, now=now)
    # a went into b, and b later into c: both live on in c
    assert store.merges_signature(scope) == (2, 0)
    assert store.retired_into(scope) == {seq[a]: seq[c], seq[b]: seq[c]}
    with store.transaction(scope):
        store.mark_unmerged(first, now)
    assert store.merges_signature(scope) == (2, 1) and store.retired_into(scope) == {seq[b]: seq[c]}
    with store.transaction(scope):  # a loop (never written by consolidation) is not followed forever
        store.add_merge(scope, kind="duplicates", kept_id=b, member_ids=[c], reason="t", state={}, now=now)
    assert set(store.retired_into(scope)) == {seq[b], seq[c]}
    assert d not in {k for k in seq if seq[k] in store.retired_into(scope)}


def test_another_users_fold_lifts_nothing(mem):
    _folded_pair(mem, user="u")
    mem.add("I love going to the farmers market on Saturday mornings to buy fresh vegetables.", user_id="v")
    assert _keyword(mem, user="v") == []


def test_the_index_is_read_forward_by_folds_told_since_and_built_again_when_one_leaves(mem):
    first, later = _folded_pair(mem)
    keys = FoldKeys(mem.store)
    scope = Scope.of("u")
    ((fold_seq, text, memory_seq, told, metadata),) = mem.store.folds_after(scope, 0)
    assert text.endswith("and flowers.") and metadata == {} and told <= mem.rejections(user_id="u")[-1].created_at
    assert mem.store.folds_after(scope, fold_seq) == []
    assert mem.store.folds_signature(scope) == (fold_seq, 0)
    ((found, score),) = keys.hits(scope, "flowers", 5, holds=lambda s: True)
    assert found == memory_seq and score > 0
    assert keys.hits(scope, "flowers", 5, holds=lambda s: s != memory_seq) == []
    third = mem.add("I really love visiting the farmers market every Saturday morning for fresh vegetables and "
                    "tulips.", user_id="u", valid_from="2023-07-01")[0]
    assert third.event == "NOOP" and third.memory_id == first.memory_id, third.reason
    assert [s for s, _ in keys.hits(scope, "tulips", 5, holds=lambda s: True)] == [memory_seq]
    assert [s for s, _ in keys.hits(scope, "flowers", 5, holds=lambda s: True)] == [memory_seq]
    mem.forget("the flowers", user_id="u")
    assert keys.hits(scope, "flowers", 5, holds=lambda s: True) == []
    assert [s for s, _ in keys.hits(scope, "tulips", 5, holds=lambda s: True)] == [memory_seq]


def test_the_signature_moves_when_a_fold_is_told_or_leaves_and_not_for_an_exact_repeat(mem):
    mem.add_many(OTHERS, user_id="u")
    (market,) = mem.add(MARKET, user_id="u")
    scope = Scope.of("u")
    assert mem.store.folds_signature(scope) == (0, 0)
    (again,) = mem.add(MARKET, user_id="u")
    assert again.layer == "exact" and mem.store.folds_signature(scope) == (0, 0)  # an exact repeat says nothing new
    (flowers,) = _store_folds(mem, market.memory_id, ["the market sells flowers too"], scope)
    newest, left = mem.store.folds_signature(scope)
    assert newest > 0 and left == 0
    assert [r[1] for r in mem.store.folds_after(scope, 0)] == ["the market sells flowers too"]
    mem.restore(flowers, user_id="u")
    assert mem.store.folds_signature(scope) == (newest, 1)
    _store_folds(mem, market.memory_id, ["I bought tulips there in spring"], scope)
    told, left = mem.store.folds_signature(scope)
    assert told > newest and left == 1
    mem.forget("the tulips", user_id="u")
    assert mem.store.folds_signature(scope) == (told, 2)
    _store_folds(mem, market.memory_id, ["and daisies in summer"], scope)
    mem.purge(market.memory_id, user_id="u")
    assert mem.store.folds_signature(scope)[1] == 3  # the purge emptied the daisies' fold
    assert mem.store.folds_after(scope, 0) == []
    assert mem.store.folds_signature(Scope.of("nobody")) == (0, 0)


def test_folds_into_deleted_memories_do_not_crowd_out_one_that_can_be_returned(mem):
    """Search reads deeper than ``4 * limit`` folds while those it found go to memories it cannot
    return."""
    mem.add_many(OTHERS, user_id="u")
    (gone,) = mem.add(MARKET, user_id="u")
    (kept,) = mem.add("My brother collects vintage postcards.", user_id="u")
    scope = Scope.of("u")
    _store_folds(mem, gone.memory_id, [f"flowers {i}" for i in range(30)], scope)
    _store_folds(mem, kept.memory_id, ["he also bought some flowers and postcards of flowers markets"], scope)
    mem.delete(gone.memory_id, user_id="u")
    assert [m for m, _ in _keyword(mem, limit=1)] == [kept.memory_id]


def test_a_memorys_folds_are_one_document_of_their_distinct_words():
    assert words_of(["Thanks so much!", "thanks SO much, really", "Flowers & tulips"]) == \
        "thanks so much really flowers tulips"
    assert words_of([]) == ""


def test_many_folds_into_one_memory_are_one_hit_and_a_new_word_among_them_is_found(mem):
    mem.add_many(OTHERS, user_id="u")
    (thanks,) = mem.add("Thanks so much for the help!", user_id="u")
    scope = Scope.of("u")
    _store_folds(mem, thanks.memory_id, [f"thanks so much for the help, friend number {i}" for i in range(300)], scope)
    ((memory_id, _),) = _keyword(mem, "friend")
    assert memory_id == thanks.memory_id
    _store_folds(mem, thanks.memory_id, ["thanks, and the lasagna recipe was perfect"], scope)
    assert [m for m, _ in _keyword(mem, "lasagna")] == [thanks.memory_id]


def test_searches_on_threads_while_folds_are_told_and_leave(mem):
    """One Memory's searches share the folds' index: threads searching while folds are told and
    restored never fail, and the last search after them sees the store as it is."""
    import threading

    mem.add_many(OTHERS, user_id="u")
    (market,) = mem.add(MARKET, user_id="u")
    scope = Scope.of("u")
    errors: list[BaseException] = []
    stop = threading.Event()

    def search():
        try:
            while not stop.is_set():
                mem.search("flowers tulips", user_id="u", mode="keyword", limit=3)
                mem.search("flowers", user_id="u", limit=3, as_of="2999-01-01T00:00:00Z")
        except BaseException as exc:  # kept for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(3)]
    for t in threads:
        t.start()
    told = []
    for i in range(15):
        told += _store_folds(mem, market.memory_id, [f"I bought flowers number {i} and tulips"], scope)
        if i % 5 == 4:
            mem.restore(told[-2], user_id="u")
    stop.set()
    for t in threads:
        t.join(30)
    assert not errors, errors
    hits = [m for m, _ in _keyword(mem, "flowers")]
    assert market.memory_id in hits and len(hits) == 4  # the market and the three restored folds


def test_best_of_keeps_each_memorys_better_score_best_first():
    own = [(1, 3.0), (2, 2.0), (3, 1.0)]
    assert best_of(own, [], 2) == [(1, 3.0), (2, 2.0)]
    assert best_of(own, [(3, 5.0), (4, 1.5), (2, 0.5)], 10) == [(3, 5.0), (1, 3.0), (2, 2.0), (4, 1.5)]
    # A tie goes to the memory whose own words found it.
    assert best_of([(1, 1.0)], [(9, 1.0)], 10) == [(1, 1.0), (9, 1.0)]


@settings(max_examples=200, deadline=None)
@given(own=st.dictionaries(st.integers(0, 30), st.floats(0, 20), max_size=12),
       folded=st.dictionaries(st.integers(0, 30), st.floats(0, 20), max_size=12),
       limit=st.integers(1, 30))
def test_best_of_is_each_memory_once_at_its_best_score(own, folded, limit):
    own_hits = sorted(own.items(), key=lambda t: -t[1])
    fold_hits = sorted(folded.items(), key=lambda t: -t[1])
    out = best_of(own_hits, fold_hits, limit)
    seqs = [s for s, _ in out]
    assert len(seqs) == len(set(seqs)) == min(limit, len(set(own) | set(folded)))
    assert all(np.isclose(x, max(own.get(s, -1.0), folded.get(s, -1.0))) for s, x in out)
    assert [x for _, x in out] == sorted((x for _, x in out), reverse=True)
    if limit >= len(set(own) | set(folded)):
        assert set(seqs) == set(own) | set(folded)
