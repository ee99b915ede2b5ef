"""Bad arguments to the public API: a typed MemsieveError that names the value and the fix, and nothing written.

Each case here raised a raw exception before (TypeError, OverflowError,
RecursionError, UnicodeEncodeError, sqlite3 errors) or was silently accepted.
"""

from __future__ import annotations

import datetime as dt
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import memsieve
from hostile import HashEmbedder, snapshot
from memsieve import ConfigError, InvalidInputError, InvalidTextError, Memory, NotFoundError, ScopeError


@pytest.fixture()
def seeded(tmp_path):
    """A file database with one memory and one rejection in scope ("ana",), and its path."""
    path = tmp_path / "m.db"
    m = Memory(path, embedder=HashEmbedder())
    (d,) = m.add("I live in Lisbon.", user_id="ana", source="t1")
    (dup,) = m.add("I live in Lisbon.", user_id="ana")
    assert d.event == "ADD" and dup.event == "NOOP"
    yield m, path, d.memory_id, dup.rejection_id
    m.close()


def _refused(path, error, call, *words):
    """Run ``call``; it must raise ``error`` with a lowercase message holding ``words``, and write nothing."""
    before = snapshot(path)
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert isinstance(info.value, memsieve.MemsieveError)
    assert message[0].islower(), message
    for word in words:
        assert word in message, (word, message)
    assert snapshot(path) == before
    return message


def _deep(levels: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(levels):
        node["k"] = {}
        node = node["k"]
    return root


def _self_referencing() -> dict:
    d: dict = {"a": 1}
    d["self"] = d
    return d


NOT_JSON = [
    pytest.param({"k": object()}, "metadata['k']", id="object"),
    pytest.param({"k": {1, 2}}, "set", id="set"),
    pytest.param({"k": b"raw"}, "bytes", id="bytes"),
    pytest.param({"k": dt.datetime(2024, 1, 1)}, "datetime", id="datetime"),
    pytest.param({"k": np.float32(0.5)}, "float32", id="np.float32"),
    pytest.param({"k": [1, float("nan")]}, "metadata['k'][1]", id="nan-in-list"),
    pytest.param({"k": math.inf}, "inf", id="inf"),
    pytest.param({"k": 2**64}, "64-bit", id="huge-int"),
    pytest.param({1: "int key"}, "keys must be strings", id="int-key"),
    pytest.param({"k": "bad \ud800"}, "surrogate", id="surrogate-value"),
    pytest.param({"bad \udfff": 1}, "surrogate", id="surrogate-key"),
    pytest.param({"k": "nul \x00"}, "NUL", id="nul"),
    pytest.param(_deep(5000), "deeper than 64", id="5000-deep"),
    pytest.param(_self_referencing(), "refers to itself", id="cycle"),
    pytest.param(["not", "a", "dict"], "must be a dict", id="list"),
]


@pytest.mark.parametrize(("metadata", "named"), NOT_JSON)
def test_metadata_that_is_not_json_is_refused_by_path(seeded, metadata, named):
    m, path, _, _ = seeded
    _refused(path, InvalidInputError, lambda: m.add("A new fact about Ana.", user_id="ana", metadata=metadata),
             named)


def test_metadata_at_the_depth_cap_is_stored_and_filters_still_check(seeded):
    m, _, _, _ = seeded
    (d,) = m.add("A nested fact.", user_id="ana", metadata={"deep": _deep(62), "n": np.float64(1.5)})
    assert m.get(d.memory_id).metadata["n"] == 1.5
    with pytest.raises(InvalidInputError, match="filters"):
        m.search("nested", user_id="ana", filters={"x": np.float32(1)})


SURROGATE = "caf\ud800"


@pytest.mark.parametrize("where", ["text", "message", "role", "source", "user_id", "agent_id", "run_id"])
def test_lone_surrogate_in_add_is_refused(seeded, where):
    m, path, _, _ = seeded
    kwargs = {"user_id": "ana", "metadata": None}
    payload: object = "A fine text."
    if where == "text":
        payload = f"I drink {SURROGATE}."
    elif where == "message":
        payload = [{"role": "user", "content": SURROGATE}]
    elif where == "role":
        payload = [{"role": SURROGATE, "content": "A fine text."}]
    elif where == "source":
        kwargs["source"] = ["ok", SURROGATE]
    else:
        kwargs[where] = SURROGATE
    error = ScopeError if where.endswith("_id") else InvalidInputError
    _refused(path, error, lambda: m.add(payload, **kwargs), "surrogate")


@pytest.mark.parametrize("mode", ["dense", "keyword", "hybrid"])
def test_lone_surrogate_in_a_query_or_an_update_is_refused(seeded, mode):
    m, path, memory_id, _ = seeded
    _refused(path, InvalidTextError, lambda: m.search(SURROGATE, user_id="ana", mode=mode), "query", "surrogate")
    _refused(path, InvalidTextError, lambda: m.update(memory_id, SURROGATE), "surrogate")
    _refused(path, InvalidTextError, lambda: m.delete(memory_id, reason=SURROGATE), "reason", "surrogate")


EXTREME_TIMES = ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00",
                 dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=5)))]


