"""A datetime subclass whose own methods fail gets a typed error or is read by its fields (review finding):
it reached ``isoformat``, ``astimezone`` or ``replace`` of the caller's class and escaped as their error."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memsieve import GateConfig, Memory
from memsieve.errors import InvalidInputError
from memsieve.times import iso_time


def _hostile(method):
    def fail(self, *args, **kwargs):
        raise RuntimeError("hostile")

    return type(f"Hostile_{method}", (datetime,), {method: fail})


@pytest.mark.parametrize("method", ["isoformat", "astimezone", "replace", "utcoffset", "__str__"])
def test_a_subclass_whose_methods_fail_is_read_by_its_fields(method):
    value = _hostile(method)(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert iso_time(value, where="as_of") == "2023-05-08T13:56:00+00:00"


def test_a_subclass_whose_fields_fail_is_a_typed_error():
    cls = type("NoYear", (datetime,), {"year": property(lambda self: 1 / 0)})
    with pytest.raises(InvalidInputError, match="as_of: the NoYear given could not be read"):
        iso_time(cls(2023, 5, 8), where="as_of")


@pytest.mark.parametrize("method", ["isoformat", "astimezone", "replace"])
def test_every_time_argument_takes_a_hostile_subclass(tmp_path, embedder, method):
    mem = Memory(tmp_path / "t.db", embedder=embedder, gate=GateConfig(profile="none"))
    try:
        when = _hostile(method)(2023, 1, 1, tzinfo=timezone.utc)
        added = mem.add("I like green tea.", user_id="u", valid_from=when)[0]
        assert mem.get(added.memory_id).valid_from == "2023-01-01T00:00:00+00:00"
        assert [h.text for h in mem.search("tea", user_id="u", as_of=datetime.now(timezone.utc))] == [
            "I like green tea."]
        assert isinstance(mem.search("tea", user_id="u", as_of=when), list)  # read, not raised
        assert [h.text for h in mem.search("tea", user_id="u", reference_time=when)] == ["I like green tea."]
    finally:
        mem.close()
