"""Events: a thing done in the past is never the newer version of another thing done.

"I went to a jazz concert" and, later, "I went to a rock concert" both stay true. Freshness
must not mark the first superseded (``current_only`` would then drop it), the write path must
not link the second as its newer version, and an order word ("the most recent concert", "my
first race") still lists them in order of time.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import Memory
from memsieve.read.versions import Version, freshen
from memsieve.text.lexicon import ENGLISH


@pytest.mark.parametrize("text, event", [
    ("I went to a jazz concert downtown.", True),
    ("We adopted a cat named Miso.", True),
    ("Yesterday I attended a pottery class and made a bowl.", True),
    ("My sister got married in June.", True),
    ("Caroline went to an LGBTQ support group on 7 May 2023.", True),
    ("Andrew: Last Friday, I hiked with some friends. The weather was great.", True),
    # states, in the past or now: a later statement may replace them
    ("I live in Oakland now.", False),
    ("I lived in Berkeley.", False),
    ("The meeting was on Tuesday.", False),
    ("I worked at Google for five years.", False),
    ("I had knee surgery.", False),
    # a count or a state up to now, a plan, a habit, a question
    ("I've tried three Korean restaurants.", False),
    ("I have been to Paris twice.", False),
    ("I was planning to go hiking.", False),
    ("I used to play tennis.", False),
    ("Did you go to the concert?", False),
    ("I love the dark sky and I went hiking.", False),
    # a said change is a version's business
    ("I moved to Denver.", False),
    ("My grandfather passed away.", False),
    ("Andrew: Got it. Thanks!", False),
    # a capitalized stopword opening a sentence is no name, so no doer
    ("It went alright.", False),
    ("That went well!", False),
    # a set phrase that ends its clause tells of nothing done; with more words it is a thing got
    ("You got this!", False),
    ("We got this, don't worry.", False),
    ("I got this. Thanks for explaining!", False),
    # "got it", "got them": a thing got ("did you get the job?" "I got it!")
    ("Yep, I got them!", True),
    ("I got it from my aunt.", True),
    ("You got this! I ran my first 10k this morning.", True),
])
def test_what_tells_of_an_event(text, event):
    assert ENGLISH.tells_of_event(text) is event


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_a_question_is_never_an_event_and_any_text_is_read(text):
    assert isinstance(ENGLISH.tells_of_event(text), bool)
    assert not ENGLISH.tells_of_event(text + " Did I?")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.integers(min_value=1, max_value=28),
       st.sampled_from(["January", "March", "June", "October"]), st.integers(min_value=1950, max_value=2099))
def test_a_text_that_names_its_date_says_so_and_any_text_is_read(text, day, month, year):
    from memsieve.text.when_told import names_its_date

    assert isinstance(names_its_date(text), bool)
    assert names_its_date(f"I ran a race on {day} {month} {year}.")
    assert names_its_date(f"We moved there in {year}.")
    assert not names_its_date(f"I ran {day} miles this morning.")


def _v(key: int, day: str) -> Version:
    return Version(key=key, valid_from=f"2024-{day}", created_at="2024-12-01T00:00:00", order=key)


def test_siblings_are_never_superseded_and_keep_their_ranks_without_an_order_word():
    ranked = [_v(1, "03-10"), _v(2, "06-10"), _v(3, "05-01")]
    out = freshen(ranked, [], siblings=[(1, 2)])
    assert [v.key for v, _ in out] == [1, 2, 3] and all(newer is None for _, newer in out)


@pytest.mark.parametrize("order, expected", [("latest", [3, 2, 1]), ("earliest", [3, 1, 2])])
def test_an_order_word_lists_a_clique_of_siblings_in_time_at_its_best_rank(order, expected):
    ranked = [_v(3, "05-01"), _v(1, "03-10"), _v(2, "06-10")]
    out = freshen(ranked, [], siblings=[(1, 2)], sibling_order=order)
    assert [v.key for v, _ in out] == expected
    assert all(newer is None for _, newer in out)


def test_siblings_join_only_as_cliques():
    # 1~2 and 2~3 are alike, 1 and 3 are not: 3 is not pulled up to 1's rank.
    ranked = [_v(1, "01-01"), _v(4, "02-01"), _v(2, "03-01"), _v(3, "09-01")]
    out = freshen(ranked, [], siblings=[(1, 2), (2, 3)], sibling_order="latest")
    assert [v.key for v, _ in out] == [2, 1, 4, 3]


EVENTS = [("2024-03-10T10:00:00", "I went to a jazz concert downtown."),
          ("2024-06-10T10:00:00", "I went to a rock concert at the Fillmore."),
          ("2024-04-01T10:00:00", "I ran a 10k race in Oakland."),
          ("2024-05-01T10:00:00", "I ran a half marathon in San Jose.")]
STATES = [("2024-02-01T10:00:00", "I live in Berkeley."), ("2024-06-01T10:00:00", "I live in Oakland now.")]


@pytest.fixture()
def told(tmp_path, embedder):
    m = Memory(tmp_path / "events.db", embedder=embedder)
    decisions = {text: m.add(text, user_id="u", valid_from=when) for when, text in EVENTS + STATES}
    yield m, decisions
    m.close()


def test_two_races_are_both_current_and_neither_supersedes_the_other(told):
    m, decisions = told
    half = decisions["I ran a half marathon in San Jose."][-1]
    assert half.event == "ADD" and half.link_kind != "updates"
    if half.link_kind == "near":
        assert "each tells of a thing done" in half.reason
    for query, both in [("what races did I run?", {"I ran a 10k race in Oakland.", "I ran a half marathon in San Jose."}),
                        ("what concerts did I go to?", {"I went to a jazz concert downtown.",
                                                        "I went to a rock concert at the Fillmore."})]:
        hits = m.search(query, user_id="u", limit=4)
        assert both <= {h.text for h in hits}
        assert all(h.superseded_by is None for h in hits if h.text in both)
        current = m.search(query, user_id="u", limit=4, current_only=True)
        assert both <= {h.text for h in current}


def test_a_state_is_still_superseded_by_its_newer_version(told):
    m, _ = told
    hits = m.search("where do I live?", user_id="u", limit=4)
    assert hits[0].text == "I live in Oakland now."
    old = next(h for h in hits if h.text == "I live in Berkeley.")
    assert old.superseded_by == hits[0].id


@pytest.mark.parametrize("query, first", [
    ("what is the most recent concert I attended?", "I went to a rock concert at the Fillmore."),
    ("what was the first concert I went to?", "I went to a jazz concert downtown."),
    ("what was my most recent race?", "I ran a half marathon in San Jose."),
    ("what was the first race I ran?", "I ran a 10k race in Oakland."),
    ("what was the last concert I went to?", "I went to a rock concert at the Fillmore."),
    ("when did I last run a race?", "I ran a half marathon in San Jose."),
])
def test_an_order_word_sorts_separate_events_by_time(told, query, first):
    m, _ = told
    hits = m.search(query, user_id="u", limit=4, reference_time="2024-07-01T00:00:00")
    assert hits[0].text == first
    assert all(h.superseded_by is None for h in hits if h.text in {t for _, t in EVENTS})


def test_an_updates_link_between_two_events_from_an_older_store_reads_as_siblings(tmp_path, embedder):
    path = tmp_path / "old.db"
    m = Memory(path, embedder=embedder)
    for when, text in EVENTS[2:]:
        m.add(text, user_id="u", valid_from=when)
    ids = {h.text: h.id for h in m.get_all(user_id="u")}
    m.close()
    # An older write path linked the later race as the earlier one's newer version.
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM links")
        db.execute("INSERT INTO links (memory_id, linked_id, kind, cosine, created_at) VALUES (?, ?, 'updates', 0.8, ?)",
                   (ids["I ran a half marathon in San Jose."], ids["I ran a 10k race in Oakland."],
                    "2024-05-01T10:00:00"))
    m = Memory(path, embedder=embedder)
    hits = m.search("what races did I run?", user_id="u", limit=2, current_only=True)
    assert {h.text for h in hits} == {t for _, t in EVENTS[2:]}
    m.close()


BOUGHT = [("2024-01-05T10:00:00", "I bought a new road bike, a Trek Domane."),
          ("2024-03-10T10:00:00", "I bought a standing desk for my office."),
          ("2024-05-20T10:00:00", "I bought noise-cancelling headphones.")]
VISITED = [("2024-02-10T10:00:00", "I visited my aunt in Ohio."),
           ("2024-04-10T10:00:00", "I visited the Louvre in Paris."),
           ("2024-06-01T10:00:00", "I visited my college roommate in Denver.")]


@pytest.fixture()
def errands(tmp_path, embedder):
    m = Memory(tmp_path / "errands.db", embedder=embedder)
    for when, text in BOUGHT + VISITED:
        m.add(text, user_id="u", valid_from=when)
    yield m
    m.close()


@pytest.mark.parametrize("query, first", [
    ("What is the last thing I bought?", BOUGHT[-1][1]),
    ("What was the first thing I bought this year?", BOUGHT[0][1]),
    ("Who did I visit most recently?", VISITED[-1][1]),
    ("Who was the first person I visited this year?", VISITED[0][1]),
])
def test_an_order_word_puts_the_events_it_asks_about_in_time_alike_or_not(errands, query, first):
    hits = errands.search(query, user_id="u", limit=3, reference_time="2024-07-01T00:00:00")
    assert hits[0].text == first, [h.text for h in hits]
    assert all(h.superseded_by is None for h in hits)


def test_ordered_events_join_only_the_events_that_say_the_leaders_topic_words():
    from memsieve.read.versions import ordered_events

    texts = {1: "I went to a jazz concert downtown.", 2: "I went hiking at Mount Tam.",
             3: "I went to a rock concert at the Fillmore.", 4: "I love concerts."}
    pairs = ordered_events([1, 2, 3, 4], texts=texts, topic=frozenset({"concert", "went"}))
    assert pairs == [(1, 3)]  # hiking lacks "concert"; "I love concerts" tells of no event
    assert ordered_events([2], texts=texts, topic=frozenset({"concert"})) == []
    assert ordered_events([1, 3], texts=texts, topic=frozenset({"swim"})) == []


WENT = [("2024-02-10T10:00:00", "I went to Lisbon for a long weekend."),
        ("2024-04-10T10:00:00", "I went to Kyoto with my sister."),
        ("2024-06-01T10:00:00", "I went to Denver for a conference.")]
SAW = [("2024-02-12T10:00:00", "I saw Dune Part Two at the IMAX."),
       ("2024-04-12T10:00:00", "I saw Inside Out 2 with my niece."),
       ("2024-06-03T10:00:00", "I saw Oppenheimer at a rerun screening.")]


@pytest.fixture()
def outings(tmp_path, embedder):
    m = Memory(tmp_path / "outings.db", embedder=embedder)
    for when, text in BOUGHT + WENT + SAW:
        m.add(text, user_id="u", valid_from=when)
    yield m
    m.close()


@pytest.mark.parametrize("query, first", [
    ("What did I buy most recently?", BOUGHT[-1][1]),
    ("What did I buy first this year?", BOUGHT[0][1]),
    ("Where did I go most recently?", WENT[-1][1]),
    ("Where did I go first this year?", WENT[0][1]),
    ("What movie did I see most recently?", SAW[-1][1]),
    ("Which film did I see first?", SAW[0][1]),
    # asked with a kin of the verb the events were told with
    ("What movie did I watch most recently?", SAW[-1][1]),
    ("Where did I travel first this year?", WENT[0][1]),
])
def test_a_question_in_a_verbs_plain_form_orders_the_events_told_in_its_past(outings, query, first):
    # "did I buy" says "buy"; the events say "bought", a term of its own in the index
    hits = outings.search(query, user_id="u", limit=3, reference_time="2024-07-01T00:00:00")
    assert hits[0].text == first, [h.text for h in hits]


@pytest.mark.parametrize("query, first", [
    ("Where did I go first this year?", WENT[0][1]),
    ("What did I buy most recently?", BOUGHT[-1][1]),
    ("What was the first movie I saw this year?", SAW[0][1]),
])
def test_an_order_word_pulls_the_event_it_asks_for_into_the_results(outings, query, first):
    # one result asked for: the earliest (latest) event is pulled into it from below
    hits = outings.search(query, user_id="u", limit=1, reference_time="2024-07-01T00:00:00")
    assert [h.text for h in hits] == [first]


@pytest.mark.parametrize("text, event", [
    # a verb whose past is its plain form: past after "she" or a name ("she reads" is the present)
    ("She read Dune on the flight home.", True),
    ("My sister cut her hair short.", True),
    ("Maria read the letter twice.", True),
    # after "I", "we", "you", "they" only where the text says its past otherwise
    ("I read Project Hail Mary last month.", True),
    ("We put up shelves in the garage last weekend.", True),
    ("I hit a new personal best two days ago.", True),
    ("I read Dune and loved it.", True),
    ("I read every night before bed.", False),
    ("They put the house up for sale.", False),
    ("I read Project Hail Mary.", False),
    # a perfect, a future, a present with "s", a plan: as before
    ("I've read Dune.", False),
    ("I will read Dune next month.", False),
    ("She reads a lot.", False),
    ("I was going to read Dune last month.", False),
])
def test_a_verb_whose_past_is_its_plain_form_tells_of_an_event_where_the_text_says_the_past(text, event):
    assert ENGLISH.tells_of_event(text) is event


READ = [("2024-02-01T10:00:00", "I read Project Hail Mary last month, loved every page."),
        ("2024-04-01T10:00:00", "I read The Overstory a few weeks ago, it was slow going."),
        ("2024-06-01T10:00:00", "I read Piranesi last week, such a strange book.")]


@pytest.mark.parametrize("query, first", [
    ("What did I read first this year?", READ[0][1]),
    ("What did I read most recently?", READ[-1][1]),
])
def test_books_read_are_events_an_order_word_puts_in_time(tmp_path, embedder, query, first):
    m = Memory(tmp_path / "books.db", embedder=embedder)
    for when, text in READ:
        m.add(text, user_id="u", valid_from=when)
    hits = m.search(query, user_id="u", limit=3, reference_time="2024-07-01T00:00:00")
    assert hits[0].text == first, [h.text for h in hits]
    assert all(h.superseded_by is None for h in hits)  # one book read does not undo another
    m.close()


def test_without_an_order_word_nothing_is_pulled_up(outings):
    ranked = [h.text for h in outings.search("Where did I go this year?", user_id="u", limit=6,
                                             reference_time="2024-07-01T00:00:00")]
    assert [h.text for h in outings.search("Where did I go this year?", user_id="u", limit=1,
                                           reference_time="2024-07-01T00:00:00")] == ranked[:1]
