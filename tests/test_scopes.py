"""Scope semantics: the exact (user, agent, run) triple, normalized ids, and by-id calls restricted to a scope."""

from __future__ import annotations

import sqlite3
import unicodedata
import warnings

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import memsieve
from hostile import HashEmbedder, snapshot
from memsieve import Memory, NotFoundError, Scope, ScopeError
from memsieve.scope import normalize_id, unreachable_scopes

ids = st.text(max_size=12)
optional_ids = st.none() | ids


# ---- normalization --------------------------------------------------------------


@given(ids)
def test_normalization_is_idempotent_and_nfc(value):
    once = normalize_id(value)
    assert normalize_id(once) == once
    assert unicodedata.is_normalized("NFC", once) and once == once.strip()


@given(optional_ids, optional_ids, optional_ids)
def test_scope_of_is_idempotent(user_id, agent_id, run_id):
    try:
        scope = Scope.of(user_id, agent_id, run_id)
    except ScopeError:
        return
    assert Scope.of(scope.user_id, scope.agent_id, scope.run_id) == scope
    assert scope.is_normalized and Scope.from_key(scope.key) == scope


@settings(max_examples=300)
@given(st.tuples(optional_ids, optional_ids, optional_ids), st.tuples(optional_ids, optional_ids, optional_ids))
def test_distinct_normalized_triples_never_share_a_key(a, b):
    try:
        sa, sb = Scope.of(*a), Scope.of(*b)
    except ScopeError:
        return
    assert (sa.key == sb.key) == (sa == sb)
    assert (sa.slug == sb.slug) == (sa == sb)


_raw_ids = st.none() | st.text(st.sampled_from(["a", "e", " ", "\t", "\x7f", "\u0301", "\u00e9", '"', "\\", "\x00",
                                                "\u00ad", "\u200b", "\u202e"]),
                               max_size=4) | st.text(max_size=6) | st.just("x" * 257)


@settings(max_examples=500)
@given(_raw_ids, _raw_ids, _raw_ids)
def test_a_stored_key_is_flagged_exactly_when_scope_of_cannot_produce_it(user_id, agent_id, run_id):
    assume((user_id, agent_id, run_id) != (None, None, None))  # no version stored a scope without ids
    stored = Scope(user_id, agent_id, run_id)  # as an older version wrote it, unnormalized
    try:
        reachable = Scope.of(user_id, agent_id, run_id) == stored
    except ScopeError:
        reachable = False
    assert unreachable_scopes([stored.key]) == ([] if reachable else [stored])
    assert stored.is_normalized == reachable


@pytest.mark.parametrize("spelling", [" ana", "ana ", "\tana\n", "\u3000ana", "ana\r\n"])
def test_surrounding_whitespace_names_the_same_scope(spelling):
    assert Scope.of(spelling) == Scope.of("ana")
    assert Scope.of(agent_id=spelling).key == Scope.of(agent_id="ana").key


def test_composed_and_decomposed_spellings_are_one_scope(tmp_path):
    composed, decomposed = "Jos\u00e9", "Jose\u0301"
    assert composed != decomposed and Scope.of(decomposed) == Scope.of(composed)
    m = Memory(tmp_path / "m.db", embedder=HashEmbedder())
    (d,) = m.add("I teach maths.", user_id=decomposed, agent_id=" tutor ")
    assert [x.id for x in m.get_all(user_id=composed, agent_id="tutor")] == [d.memory_id]
    assert m.get(d.memory_id).user_id == composed
    (again,) = m.add("I teach maths.", user_id=composed, agent_id="tutor")
    assert again.event == "NOOP" and again.memory_id == d.memory_id
    m.close()


@pytest.mark.parametrize("bad", ["a\tb", "a\x1bb", "a\x00", "a\x7fb", "a\x85b", "a\nb"])
def test_control_characters_inside_an_id_are_refused(bad):
    with pytest.raises(ScopeError, match="control character") as info:
        Scope.of(run_id=bad)
    assert str(info.value).startswith("run_id")


def test_ids_empty_after_stripping_or_too_long_are_refused():
    with pytest.raises(ScopeError, match="empty"):
        Scope.of(" \n\u3000")
    with pytest.raises(ScopeError, match="over the limit of 256"):
        Scope.of("x" * 257)
    assert Scope.of(" " + "x" * 256 + " ").user_id == "x" * 256  # the limit counts the normalized id


# ---- the exact triple -------------------------------------------------------------


def test_a_scope_is_the_exact_triple(tmp_path):
    m = Memory(tmp_path / "m.db", embedder=HashEmbedder())
    m.add("I live in Porto.", user_id="u", agent_id="x")
    assert m.get_all(user_id="u") == []
    assert m.search("Porto", user_id="u") == []
    assert len(m.get_all(user_id="u", agent_id="x")) == 1
    assert m.get_all(agent_id="x") == []
    m.close()


# ---- by-id calls restricted to a scope -----------------------------------------


