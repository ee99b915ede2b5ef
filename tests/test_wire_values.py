"""What the REST service puts on the wire: a search hit's dict and the strict JSON of an answer.

Both have a fast path (a hand-written ``SearchResult.to_dict``, json tried before
the NaN walk); these tests hold them to the slow, generic rule they replaced.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve.jsonable import strict_values
from memsieve.records import SearchResult
from memsieve.server.app import json_bytes

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True,
                  allow_infinity=True), st.text(max_size=8))
_json_like = st.recursive(_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                          max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(metadata=st.dictionaries(st.text(max_size=5), _json_like, max_size=4),
       sources=st.lists(st.text(max_size=6), max_size=3), score=st.floats(allow_nan=True),
       superseded=st.one_of(st.none(), st.text(max_size=4)))
def test_a_hit_as_a_dict_equals_the_dataclass_rule_and_is_a_copy(metadata, sources, score, superseded):
    hit = SearchResult(id="m1", text="Ana keeps bees", score=score, source=sources[0] if sources else None,
                       sources=sources, metadata=metadata, valid_from=None, created_at="2026-01-01T00:00:00Z",
                       superseded_by=superseded)
    mine = hit.to_dict()
    assert json.dumps(strict_values(mine), sort_keys=True) == \
        json.dumps(strict_values(dataclasses.asdict(hit)), sort_keys=True)
    mine["sources"].append("extra")
    mine["metadata"]["new key"] = 1
    assert hit.sources == sources and "new key" not in hit.metadata


@settings(max_examples=300, deadline=None)
@given(value=_json_like)
def test_strict_json_of_an_answer_equals_the_walked_rule(value):
    payload = {"results": [value], "n": 1}
    walked = json.dumps(strict_values(payload), ensure_ascii=False, allow_nan=False,
                        separators=(",", ":")).encode("utf-8")
    assert json_bytes(payload) == walked


def test_strict_json_turns_nan_inf_and_numpy_scalars_into_json():
    out = json.loads(json_bytes({"a": math.nan, "b": [math.inf, np.float32(0.5), np.int64(3)], "c": (1, 2)}))
    assert out == {"a": None, "b": [None, 0.5, 3], "c": [1, 2]}
