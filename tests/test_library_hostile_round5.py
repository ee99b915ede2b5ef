"""The library against a hostile caller, fifth review: values that only look alike, a purge's last
trace, options compared or converted before they are checked, and the ends of the calendar."""

from __future__ import annotations

import asyncio
import hashlib
import re
from datetime import datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import AsyncMemory, ConfigError, GateConfig, InvalidInputError, Memory, MemsieveError
from memsieve.inputs import normalize_text
from memsieve.text.marks import rewritten_values, written_values
from memsieve.text.when import read_when


@pytest.fixture
def m(tmp_path, embedder):
    with Memory(tmp_path / "m.db", embedder=embedder) as memory:
        yield memory


class HostileEq:
    """Compared, hashed or printed, it raises: a caller's object that must never reach ``==``."""

    def __eq__(self, other):
        raise RuntimeError("a caller's __eq__ ran")

    __hash__ = object.__hash__

    def __repr__(self):
        raise RuntimeError("a caller's __repr__ ran")


# ---- values that normalize alike ---------------------------------------------------------------------------

@pytest.mark.parametrize("first, second", [
    ("My wifi password is Tr0ub4dor.", "My wifi password is tr0ub4dor."),   # exact dedup's case folding
    ("My white blood cell count was 10⁵ per ml.", "My white blood cell count was 105 per ml."),  # NFKC
    ("My locker code is AB12.", "My locker code is ab12!"),                 # the gate's own folding
])
def test_a_value_written_another_way_is_stored_not_folded(m, first, second):
    m.add(first, user_id="ana")
    (d,) = m.add(second, user_id="ana")
    assert d.event == "ADD", d
    assert second in {it.text for it in m.get_all(user_id="ana")}


def test_a_text_repeated_as_written_is_still_an_exact_duplicate(m):
    m.add("My wifi password is Tr0ub4dor.", user_id="ana")
    (d,) = m.add("my wifi password is Tr0ub4dor.", user_id="ana")  # only a letter word's case differs
    assert (d.event, d.layer) == ("NOOP", "exact")
    m.add("I like Pizza.", user_id="bob")
    (d,) = m.add("i like pizza!", user_id="bob")
    assert d.event == "NOOP"


@given(words=st.lists(st.text(alphabet=st.characters(categories=["Lu", "Ll", "Zs", "Po"], exclude_characters="#"),
                               max_size=12), max_size=8))
@settings(max_examples=200, deadline=None)
def test_a_text_without_digits_or_signs_writes_no_value_but_a_letter_alone(words):
    # "#" is punctuation to Unicode but a sign of a value ("C#"): test_fidelity covers the signs.
    # A capital letter standing alone inside a sentence is a value ("an A", "plan B"): it is the
    # only thing such a text may write, and only a letter it says as a word of its own.
    text = " ".join(words)
    for w in written_values(text):
        assert len(w) == 1 and w.isupper() and w != "I"
        assert re.search(rf"(?<!\w){w}(?!\w)", text), (w, text)


@given(word=st.from_regex(r"[A-Za-z]{1,4}[0-9]{1,3}[A-Za-z]{0,3}", fullmatch=True))
@settings(max_examples=200, deadline=None)
def test_a_code_in_another_case_is_rewritten_and_the_same_code_is_not(word):
    other = word.swapcase()
    assert rewritten_values(frozenset({word}), frozenset({word})) == []
    assert rewritten_values(frozenset({other}), frozenset({word})) == ([] if other == word else [(other, word)])


# ---- a purge leaves no fingerprint -------------------------------------------------------------------------

def test_a_purged_merge_keeps_no_hash_of_the_text(tmp_path, embedder):
    path = tmp_path / "m.db"
    secret = "My bank PIN is 4471 and my card ends in 0093."
    # Two spellings of one fact, both stored (gate off), that consolidation merges. ("I have a bank PIN,
    # it is 4471, ..." is not merged since: it says "I" where the other says only "my", as the gate's
    # fold check reads it.)
    other = "My PIN for the bank is 4471 and my card ends in 0093."
    with Memory(path, embedder=embedder, gate=GateConfig(profile="none")) as mem:
        mem.add(secret, user_id="ana")
        mem.add(other, user_id="ana")
        report = mem.consolidate(user_id="ana", min_sim=0.5)
        merged = [x for x in report.merges if x.status == "merged"]
        assert merged, report
        kept = merged[0].kept_id
        mem.purge(kept, user_id="ana")
        mem.finish_erasure()
        with pytest.raises(MemsieveError, match="purged since"):
            mem.unconsolidate(mem.merges(user_id="ana")[0].id, user_id="ana")
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    for text in (secret, other):
        digest = hashlib.sha256(normalize_text(text).encode()).hexdigest().encode()
        assert digest not in raw


def test_undoing_a_merge_whose_memory_was_deleted_names_a_fix_that_exists(m):
    m.add("My dentist Dr Vantrello is on Birch Street.", user_id="ana")
    m.add("I like jazz music a lot.", user_id="ana")
    (d,) = m.add("My dentist, Dr Vantrello, is on Birch Street.", user_id="ana")
    if d.event == "NOOP":
        m.restore(d.rejection_id, user_id="ana")
    merge = m.consolidate(user_id="ana").merges[0]
    m.delete(merge.kept_id, user_id="ana")
    before = [(it.id, it.is_active) for it in m.get_all(user_id="ana", include_inactive=True)]
    with pytest.raises(MemsieveError) as caught:
        m.unconsolidate(m.merges(user_id="ana")[0].id, user_id="ana")
    message = str(caught.value)
    assert "was deleted since" in message and "add(" in message and "by hand" not in message
    assert [(it.id, it.is_active) for it in m.get_all(user_id="ana", include_inactive=True)] == before


