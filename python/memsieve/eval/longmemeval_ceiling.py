"""How much answer-token recall the data allows: what a reader would find reading it whole.

Answer-token recall (:func:`memsieve.eval.metrics.answer_recall`) asks how many
of the answer's content words the reader sees. Many LongMemEval answers are
not said anywhere: a count ("4") over turns that each name one item, an
interval ("7 days") between two dated turns, a preference rubric ("The user
would prefer suggestions of Sony-compatible accessories ..."). Their words are
found only by chance, in some text that happens to hold them.

So before any search, each question's answer recall is computed over three
readings of its haystack, every text dated as search results are rendered
(``[8 May 2023] text``):

- ``evidence turns``: every has_answer turn, the turns a perfect ranking
  would return;
- ``answer sessions``: every turn of every answer session, whole sessions as
  the reader's context;
- ``whole haystack``: every turn, what a reader of everything would see.

A search's answer recall@k above the first reading comes from other texts'
words; above the second, from texts outside the sessions that hold the answer.
The figures bound what retrieval can be asked for, and are reported beside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from memsieve.eval.longmemeval_data import LmeQuestion
from memsieve.eval.metrics import answer_recall
from memsieve.read.render import render_line

#: The readings, from the narrowest to the whole haystack.
READINGS = ("evidence turns", "answer sessions", "whole haystack")


def question_ceilings(q: LmeQuestion) -> dict[str, float | None]:
    """Each reading's answer recall for one question (None: abstention or no answer token).

    Args:
        q: the question and its haystack.

    Returns:
        ``{reading: recall in [0, 1] or None}`` for every reading in :data:`READINGS`.
    """
    if q.abstention:
        return dict.fromkeys(READINGS)
    by_session: dict[str, list[str]] = defaultdict(list)
    evidence: list[str] = []
    for cand, turn in q.candidates():
        line = render_line(cand, dated=True)
        by_session[turn.id.rsplit(":", 1)[0]].append(line)
        if turn.has_answer:
            evidence.append(line)
    sessions = [line for sid in dict.fromkeys(q.answer_session_ids) for line in by_session.get(sid, [])]
    everything = [line for lines in by_session.values() for line in lines]
    out: dict[str, float | None] = {}
    for reading, lines in zip(READINGS, (evidence, sessions, everything)):
        out[reading] = answer_recall(q.answer, lines, max(1, len(lines)))
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def reader_ceilings(questions: Iterable[LmeQuestion]) -> dict[str, dict[str, Any]]:
    """Answer recall of each reading over ``questions``, micro, macro and per type.

    Returns:
        ``{reading: {"micro", "macro", "n", "per_type": {type: {"recall", "n"}}}}``;
        micro is the mean over questions, macro the mean of the per-type means.
    """
    scores: dict[str, dict[str, list[float]]] = {r: defaultdict(list) for r in READINGS}
    for q in questions:
        for reading, value in question_ceilings(q).items():
            if value is not None:
                scores[reading][q.question_type].append(value)
    out: dict[str, dict[str, Any]] = {}
    for reading, by_type in scores.items():
        flat = [v for vals in by_type.values() for v in vals]
        type_means = [m for m in (_mean(v) for v in by_type.values()) if m is not None]
        out[reading] = {"micro": _mean(flat), "macro": _mean(type_means), "n": len(flat),
                        "per_type": {t: {"recall": _mean(v), "n": len(v)} for t, v in sorted(by_type.items())}}
    return out