@pytest.mark.parametrize("when", EXTREME_TIMES, ids=["year1+5h", "year9999-5h", "datetime"])
def test_times_beyond_the_utc_range_are_refused(seeded, when):
    m, path, _, _ = seeded
    _refused(path, InvalidInputError, lambda: m.add("Ana moved.", user_id="ana", valid_from=when),
             "valid_from", "supported range")
    _refused(path, InvalidInputError, lambda: m.search("Lisbon", user_id="ana", as_of=when), "as_of", "range")
    _refused(path, InvalidInputError, lambda: m.rejections(user_id="ana", since=when), "since", "range")


def test_times_at_the_edges_of_the_range_are_accepted(seeded):
    m, _, _, _ = seeded
    assert m.search("Lisbon", user_id="ana", as_of="0001-01-01T05:00:00+05:00") == []
    assert len(m.search("Lisbon", user_id="ana", as_of="9999-12-31T18:00:00-05:00")) == 1
    assert len(m.rejections(user_id="ana", since="0001-01-01T00:00:00")) == 1


BAD_LIMITS = [True, False, 10**30, 2**63, 1.0, 2.5, -1, 0, "10", None]


@pytest.mark.parametrize("limit", BAD_LIMITS, ids=repr)
def test_bad_limits_are_refused_everywhere(seeded, limit):
    m, path, _, _ = seeded
    for mode in ("dense", "keyword", "hybrid"):
        _refused(path, InvalidInputError, lambda: m.search("Lisbon", user_id="ana", limit=limit, mode=mode), "limit")
    if limit is not None:  # None means "no limit" for the listings
        _refused(path, InvalidInputError, lambda: m.get_all(user_id="ana", limit=limit), "limit")
        _refused(path, InvalidInputError, lambda: m.rejections(user_id="ana", limit=limit), "limit")


def test_the_largest_valid_limit_lists_everything(seeded):
    m, _, _, _ = seeded
    big = 2**63 - 1
    assert len(m.get_all(user_id="ana", limit=big)) == 1
    assert len(m.rejections(user_id="ana", limit=big)) == 1
    assert len(m.get_all(user_id="ana", limit=np.int64(1))) == 1


def test_the_largest_valid_search_limit_returns_the_whole_scope_in_every_mode(tmp_path):
    # A child process: before the fix a huge limit made the core reserve
    # k slots and abort the interpreter (SIGABRT), which must not take pytest down.
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})
        from hostile import HashEmbedder
        from memsieve import Memory
        m = Memory({str(tmp_path / 'big.db')!r}, embedder=HashEmbedder())
        m.add(["alpha beta", "gamma delta", "beta gamma"], user_id="u")
        for mode in ("dense", "keyword", "hybrid"):
            for limit in (2**31, 2**63 - 1):
                print(mode, len(m.search("beta", user_id="u", limit=limit, mode=mode)))
                print(mode, len(m.search("beta", user_id="u", limit=limit, mode=mode, as_of="2999-01-01")))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = [line.split() for line in done.stdout.splitlines()]
    assert len(counts) == 12
    for mode, n in counts:
        assert int(n) == (2 if mode == "keyword" else 3), counts


