"""Whose words a question asks about: the read pipeline's speaker stage.

A chat ingested message by message stores each memory with the ``role`` of
the message it came from (``metadata["role"]``: ``"user"`` or
``"assistant"``). Most questions ask what the user said about themselves
("how many gyms have I tried?"); assistants' answers are long, general and
many, and in a long chat they crowd the user's own few words out of the first
results. A question about what the assistant said ("the restaurant you
recommended", "in our previous conversation ...") asks for the other side
(``Lexicon.speaker_asked``).

So in a scope whose results carry roles, the ranking lists are read
``SPEAKER_REACH`` times deeper and the asked speaker's best memories, as many
as ``SPEAKER_SHARE`` of the results asked for, gain ``SPEAKER_BOOST`` of the
spread of the usual ranking's scores. A boost, never a filter: the other
side's best matches keep the rest of the places, each side keeps its order,
and the long answers that hold a question's words stay findable. A
scope without roles (plain ``add(text)``, a LoCoMo conversation of two people)
sees exactly the usual results, and so does a search whose results hold the
asked speaker alone. The constants were chosen on LongMemEval dev (docs/SPEAKER.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from memsieve.read.rank import lift
from memsieve.text.lexicon import Lexicon

Hits = list[tuple[int, float]]  # (seq, score), best first

#: The roles whose words a question can ask about.
SPEAKERS = ("user", "assistant")
#: The dense and keyword lists are read this many times deeper in a scope with roles.
SPEAKER_REACH = 3
#: The asked speaker's best memories, this share of the results asked for, are raised ...
SPEAKER_SHARE = 0.7
#: ... by this share of the usual ranking's score spread (top minus floor).
SPEAKER_BOOST = 0.5

_ON: ContextVar[bool] = ContextVar("memsieve_read_speaker_on", default=True)


@contextmanager
def stage_off() -> Iterator[None]:
    """Within this block, searches (in this thread or task) run without the speaker stage.

    For side-by-side evaluations; not for applications.
    """
    token = _ON.set(False)
    try:
        yield
    finally:
        _ON.reset(token)


def role_of(metadata: Mapping[str, Any] | None) -> str | None:
    """A memory's speaker: its ``metadata["role"]`` if that is one of ``SPEAKERS``, else None."""
    role = (metadata or {}).get("role")
    return role if role in SPEAKERS else None


def asked(question: str, roles: Iterable[str | None], lexicon: Lexicon) -> str | None:
    """The speaker to raise for ``question``, or None when the stage leaves the results alone.

    Args:
        question: the query's text.
        roles: the speakers of the usual results (None for a memory without one).
        lexicon: reads whose words the question asks about.

    Returns:
        ``"user"`` or ``"assistant"`` when the results hold both and the stage is on; else None.
    """
    if not _ON.get():
        return None
    present = {r for r in roles if r is not None}
    if len(present) < 2:
        return None
    return lexicon.speaker_asked(question)


def raise_speaker(pool: Hits, head: int, roles: Mapping[int, str | None], speaker: str, *, limit: int) -> Hits:
    """The pool reordered with the asked speaker's best memories raised (see the module's docstring).

    Args:
        pool: the usual ranking's first ``head`` entries, then the memories only the deeper
            lists reach; best first.
        head: how many of ``pool`` are the usual ranking.
        roles: each pooled memory's speaker (None: none).
        speaker: the speaker to raise.
        limit: how many results the search returns; ``ceil(SPEAKER_SHARE * limit)`` are raised.

    Returns:
        The pool best first; unchanged when no pooled memory is the speaker's.
    """
    n = max(1, math.ceil(SPEAKER_SHARE * limit))
    chosen = frozenset([s for s, _ in pool if roles.get(s) == speaker][:n])
    if not chosen:
        return pool
    return lift(pool, head, chosen.__contains__, SPEAKER_BOOST)
