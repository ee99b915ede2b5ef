"""A memory keeps the UTC offset its ``valid_from`` was given in, and is dated in it.

``valid_from`` itself stays UTC (the form every store compares times in); the
offset is kept beside it, so the day a reader is shown is the day it was said
where it was said: 8 a.m. on 1 March in Tokyo is not "29 February".
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsieve import Memory
from memsieve.offsets import in_offset, split_offset
from memsieve.read.render import render_line, result_date

TOKYO_MORNING = "2024-03-01T08:00:00+09:00"  # 2024-02-29T23:00:00 in UTC


@given(moment=st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 30)),
       minutes=st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1))
@settings(max_examples=300, deadline=None)
def test_the_offset_comes_back_with_the_same_instant(moment, minutes):
    given_at = moment.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    utc, offset = split_offset(given_at.isoformat())
    assert utc.endswith("+00:00")
    assert datetime.fromisoformat(utc) == given_at
    assert offset == (minutes * 60 or None)
    back = datetime.fromisoformat(in_offset(utc, offset))
    assert back == given_at and back.utcoffset() == given_at.utcoffset()


def test_a_time_in_utc_or_without_a_zone_is_stored_as_before():
    assert split_offset("2024-03-01T08:00:00+00:00") == ("2024-03-01T08:00:00+00:00", None)
    assert split_offset("2024-03-01T08:00:00") == ("2024-03-01T08:00:00+00:00", None)
    assert split_offset(None) == (None, None)
    assert in_offset("2024-03-01T08:00:00+00:00", None) == "2024-03-01T08:00:00+00:00"
    assert in_offset("not a time", 3600) == "not a time"


def test_a_memory_is_dated_in_the_offset_it_was_said_in(mem):
    (added,) = mem.add("I moved to Osaka for work", user_id="ana", valid_from=TOKYO_MORNING)
    item = mem.get(added.memory_id)
    assert item.valid_from == "2024-02-29T23:00:00+00:00"
    assert item.valid_from_offset == 9 * 3600
    assert item.valid_from_local == TOKYO_MORNING
    (hit,) = mem.search("where did I move", user_id="ana")
    assert (hit.valid_from, hit.valid_from_offset) == (item.valid_from, item.valid_from_offset)
    assert hit.to_dict()["valid_from_offset"] == 9 * 3600
    assert result_date(hit, date_format="iso") == "2024-03-01"
    assert mem.context("where did I move", user_id="ana") == "[1 March 2024] I moved to Osaka for work"


def test_bulk_items_and_negative_offsets_keep_theirs(mem):
    mem.add_many([{"content": "I adopted a grey cat named Miso", "valid_from": "2024-01-01T20:00:00-08:00"},
                  {"content": "My brother started law school", "valid_from": "2024-01-01T20:00:00"}],
                 user_id="ana")
    items = {it.text: it for it in mem.get_all(user_id="ana")}
    cat, school = items["I adopted a grey cat named Miso"], items["My brother started law school"]
    assert (cat.valid_from, cat.valid_from_offset) == ("2024-01-02T04:00:00+00:00", -8 * 3600)
    assert render_line(cat) == "[1 January 2024] I adopted a grey cat named Miso"
    assert (school.valid_from, school.valid_from_offset) == ("2024-01-01T20:00:00+00:00", None)


def test_a_restored_noop_keeps_its_offset(mem):
    mem.add("I keep bees on the roof", user_id="ana", valid_from="2023-06-01T09:00:00+02:00")
    (noop,) = mem.add("I keep bees on the roof", user_id="ana", valid_from="2024-03-01T08:00:00+05:30")
    assert noop.event == "NOOP" and noop.rejection_id
    restored = mem.restore(noop.rejection_id, user_id="ana")
    assert restored.valid_from == "2024-03-01T02:30:00+00:00"
    assert restored.valid_from_offset == 5 * 3600 + 30 * 60


def test_an_event_a_memory_dates_is_read_in_its_own_day(tmp_path, embedder):
    """'last Monday' said early on Tuesday 5 March in Tokyo is 4 March; read in UTC, where it is still
    Monday the 4th, it would be 26 February. A question about 4 March raises it above a closer text."""
    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        m.add("I went to a pottery class last Monday", user_id="ana", valid_from="2024-03-05T07:30:00+09:00")
        m.add("Which class did I go to with Sam? The salsa class downtown on a Monday", user_id="ana",
              valid_from="2023-06-01T12:00:00+09:00")
        hits = m.search("Which class did I go to on March 4, 2024?", user_id="ana",
                        reference_time="2024-03-20T10:00:00+09:00")
        assert len(hits) == 2 and hits[0].text == "I went to a pottery class last Monday", [
            (h.text, h.score) for h in hits]
        assert hits[0].score >= hits[1].score


def test_a_database_from_before_offsets_reads_every_time_as_utc(tmp_path, embedder):
    path = tmp_path / "old.db"
    with Memory(path, embedder=embedder) as m:
        (added,) = m.add("I play the cello", user_id="ana", valid_from="2024-05-08T10:00:00Z")
    con = sqlite3.connect(path)
    assert con.execute("SELECT valid_from, valid_from_offset FROM memories").fetchall() == [
        ("2024-05-08T10:00:00+00:00", None)]
    con.close()
    with Memory(path, embedder=embedder) as m:
        item = m.get(added.memory_id)
        assert item.valid_from_offset is None and item.valid_from_local == item.valid_from


@pytest.mark.parametrize("bad", ["2024-03-01T08:00:00+24:00", "2024-03-01T08:00:00+9:00", "yesterday"])
def test_a_bad_offset_is_refused_and_nothing_written(tmp_path, embedder, bad):
    from memsieve.errors import InvalidInputError

    with Memory(tmp_path / "m.db", embedder=embedder) as m:
        with pytest.raises(InvalidInputError, match="valid_from"):
            m.add("I moved to Osaka", user_id="ana", valid_from=bad)
        assert m.get_all(user_id="ana") == []