BAD_IDS = [[1], 7, None, b"id", 3.5, {"id": 1}, "", "\ud800", "x" * 10_000]


@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda v: type(v).__name__ + str(len(repr(v))))
def test_ids_that_cannot_name_a_record_are_not_found(seeded, bad):
    m, path, _, _ = seeded
    calls = {
        "get": lambda: m.get(bad),
        "update": lambda: m.update(bad, "new text"),
        "delete": lambda: m.delete(bad),
        "history": lambda: m.history(bad),
        "links": lambda: m.links(bad),
        "restore": lambda: m.restore(bad),
    }
    for name, call in calls.items():
        message = _refused(path, NotFoundError, call)
        assert ("rejection" if name == "restore" else "memory") in message
        assert len(message) < 400, name  # a 10,000-character id is not echoed whole


class _NoDim:
    def embed(self, texts):
        return np.ones((len(texts), 4), dtype=np.float32) / 2


class _Dim(_NoDim):
    def __init__(self, dim):
        self.dim = dim


class _NoEmbed:
    dim = 4


class _RaisingDim(_NoDim):
    @property
    def dim(self):
        raise RuntimeError("model not downloaded")


@pytest.mark.parametrize("embedder", [_NoDim(), _Dim(None), _Dim("384"), _Dim(True), _Dim(0), _Dim(4.0),
                                      _NoEmbed(), _RaisingDim()],
                         ids=["no-dim", "None", "str", "bool", "zero", "float", "no-embed", "raising"])
def test_a_bad_embedder_is_refused_at_construction_and_creates_no_file(tmp_path, embedder):
    path = tmp_path / "m.db"
    with pytest.raises(ConfigError) as info:
        Memory(path, embedder=embedder)
    message = str(info.value)
    assert message[0].islower() and ("dim" in message or "embed(texts)" in message), message
    assert not path.exists()


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"path": 123}, "path"), ({"path": b"m.db"}, "bytes"), ({"path": ""}, "empty"),
    ({"path": "m\x00.db"}, "NUL"),
    ({"max_text_chars": "10"}, "max_text_chars"), ({"max_text_chars": True}, "max_text_chars"),
    ({"max_text_chars": 0}, "at least 1"), ({"max_text_chars": 2.5}, "max_text_chars"),
    ({"router": 123}, "decide(query, vector)"),
])
def test_bad_options_are_config_errors(tmp_path, monkeypatch, kwargs, named):
    monkeypatch.chdir(tmp_path)
    options = {"path": tmp_path / "m.db", **kwargs}
    path = options.pop("path")
    with pytest.raises(ConfigError) as info:
        Memory(path, embedder=HashEmbedder(), **options)
    assert named in str(info.value) and str(info.value)[0].islower()
    assert list(tmp_path.iterdir()) == []


def test_every_call_after_close_is_a_typed_error_and_embeds_nothing(seeded):
    m, _, memory_id, rejection_id = seeded
    m.close()
    calls_before = m.embedder.calls
    calls = [
        lambda: m.add("A new fact.", user_id="ana"),
        lambda: m.search("Lisbon", user_id="ana"),
        lambda: m.search("Lisbon", user_id="ana", mode="keyword"),
        lambda: m.search("Lisbon", user_id="ana", mode="hybrid"),
        lambda: m.get(memory_id),
        lambda: m.get_all(user_id="ana"),
        lambda: m.update(memory_id, "I live in Porto."),
        lambda: m.delete(memory_id),
        lambda: m.history(memory_id),
        lambda: m.links(memory_id),
        lambda: m.rejections(user_id="ana"),
        lambda: m.restore(rejection_id),
        lambda: m.stats(user_id="ana"),
        lambda: m.faults(user_id="ana"),
        lambda: m.gate_trace(user_id="ana"),
        lambda: m.context("Lisbon", user_id="ana"),
    ]
    for i, call in enumerate(calls):
        with pytest.raises(memsieve.StoreError) as info:
            call()
        assert "closed" in str(info.value) and str(info.value)[0].islower(), i
    assert m.embedder.calls == calls_before