# ---- options checked before they are compared or converted ---------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda m: m.search("tea", user_id="ana", mode=np.array(["dense", "hybrid"])),
    lambda m: m.search("tea", user_id="ana", mode=HostileEq()),
    lambda m: m.context("tea", user_id="ana", order=np.array(["time", "relevance"])),
    lambda m: m.context("tea", user_id="ana", order=HostileEq()),
    lambda m: m.context("tea", user_id="ana", date_format=HostileEq()),
    lambda m: m.consolidate(user_id="ana", dry_run=True, min_sim=HostileEq()),
    lambda m: m.consolidate(user_id="ana", dry_run=True, min_sim=10**400),
    lambda m: m.finish_erasure(wait=10**400),
    lambda m: m.finish_erasure(wait=HostileEq()),
    lambda m: Memory(":memory:", durability=HostileEq()),
    lambda m: Memory(":memory:", version_cos=10**400),
    lambda m: Memory(":memory:", index_min_size=HostileEq()),
    lambda m: Memory(":memory:", max_cache_bytes=HostileEq()),
    lambda m: Memory(":memory:", consolidate_every=HostileEq()),
    lambda m: AsyncMemory(":memory:", max_workers=HostileEq()),
    lambda m: GateConfig(tau=10**400),
    lambda m: GateConfig(info_tau=10**400),
    lambda m: GateConfig(band_policy=HostileEq()),
    lambda m: GateConfig(profile=HostileEq()),
])
def test_a_hostile_or_huge_option_is_a_config_error(m, call):
    m.add("I drink green tea every morning.", user_id="ana")
    with pytest.raises(ConfigError):
        call(m)


def test_numpy_numbers_in_range_are_accepted(m):
    m.add("I drink green tea every morning.", user_id="ana")
    m.consolidate(user_id="ana", dry_run=True, min_sim=np.float32(0.8))
    m.finish_erasure(wait=np.int64(1))
    assert m.search("tea", user_id="ana", limit=np.int64(1))
    amem = AsyncMemory(":memory:", max_workers=np.int64(2))
    asyncio.run(amem.close())


def test_an_unknown_rejection_layer_is_refused_not_answered_empty(m):
    m.add("I drink green tea every morning.", user_id="ana")
    m.add("I drink green tea every morning.", user_id="ana")
    assert len(m.rejections(user_id="ana", layer="exact")) == 1
    with pytest.raises(InvalidInputError, match="'Exact' is no decision layer"):
        m.rejections(user_id="ana", layer="Exact")
    with pytest.raises(InvalidInputError, match="layer must be a string or None, got int"):
        m.rejections(user_id="ana", layer=5)


def test_a_consolidation_llm_that_is_no_llm_is_refused_before_anything_is_merged(m):
    from memsieve.llm import LLMClient, LLMConfig
    from memsieve.parts import merging_llm

    m.add("I drink green tea every morning.", user_id="ana")
    m.add("Every morning I drink green tea.", user_id="ana")
    before = [(x.id, x.is_active) for x in m.get_all(user_id="ana", include_inactive=True)]
    with pytest.raises(ConfigError, match="llm must be an LLMConfig or LLMClient, got str"):
        m.consolidate(user_id="ana", llm="gpt-4o", min_sim=0.5)
    assert [(x.id, x.is_active) for x in m.get_all(user_id="ana", include_inactive=True)] == before
    # A config becomes a client; a client (anything with complete_json) is used as it is.
    client = merging_llm(LLMConfig(base_url="http://127.0.0.1:9", model="m"))
    assert isinstance(client, LLMClient) and merging_llm(client) is client and merging_llm(None) is None


# ---- the ends of the calendar --------------------------------------------------------------------------------

@pytest.mark.parametrize("question, asked", [
    ("what happened on 12/31", "9999-12-31T12:00:00+00:00"),
    ("what happened on 1/1", "0001-01-01T12:00:00+00:00"),
    ("what did I do yesterday", "0001-01-02T12:00:00+00:00"),
    ("what did I do yesterday", "0001-01-02T01:00:00+14:00"),
])
def test_a_day_at_the_calendars_edge_is_a_window_clipped_to_it(question, asked):
    now = datetime.fromisoformat(asked)
    window = read_when(question, now).window
    assert window is not None and window.start <= now <= window.end, window


def test_searches_at_the_calendars_edges_answer(m):
    m.add("I planted a tree", user_id="ana", valid_from="0001-01-01T12:00:00+00:00")
    m.add("I planted roses", user_id="ana", valid_from="9999-12-31T10:00:00+00:00")
    for asked, question in [("0001-01-01T12:00:00+09:00", "what happened on 1/1"),
                            ("9999-12-31T12:00:00-10:00", "what happened on 12/31")]:
        assert len(m.search(question, user_id="ana", reference_time=asked)) == 2
