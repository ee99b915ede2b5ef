"""Freshness at read, as pure functions: the newest version of a fact takes its group's best rank."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.read.versions import Version, freshen, version_groups


def _v(key, day, order=None):
    return Version(key=key, valid_from=f"2024-01-{day:02d}T00:00:00+00:00", created_at="2026-01-01T00:00:00+00:00",
                   order=key if order is None else order)


def test_the_newer_version_takes_the_older_ones_rank():
    ranked = [_v(1, 3), _v(2, 9), _v(3, 5)]  # 1 and 3 are versions; 3 is newer
    out = freshen(ranked, [(1, 3)])
    assert [(v.key, sup) for v, sup in out] == [(3, None), (1, 3), (2, None)]


def test_unlinked_results_keep_their_order():
    ranked = [_v(5, 1), _v(2, 28), _v(9, 14)]
    assert [v.key for v, _ in freshen(ranked, [])] == [5, 2, 9]


def test_groups_are_transitive_and_ignore_outside_keys():
    groups = version_groups([1, 2, 3, 4], [(1, 2), (2, 3), (4, 99)])
    assert groups[1] == groups[2] == groups[3] != groups[4]


def test_ties_in_valid_from_fall_back_to_created_at_then_order():
    a = Version(key=1, valid_from=None, created_at="2026-02-01T00:00:00+00:00", order=1)
    b = Version(key=2, valid_from=None, created_at="2026-03-01T00:00:00+00:00", order=2)
    c = Version(key=3, valid_from=None, created_at="2026-03-01T00:00:00+00:00", order=3)
    assert [v.key for v, _ in freshen([a, b, c], [(1, 2), (2, 3)])] == [3, 2, 1]


@settings(max_examples=200, deadline=None)
@given(st.permutations(list(range(1, 9))), st.permutations(list(range(8))), st.integers(0, 7))
def test_any_insertion_times_put_the_newest_first(days, ranks, others):
    """A group of 8 versions inserted in any time order, retrieved in any rank order,
    mixed with unrelated results: the newest version sits at the group's best rank."""
    group = [_v(k, days[k]) for k in range(8)]
    unrelated = [_v(100 + i, 1) for i in range(others)]
    ranked = [group[r] for r in ranks]
    for i, u in enumerate(unrelated):
        ranked.insert(2 * i, u)
    pairs = [(group[k].key, group[k + 1].key) for k in range(7)]
    out = freshen(ranked, pairs)
    best = min(i for i, v in enumerate(ranked) if v.key < 100)
    newest = max(group, key=lambda v: v.valid_from)
    assert out[best] == (newest, None)
    olds = [v for v, sup in out if sup == newest.key]
    assert len(olds) == 7 and [v.valid_from for v in olds] == sorted((v.valid_from for v in olds), reverse=True)
    assert [v.key for v, _ in out if v.key >= 100] == [u.key for u in unrelated]


def test_alike_memories_group_only_as_cliques():
    # A ~ B and B ~ C by what they say, but A and C are not alike: no one fact of three.
    ranked = [_v(1, 2), _v(2, 5), _v(3, 9)]
    groups = version_groups([1, 2, 3], [], similar=[(1, 2), (2, 3)])
    assert groups[1] == groups[2] != groups[3]
    # C, the newest, does not jump to A's rank; B (newer than A) does.
    assert [v.key for v, _ in freshen(ranked, [], similar=[(1, 2), (2, 3)])] == [2, 1, 3]
    # all three alike: one group, the newest first
    assert [v.key for v, _ in freshen(ranked, [], similar=[(1, 2), (2, 3), (1, 3)])] == [3, 2, 1]


def test_linked_chains_stay_whole_and_join_alike_memories_as_a_clique():
    # 1 -> 2 -> 3 linked by the write path: one history, however alike its ends are.
    assert len(set(version_groups([1, 2, 3, 4], [(1, 2), (2, 3)]).values())) == 2
    # 4 is alike to 3 only: it may not join the history (1 and 2 are no versions of it)
    groups = version_groups([1, 2, 3, 4], [(1, 2), (2, 3)], similar=[(3, 4)])
    assert groups[1] == groups[2] == groups[3] != groups[4]
    groups = version_groups([1, 2, 3, 4], [(1, 2), (2, 3)], similar=[(1, 4), (2, 4), (3, 4)])
    assert len(set(groups.values())) == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=6),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=16), st.randoms())
def test_every_group_is_a_linked_history_or_a_clique_of_alike_memories(links, alike, rnd):
    keys = list(range(8))
    groups = version_groups(keys, links, similar=alike)
    shuffled = list(alike)
    rnd.shuffle(shuffled)
    assert version_groups(keys, links, similar=shuffled) == groups
    linked = version_groups(keys, links)
    near = {frozenset(p) for p in alike + links}
    for rep in set(groups.values()):
        members = [k for k in keys if groups[k] == rep]
        # the links' own groups are never split ...
        assert all(groups[k] == rep for m in members for k in keys if linked[k] == linked[m])
        # ... and two of them are one group only when every member is a version of every other
        histories = {linked[m] for m in members}
        if len(histories) > 1:
            for a in members:
                for b in members:
                    if linked[a] != linked[b]:
                        assert frozenset((a, b)) in near
