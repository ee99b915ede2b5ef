"""Exact dedup's normal form, as fast as the write path needs it and the same as its definition:
NFKC, whitespace runs collapsed to one space and cut at both ends, case-folded."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings, strategies as st

from memsieve.inputs import normalize_text, text_hash

_SPACE = re.compile(r"\s+")


def _defined(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_any_text_is_normalized_as_defined(text):
    assert normalize_text(text) == _defined(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_ascii_text_is_normalized_as_defined(text):
    assert normalize_text(text) == _defined(text)


def test_whitespace_of_every_kind_collapses_and_compatibility_forms_fold():
    assert normalize_text("\u3000Caf\u00e9\u2003\u2003ﬁne\x1c\u00a0TEA\n") == "café fine tea"
    assert text_hash("I LIKE  tea") == text_hash(" i like tea\t") != text_hash("i like teas")
