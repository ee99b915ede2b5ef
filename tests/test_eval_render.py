"""memsieve.read.render: one line per result, dated by valid_from, in relevance or time order."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memsieve import ConfigError, Memory
from memsieve.write.ingest import parse_locomo_date
from memsieve.read.render import render_line, render_results, result_date


def hit(text, valid_from):
    return SimpleNamespace(text=text, valid_from=valid_from)


HITS = [
    hit("Caroline: I went to the support group yesterday.", "2023-05-08T13:56:00+00:00"),
    hit("a note with no date", None),
    hit("Melanie: I painted a sunrise\nlast week.", "2023-01-20T10:00:00+00:00"),
    # 23:30 at -05:00 is 04:30 UTC the next day: later than the first hit, though its date is the same.
    hit("Caroline: the parade is next month.", "2023-05-08T23:30:00-05:00"),
]


def test_relevance_order_dates_each_line_and_leaves_undated_lines_bare():
    lines = render_results(HITS).split("\n")
    assert lines == ["[8 May 2023] Caroline: I went to the support group yesterday.",
                     "a note with no date",
                     "[20 January 2023] Melanie: I painted a sunrise last week.",  # one line per result
                     "[8 May 2023] Caroline: the parade is next month."]


def test_time_order_is_oldest_first_with_undated_last():
    lines = render_results(HITS, order="time", date_format="iso").split("\n")
    assert [line[:12] for line in lines] == ["[2023-01-20]", "[2023-05-08]", "[2023-05-08]", "a note with "]
    assert lines[1].endswith("yesterday.") and lines[2].endswith("next month.")


def test_undated_rendering_is_the_bare_texts():
    assert render_results(HITS, dated=False).split("\n")[0] == "Caroline: I went to the support group yesterday."
    assert render_line(HITS[0], dated=False) == HITS[0].text
    assert render_results([]) == ""


@pytest.mark.parametrize("raw", [None, "", "yesterday", 20230508])
def test_a_missing_or_unreadable_date_gives_no_prefix(raw):
    assert result_date(hit("x", raw)) is None and render_line(hit("x", raw)) == "x"


def test_an_unknown_order_is_a_config_error():
    with pytest.raises(ConfigError, match="'newest'"):
        render_results(HITS, order="newest")


def test_locomo_session_dates_reach_the_rendered_results(embedder):
    when = parse_locomo_date("1:56 pm on 8 May, 2023")
    assert when == "2023-05-08T13:56:00"
    with Memory(":memory:", embedder=embedder) as mem:
        mem.add("Caroline: I went to the LGBTQ support group yesterday.", user_id="c", valid_from=when, infer=False)
        mem.add("Caroline: I love hiking in the mountains.", user_id="c", infer=False)
        hits = mem.search("When did Caroline go to the support group?", user_id="c", limit=2)
        lines = render_results(hits, date_format="iso").split("\n")
        long_lines = render_results(hits).split("\n")  # the default format
    # Freshness may put the newer memory first (the two are close), so each line is found by its text.
    assert "[2023-05-08] Caroline: I went to the LGBTQ support group yesterday." in lines
    assert "[8 May 2023] Caroline: I went to the LGBTQ support group yesterday." in long_lines
    # Stored without a valid_from, the memory holds from its write time, and shows that date.
    hiking = next(h for h in hits if "hiking" in h.text)
    assert f"[{hiking.valid_from[:10]}] Caroline: I love hiking in the mountains." in lines
    assert hiking.valid_from[:10] == hiking.created_at[:10]


def test_long_dates_have_no_leading_zero_and_an_english_month():
    assert render_line(hit("x", "2023-05-08T13:56:00")) == "[8 May 2023] x"  # the default
    assert render_line(hit("x", "2023-05-08T13:56:00"), date_format="iso") == "[2023-05-08] x"
    assert result_date(hit("x", "2022-12-31T23:30:00-05:00"), date_format="long") == "31 December 2022"
    assert render_results(HITS, date_format="long", order="time").split("\n")[0] == (
        "[20 January 2023] Melanie: I painted a sunrise last week.")


@pytest.mark.parametrize("fmt", ["ISO", "short", None, 3])
def test_an_unknown_date_format_is_a_config_error(fmt):
    with pytest.raises(ConfigError, match="date_format"):
        render_results(HITS, date_format=fmt)
    with pytest.raises(ConfigError, match="date_format"):
        render_line(HITS[0], date_format=fmt)