@pytest.fixture()
def two_scopes(tmp_path):
    path = tmp_path / "m.db"
    m = Memory(path, embedder=HashEmbedder())
    (mine,) = m.add("I live in Lisbon.", user_id="ana", agent_id="helper")
    (dup,) = m.add("I live in Lisbon.", user_id="ana", agent_id="helper")
    (theirs,) = m.add("I live in Oslo.", user_id="bob")
    assert dup.rejection_id
    yield m, path, mine.memory_id, dup.rejection_id, theirs.memory_id
    m.close()


OTHER_SCOPES = [{"user_id": "bob"}, {"user_id": "ana"}, {"agent_id": "helper"},
                {"user_id": "ana", "agent_id": "helper", "run_id": "r1"}]


def _same_message(error: Exception, record_id: str, unknown: Exception, unknown_id: str) -> bool:
    return str(error).replace(record_id, "ID") == str(unknown).replace(unknown_id, "ID")


@pytest.mark.parametrize("scope", OTHER_SCOPES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_by_id_calls_in_another_scope_look_exactly_like_a_missing_id(two_scopes, scope):
    m, path, memory_id, rejection_id, _ = two_scopes
    with pytest.raises(NotFoundError) as missing:
        m.get("00000000-0000-0000-0000-000000000000")
    with pytest.raises(NotFoundError) as missing_rejection:
        m.restore("00000000-0000-0000-0000-000000000000")
    before = snapshot(path)
    calls = {
        "get": lambda: m.get(memory_id, **scope),
        "history": lambda: m.history(memory_id, **scope),
        "update": lambda: m.update(memory_id, "I live in Madrid.", **scope),
        "delete": lambda: m.delete(memory_id, **scope),
    }
    for name, call in calls.items():
        with pytest.raises(NotFoundError) as info:
            call()
        assert _same_message(info.value, memory_id, missing.value, "00000000-0000-0000-0000-000000000000"), name
    with pytest.raises(NotFoundError) as info:
        m.restore(rejection_id, **scope)
    assert _same_message(info.value, rejection_id, missing_rejection.value, "00000000-0000-0000-0000-000000000000")
    assert snapshot(path) == before
    assert m.get(memory_id).text == "I live in Lisbon." and m.get(memory_id).is_active


def test_by_id_calls_in_the_right_scope_work_and_normalize_it(two_scopes):
    m, _, memory_id, rejection_id, other_id = two_scopes
    scope = {"user_id": " ana", "agent_id": "helper\n"}
    assert m.get(memory_id, **scope).text == "I live in Lisbon."
    assert m.update(memory_id, "I live in Madrid.", **scope).text == "I live in Madrid."
    assert [h.event for h in m.history(memory_id, **scope)] == ["ADD", "NOOP", "UPDATE"]
    restored = m.restore(rejection_id, **scope)
    assert restored.text == "I live in Lisbon." and restored.agent_id == "helper"
    assert not m.delete(memory_id, **scope).is_active
    assert m.get(other_id, user_id="bob").text == "I live in Oslo."
    assert m.get(other_id).user_id == "bob"  # no scope: any memory, as before


def test_a_malformed_scope_in_a_by_id_call_is_a_scope_error(two_scopes):
    m, _, memory_id, _, _ = two_scopes
    with pytest.raises(ScopeError):
        m.get(memory_id, user_id=7)
    with pytest.raises(ScopeError):
        m.delete(memory_id, user_id="a\x00")


# ---- databases written before normalization ------------------------------------


def test_scopes_stored_under_unnormalized_ids_are_named_at_open(tmp_path):
    path = tmp_path / "old.db"
    m = Memory(path, embedder=HashEmbedder())
    m.add("An old memory.", user_id="u")
    m.add("A current memory.", user_id="v")
    m.close()
    # What a version without normalization wrote for user_id=" u": the raw id in the key.
    legacy = Scope(" u", None, None).key
    with sqlite3.connect(path) as conn:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            columns = [c[1] for c in conn.execute(f'PRAGMA table_info("{table}")')]
            if "scope_key" in columns:
                conn.execute(f'UPDATE "{table}" SET scope_key = ? WHERE scope_key = ?', (legacy, Scope.of("u").key))
        conn.execute("UPDATE scopes SET user_id = ' u' WHERE scope_key = ?", (legacy,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = Memory(path, embedder=HashEmbedder())
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1 and "1 scope(s)" in messages[0] and "' u'" in messages[0]
    assert unreachable_scopes(m.store.scope_keys()) == [Scope(" u", None, None)]
    assert m.get_all(user_id=" u") == []  # the gap the warning names: " u" now means "u"
    assert len(m.store.get_all(Scope(" u", None, None), include_inactive=True, limit=None)) == 1
    m.close()


def test_a_store_of_normalized_scopes_opens_without_a_warning(tmp_path):
    m = Memory(tmp_path / "m.db", embedder=HashEmbedder())
    m.add("Fine.", user_id=" u ", run_id="r")
    m.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Memory(tmp_path / "m.db", embedder=HashEmbedder()).close()
    assert memsieve.Scope.of(" u ", run_id="r").key == '["u",null,"r"]'
