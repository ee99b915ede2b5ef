"""Events before or after another: "what did I buy before the standing desk?".

A question that sets the events it asks about off from another event names
no date: the date is the other event's. This stage finds that event among
the results (the best-ranked memory that says most of the words after
"before" or "after", at least half of them), then the events the question
asks about the way ``versions.ordered_events`` does (the best-ranked event
that says a word of the question's own, and every event of its speaker that
says each of those words it says), and puts those on the asked side of the
other event's date first, the nearest in time first (at most
``AROUND_MOST``). Everything else keeps its order. A question read for a
window (a date: "the week before August 3") is the time stage's, and a
question asking how long or how many ("how many days after I ordered it
...") needs both events, not an order: neither is read here.

The functions here see texts, dates and roles, never the store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import memsieve._core as _core
from memsieve.read.versions import is_event
from memsieve.read.when import ORDER_TERMS, aware
from memsieve.text.lexicon import Lexicon
from memsieve.text.when_words import ASKED_IN_PAST, SET_OFF_EVENT

#: The name a question asks about, after its auxiliary: "what did Melanie realize ...".
_NAMED = re.compile(r"\b(?:did|does|do|was|were|is|has|had)\s+([A-Z][a-z]+)\b")
#: A question set off from another event is read among the results and the memories ranked up
#: to this deep: the events it asks about rank near one another, the other event among them.
AROUND_DEPTH = 30
#: At most this many events are put first, the nearest to the other event: the question asks
#: about the ones just before or after it, and the results below keep their places but these.
AROUND_MOST = 3


@dataclass(frozen=True)
class SetOff:
    """What a question sets its events off from: ``way`` of the event that says ``anchor``."""

    way: Literal["before", "after"]
    #: Each word after "before"/"after", as the terms that say it (a verb: its forms and kin).
    anchor: tuple[frozenset[str], ...]
    topic: frozenset[str]


def set_off(query: str, lexicon: Lexicon) -> SetOff | None:
    """The event a question about the past sets its events off from, or None.

    >>> from memsieve.text.lexicon import ENGLISH
    >>> s = set_off("What did I buy before the standing desk?", ENGLISH)
    >>> s.way, [sorted(word) for word in s.anchor], sorted(s.topic)
    ('before', [['stand', 'stood'], ['desk']], ['bought', 'buy', 'order', 'purchas'])
    """
    q = query.lower().strip()
    if q.startswith("how") or ASKED_IN_PAST.search(q) is None:
        return None
    m = None
    for m in SET_OFF_EVENT.finditer(q):
        pass
    if m is None:
        return None
    anchor = tuple(lexicon.with_verb_forms(frozenset({t})) for t in dict.fromkeys(_core.tokenize(m.group(2))))
    # Whom it asks about is no topic: every turn of "Melanie: ..." says her name.
    names = frozenset(_core.tokenize(" ".join(_NAMED.findall(query))))
    said = frozenset().union(*anchor)
    topic = lexicon.with_verb_forms(frozenset(_core.tokenize(q[:m.start()]))) - said - ORDER_TERMS - names
    if not anchor or not topic:
        return None
    return SetOff(way="before" if m.group(1) == "before" else "after", anchor=anchor, topic=topic)


def around(ranked: Sequence[int], *, texts: Mapping[int, str], dates: Mapping[int, str | None], asked: SetOff,
           lexicon: Lexicon, roles: Mapping[int, str | None] | None = None,
           events: dict[int, bool] | None = None) -> list[int]:
    """``ranked`` with the events ``asked`` about on its side of the other event first.

    Args:
        ranked: the retrieved memories' keys, best first.
        texts: their texts.
        dates: each one's ``valid_from`` (or, lacking one, ``created_at``), ISO-8601.
        asked: the question's ``set_off``.
        lexicon: reads which texts tell of an event.
        roles: each memory's chat role; only the other event's speaker's events are moved.
        events: which keys tell of an event, as far as read (``versions.is_event``).
    """
    said_by, memo = roles or {}, {} if events is None else events
    terms = {k: frozenset(_core.tokenize(texts[k])) for k in ranked}
    # At least half of its words, and a word that is no verb where it says one: "the trip to
    # Lisbon" is not any text that says "went".
    need = max(1, (len(asked.anchor) + 1) // 2)
    named = [word for word in asked.anchor if len(word) == 1]
    hits = {k: sum(1 for word in asked.anchor if terms[k] & word) for k in ranked
            if not named or any(terms[k] & word for word in named)}
    best = max(hits, key=hits.__getitem__, default=None)  # max keeps the first of the best
    if best is None or hits[best] < need or not dates.get(best):
        return list(ranked)
    told = [k for k in ranked if k != best and said_by.get(k) == said_by.get(best) and dates.get(k)
            and is_event(memo, k, texts, lexicon)]
    leader = next((k for k in told if terms[k] & asked.topic), None)
    if leader is None:
        return list(ranked)
    needed = terms[leader] & asked.topic
    at = aware(str(dates[best]))
    when = {k: aware(str(dates[k])) for k in told if needed <= terms[k]}
    side = [k for k, t in when.items() if (t < at if asked.way == "before" else t > at)]
    side.sort(key=lambda k: when[k], reverse=asked.way == "before")
    side = side[:AROUND_MOST]
    moved = set(side)
    return side + [k for k in ranked if k not in moved]

