"""The Rust keyword index: what users type finds what was stored, per-scope
bm25 statistics, exact removal, allow-lists inside the ranking, typed errors."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memsieve
from memsieve import _core
from test_core_errors import check
from memsieve._core import KeywordIndex, tokenize, tokenize_kinds

WORDS = ["pilot", "brother", "flies", "TAP", "gym", "Bloco", "golf", "tesla", "coffee", "sugar",
         "teacher", "Clara", "floor", "12", "2023-05-08", "7:40", "555-0202", "manager", "the", "is"]

texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=10).map(" ".join)
QUERIES = ["pilot", "brother flies", "TAP gym 2023", "7:40 coffee sugar", "555-0202 manager", "Clara teacher floor 12"]


def ranking(ix, query, k=1000, **kw):
    ids, scores = ix.search(query, k, **kw)
    return ids.tolist(), scores.tolist()


@pytest.mark.parametrize(
    "stored, typed",
    [
        ("Call me at 555-0202", "555-0202"),
        ("Call me at 555-0202", "what number ends in 0202"),
        ("The bus leaves at 7:40pm", "7:40"),
        ("We met on 2023-05-08", "2023"),
        ("We met on 2023-05-08", "2023-05-08"),
        ("It cost 3.5 euros", "3.5"),
        ("My email address is now ana.silva@mailbox.org.", "ana.silva@mailbox.org"),
        ("My email address is now ana.silva@mailbox.org.", "silva"),
        ("I was running every morning", "runs"),
        ("He flies for TAP", "Which airline does he fly for?"),
        ("Treatment at São João", "sao joao"),
    ],
)
def test_what_users_type_finds_what_was_stored(stored, typed):
    ix = KeywordIndex()
    ix.add(1, stored)
    ix.add(2, "an unrelated note about lunch and weather")
    ids, scores = ix.search(typed, 5)
    assert ids.tolist() == [1], (stored, typed, tokenize(stored), tokenize(typed))
    assert scores.dtype == np.float32 and scores[0] > 0


def test_tokenizer_keeps_numbers_dates_phones_and_drops_stopwords():
    assert tokenize("On 2023-05-08 at 7:40 call 555-0202") == [
        "2023-05-08", "2023", "05", "08", "7:40", "7", "40", "call", "555-0202", "555", "0202"]
    assert tokenize("the and of is") == []
    assert tokenize("running") == ["run"]
    kinds = {t: k for t, _, k in tokenize_kinds("Yesterday my brother joined TAP in 2023")}
    assert kinds == {"yesterday": "word", "brother": "word", "join": "word", "tap": "name", "2023": "number"}


@settings(max_examples=60, deadline=None)
@given(a_docs=st.lists(texts, min_size=1, max_size=20), b_docs=st.lists(texts, min_size=1, max_size=40))
def test_a_scopes_ranking_is_unchanged_by_another_scopes_writes(a_docs, b_docs):
    a, b = KeywordIndex(), KeywordIndex()
    a.add_many(np.arange(len(a_docs), dtype=np.int64), a_docs)
    before = [ranking(a, q) for q in QUERIES]
    # Same ids, same words: only a shared statistic could leak.
    b.add_many(np.arange(len(b_docs), dtype=np.int64), b_docs)
    for i in range(0, len(b_docs), 3):
        b.remove(i)
    assert [ranking(a, q) for q in QUERIES] == before


def test_isolation_test_would_see_shared_statistics():
    # The property above can fail: the same writes into A's own index move A's scores.
    a = KeywordIndex()
    a.add_many(np.arange(3, dtype=np.int64), ["pilot brother", "gym", "banana"])
    before = ranking(a, "pilot")
    a.add_many(np.arange(3, 303, dtype=np.int64), ["pilot"] * 300)
    assert ranking(a, "pilot", k=1) != (before[0][:1], before[1][:1])


ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "replace"]), st.integers(0, 30), texts), max_size=120)


@settings(max_examples=60, deadline=None)
@given(ops)
def test_after_any_edits_the_index_equals_a_fresh_build(seq):
    ix, live = KeywordIndex(), {}
    for op, i, text in seq:
        if op == "add" and i not in live:
            ix.add(i, text)
            live[i] = text
        elif op == "remove" and i in live:
            ix.remove(i)
            del live[i]
        elif op == "replace" and i in live:
            ix.replace(i, text)
            live[i] = text
    fresh = KeywordIndex()
    ids = sorted(live, reverse=True)
    fresh.add_many(np.array(ids, dtype=np.int64), [live[i] for i in ids])
    assert len(ix) == len(fresh) and ix.avg_len == fresh.avg_len
    assert ix.ids().tolist() == sorted(live)
    for q in QUERIES:
        assert ranking(ix, q) == ranking(fresh, q), q
    for w in ("pilot", "tap", "555-0202", "never-seen"):
        assert ix.df(w) == fresh.df(w) and ix.idf(w) == fresh.idf(w)
    for i in live:
        assert ix.tokens_of(i) == fresh.tokens_of(i)


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(texts, min_size=1, max_size=60), allowed=st.sets(st.integers(-5, 70)), k=st.integers(0, 80))
def test_allow_returns_min_k_matches_inside_the_ranking(docs, allowed, k):
    ix = KeywordIndex()
    ix.add_many(np.arange(len(docs), dtype=np.int64), docs)
    full_ids, full_scores = ranking(ix, "pilot brother 2023-05-08 TAP")
    expect = [(i, s) for i, s in zip(full_ids, full_scores) if i in allowed]
    for form in (np.array(sorted(allowed), dtype=np.int64), sorted(allowed), allowed):
        ids, scores = ranking(ix, "pilot brother 2023-05-08 TAP", k, allow=form)
        assert len(ids) == min(k, len(expect))
        assert list(zip(ids, scores)) == expect[: len(ids)]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=40))
def test_any_text_indexes_and_searches(text, query):
    ix = KeywordIndex()
    ix.add(1, text)
    terms = tokenize(text)
    assert ix.tokens_of(1) == sorted(set(terms))
    assert all(t and (not t.isascii() or t == t.lower()) for t in terms)
    ids, scores = ix.search(query, 3)
    # A query finds the document exactly when they share a term.
    assert ids.tolist() == ([1] if set(tokenize(query)) & set(terms) else [])
    share, new = ix.info_novelty(query, [1])
    assert 0.0 <= share <= 1.0 and (share == 0.0) == (not new)


def test_huge_k_is_capped_and_ties_break_by_id():
    ix = KeywordIndex()
    for i in (30, 10, 20):
        ix.add(i, "same words")
    ix.add(5, "other")
    for k in (2**63 - 1, 2**62, np.int64(7)):
        ids, scores = ix.search("words", k)
        assert ids.tolist() == [10, 20, 30] and len(scores) == 3
    assert len(ix.search("words", 0)[0]) == 0


def test_searches_release_the_gil_and_agree():
    ix = KeywordIndex()
    rng = np.random.default_rng(0)
    docs = [" ".join(rng.choice(WORDS, 8)) for _ in range(3000)]
    ix.add_many(np.arange(3000, dtype=np.int64), docs)
    want = ranking(ix, "pilot TAP 7:40", 50)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: ranking(ix, "pilot TAP 7:40", 50), range(64)))
    assert all(g == want for g in got)


def test_bad_arguments_raise_typed_errors():
    ix = KeywordIndex()
    ix.add(1, "my brother is a pilot")
    check(memsieve.DtypeError, lambda: ix.search("pilot", True), "k must be an integer", "bool", "k=10")
    check(memsieve.DtypeError, lambda: ix.search("pilot", 2.5), "float")
    check(memsieve.ConfigError, lambda: ix.search("pilot", -1), "k must be >= 0", "-1")
    check(memsieve.ConfigError, lambda: ix.search("pilot", 10**30), "2^63")
    check(memsieve.DtypeError, lambda: ix.add(True, "x"), "id", "bool")
    check(memsieve.DtypeError, lambda: ix.add(5, b"bytes"), "text must be a str", "bytes")
    check(memsieve.DtypeError, lambda: ix.search(None, 3), "query must be a str", "NoneType")
    check(memsieve.DtypeError, lambda: ix.idf(3), "term must be a str")
    check(memsieve.DtypeError, lambda: tokenize(["a"]), "text must be a str", "list")
    check(memsieve.DtypeError, lambda: ix.info_novelty("pilot", [1], w_name="2"), "w_name")
    check(memsieve.DtypeError, lambda: ix.search("pilot", 3, allow=np.array([1], dtype=np.int32)), "int64")
    check(memsieve.DtypeError, lambda: ix.search("pilot", 3, allow="1"), "allow", "str")
    check(memsieve.DtypeError, lambda: ix.search("pilot", 3, allow=[1, "x"]), "position 1")
    check(memsieve.StateError, lambda: ix.add(1, "again"), "id 1", "replace")
    check(memsieve.StateError, lambda: ix.remove(9), "id 9")
    check(memsieve.StateError, lambda: ix.replace(9, "x"), "id 9")
    check(memsieve.StateError, lambda: ix.tokens_of(9), "id 9")
    check(memsieve.ShapeError, lambda: ix.add_many(np.array([2, 3], dtype=np.int64), ["a"]), "2 ids", "1 texts")
    check(memsieve.DtypeError, lambda: ix.add_many(np.array([2, 3], dtype=np.int64), ["a", 5]), "int at position 1")
    check(memsieve.DtypeError, lambda: ix.add_many(np.array([2], dtype=np.int64), "a"), "list of str")
    check(memsieve.StateError, lambda: ix.add_many(np.array([2, 2], dtype=np.int64), ["a", "b"]), "twice")
    check(memsieve.StateError, lambda: ix.info_novelty("pilot", [7]), "neighbour id 7")
    check(memsieve.ConfigError, lambda: ix.info_novelty("pilot", [1], w_number=-1.0), "w_number", "-1")
    assert ix.ids().tolist() == [1] and ix.tokens_of(1) == ["brother", "pilot"], "nothing half-written"
    # A lone surrogate cannot fail a call: it is read as U+FFFD, which is no word.
    assert tokenize("pilot \ud800 gym") == ["pilot", "gym"]
    ix.add(2, "TAP \udfff")
    assert ix.tokens_of(2) == ["tap"] and ix.search("\ud800 tap", 5)[0].tolist() == [2]
    assert _core.ConfigError is memsieve.ConfigError


def test_info_novelty_finds_new_details_and_ignores_repeats():
    ix = KeywordIndex()
    ix.add_many(np.array([1, 2, 3], dtype=np.int64), [
        "My brother is a pilot.", "My email address is ana@example.com.", "I go to the FitLife gym."])
    share, new = ix.info_novelty("My brother is a pilot, he flies for TAP.", [1])
    assert new == ["tap", "flies"] and 0.4 < share < 0.8
    assert ix.info_novelty("my brother is a PILOT", [1]) == (0.0, [])
    assert ix.info_novelty("Ines has three cats", [1, 2, 3])[0] == 1.0
    assert ix.info_novelty("oh, it is what it is", [1]) == (0.0, [])
    share, new = ix.info_novelty("My email address is now ana.silva@mailbox.org.", [2])
    assert "ana.silva@mailbox.org" in new and share > 0.5
    # Against the whole neighbourhood, known words stop counting.
    alone = ix.info_novelty("my brother goes to the FitLife gym", [1])[0]
    both = ix.info_novelty("my brother goes to the FitLife gym", np.array([1, 3], dtype=np.int64))[0]
    assert both < alone
    # A new number weighs more than a new word of the same idf.
    assert ix.info_novelty("pilot brother 4711", [1])[0] > ix.info_novelty("pilot brother zebra", [1])[0]
    assert ix.info_novelty("pilot brother 4711", [1], w_number=1.0)[0] == ix.info_novelty("pilot brother zebra", [1])[0]
