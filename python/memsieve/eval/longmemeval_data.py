"""Read a LongMemEval file (the official JSON schema) into questions with their haystacks.

LongMemEval (Wu et al., ICLR 2025) ships ``longmemeval_s``, ``longmemeval_m``
and ``longmemeval_oracle``: each a JSON list of questions with ``question_id``,
``question_type``, ``question``, ``answer``, ``question_date``,
``haystack_session_ids``, ``haystack_dates``, ``haystack_sessions`` (lists of
turns ``{"role", "content", "has_answer"?}``) and ``answer_session_ids``. The
file is read in place (plain or gzipped JSON), never copied.

Every question is its own haystack, so it becomes its own scope. Each non-empty
turn is one candidate, sourced ``<session_id>:<turn_index>`` (the index in the
session's list of turns, counting from 0) and dated by its session. Turns marked
``has_answer`` are the question's evidence. A question id ending in ``_abs`` is
an abstention question: its answer says the information is missing, so it has no
answer tokens to find (and usually no evidence turn).

The schema is checked up front; anything that is not it raises
:class:`LongMemEvalFormatError` naming the question and the field.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memsieve.errors import MemsieveError
from memsieve.eval.locomo import Candidate
from memsieve.inputs import is_blank

REQUIRED_KEYS = ("question_id", "question_type", "question", "answer", "question_date", "haystack_session_ids",
                 "haystack_dates", "haystack_sessions", "answer_session_ids")

# "2023/05/20 (Sat) 02:21"; the weekday is read but not trusted (the date decides).
_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(([A-Za-z]{3})\))?\s*(?:(\d{1,2}):(\d{2}))?\s*$")


class LongMemEvalFormatError(MemsieveError, ValueError):
    """The file is not LongMemEval's schema (what was wrong, and where, is in the message)."""


def parse_lme_date(raw: object) -> str | None:
    """``"2023/05/20 (Sat) 02:21"`` -> ``"2023-05-20T02:21:00"``; None if it does not parse.

    The weekday in parentheses and the time are optional; a missing time is midnight.
    """
    if not isinstance(raw, str):
        return None
    m = _DATE.match(raw)
    if m is None:
        return None
    year, month, day, _wd, hour, minute = m.groups()
    try:
        return datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0)).isoformat()
    except ValueError:
        return None


@dataclass(frozen=True)
class Turn:
    """One turn of a haystack session.

    Attributes:
        id: ``<session_id>:<turn_index>``, the candidate's source.
        role: ``user`` or ``assistant``.
        text: the turn's content, stripped.
        has_answer: whether the dataset marks it as evidence.
    """

    id: str
    role: str
    text: str
    has_answer: bool


@dataclass(frozen=True)
class HaystackSession:
    """One dated session of a question's haystack (empty turns left out)."""

    session_id: str
    date: str
    valid_from: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class LmeQuestion:
    """One question and its haystack.

    Attributes:
        question_id: the dataset's id (the scope).
        question_type: e.g. ``temporal-reasoning``.
        question: the query.
        answer: ``str(answer)`` (some answers are integers in the file).
        question_date: ISO date-time of the question.
        sessions: the haystack, in file order.
        answer_session_ids: the sessions holding the answer.
    """

    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: str
    sessions: tuple[HaystackSession, ...]
    answer_session_ids: tuple[str, ...]

    @property
    def abstention(self) -> bool:
        """An abstention question (id ending ``_abs``): the haystack lacks what it asks."""
        return self.question_id.endswith("_abs")

    @property
    def evidence(self) -> dict[str, Turn]:
        """The ``has_answer`` turns by id, in haystack order."""
        return {t.id: t for s in self.sessions for t in s.turns if t.has_answer}

    def candidates(self) -> list[tuple[Candidate, Turn]]:
        """Every non-empty turn as (candidate, turn), in haystack order."""
        return [(Candidate(t.text, (t.id,), s.valid_from), t) for s in self.sessions for t in s.turns]


@dataclass
class LoadCounts:
    """What the loader saw and skipped (none of it is an error)."""

    questions_in_file: int = 0
    sessions: int = 0
    turns: int = 0
    empty_turns_skipped: int = 0
    evidence_turns: int = 0
    questions_without_evidence: int = 0
    abstention_questions: int = 0
    repeated_session_ids: int = 0
    longest_turn_chars: int = 0
    types_in_file: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class LmeDataset:
    """The questions kept, and what loading and selecting did."""

    questions: tuple[LmeQuestion, ...]
    counts: LoadCounts
    selection: dict[str, Any]


def _fail(where: str, what: str) -> LongMemEvalFormatError:
    return LongMemEvalFormatError(f"{where}: {what}; pass a file in LongMemEval's official schema "
                                  f"(longmemeval_s, _m or _oracle)")


def _str_list(q: dict[str, Any], key: str, where: str) -> list[str]:
    value = q[key]
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise _fail(where, f"{key!r} must be a list of strings, got {type(value).__name__}")
    return value


def _question(q: object, i: int, counts: LoadCounts) -> LmeQuestion:
    if not isinstance(q, dict):
        raise _fail(f"question {i}", f"expected an object, got {type(q).__name__}")
    qid = q.get("question_id")
    where = f"question {i} ({qid!r})" if isinstance(qid, str) else f"question {i}"
    missing = [k for k in REQUIRED_KEYS if k not in q]
    if missing:
        raise _fail(where, f"missing key(s) {missing}")
    for key in ("question_id", "question_type", "question", "question_date"):
        if not isinstance(q[key], str) or not q[key].strip():
            raise _fail(where, f"{key!r} must be a non-empty string, got {q[key]!r:.60}")
    if not isinstance(q["answer"], (str, int, float)) or isinstance(q["answer"], bool):
        raise _fail(where, f"'answer' must be a string or a number, got {type(q['answer']).__name__}")
    qdate = parse_lme_date(q["question_date"])
    if qdate is None:
        raise _fail(where, f"question_date {q['question_date']!r} is not a date like '2023/05/20 (Sat) 02:21'")
    ids = _str_list(q, "haystack_session_ids", where)
    dates = _str_list(q, "haystack_dates", where)
    answer_ids = _str_list(q, "answer_session_ids", where)
    raw_sessions = q["haystack_sessions"]
    if not isinstance(raw_sessions, list):
        raise _fail(where, f"'haystack_sessions' must be a list of sessions, got {type(raw_sessions).__name__}")
    if not len(ids) == len(dates) == len(raw_sessions):
        raise _fail(where, f"haystack_session_ids ({len(ids)}), haystack_dates ({len(dates)}) and "
                           f"haystack_sessions ({len(raw_sessions)}) must have the same length")
    unknown = [a for a in answer_ids if a not in set(ids)]
    if unknown:
        raise _fail(where, f"answer_session_ids {unknown} are not among its haystack_session_ids")
    counts.repeated_session_ids += len(ids) - len(set(ids))
    sessions = []
    for j, (sid, raw_date, turns) in enumerate(zip(ids, dates, raw_sessions)):
        swhere = f"{where}, session {j} ({sid!r})"
        valid = parse_lme_date(raw_date)
        if valid is None:
            raise _fail(swhere, f"date {raw_date!r} is not a date like '2023/05/20 (Sat) 02:21'")
        if not isinstance(turns, list):
            raise _fail(swhere, f"a session must be a list of turns, got {type(turns).__name__}")
        kept = []
        for t_index, t in enumerate(turns):
            if not isinstance(t, dict) or not isinstance(t.get("content"), str):
                raise _fail(f"{swhere}, turn {t_index}", "a turn must be an object with a string 'content'")
            role = t.get("role")
            if role not in ("user", "assistant"):
                raise _fail(f"{swhere}, turn {t_index}", f"'role' must be 'user' or 'assistant', got {role!r:.40}")
            has_answer = t.get("has_answer", False)
            if not isinstance(has_answer, bool):
                raise _fail(f"{swhere}, turn {t_index}", f"'has_answer' must be true or false, got {has_answer!r:.40}")
            counts.turns += 1
            text = t["content"].strip()
            if is_blank(text):  # nothing to see (a lone zero-width space): not a turn
                counts.empty_turns_skipped += 1
                continue
            counts.longest_turn_chars = max(counts.longest_turn_chars, len(text))
            kept.append(Turn(f"{sid}:{t_index}", role, text, has_answer))
        counts.sessions += 1
        sessions.append(HaystackSession(sid, raw_date, valid, tuple(kept)))
    answer = q["answer"]
    out = LmeQuestion(question_id=q["question_id"], question_type=q["question_type"].strip(),
                      question=q["question"].strip(), answer=answer if isinstance(answer, str) else str(answer),
                      question_date=qdate, sessions=tuple(sessions), answer_session_ids=tuple(answer_ids))
    return out


def read_json(path: str | Path) -> Any:
    """The parsed JSON of a plain or gzipped file.

    Raises:
        LongMemEvalFormatError: the file cannot be read or is not JSON.
    """
    p = Path(path)
    try:
        with p.open("rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        opener = gzip.open if gz else open
        with opener(p, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
            return json.load(fh)
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
        raise LongMemEvalFormatError(f"cannot read LongMemEval file {str(path)!r}: {exc}; pass the path of a "
                                     f"LongMemEval JSON file (plain or .gz), e.g. longmemeval_s_dev.json.gz") from exc


def select(questions: list[dict[str, Any]], *, per_type: int | None = None, seed: int = 0,
           limit: int | None = None, ids: list[str] | None = None) -> list[int]:
    """Indices of the questions to keep, in file order.

    ``ids`` keeps those question ids; ``per_type`` then keeps ``per_type`` of each
    ``question_type`` (all of a type with fewer), drawn with ``random.Random(seed)``
    from each type's questions in file order, types in sorted order; ``limit``
    keeps the first ``limit`` of what is left.

    Raises:
        LongMemEvalFormatError: an id in ``ids`` is not in the file.
    """
    pool = list(range(len(questions)))
    if ids is not None:
        by_id = {q["question_id"]: i for i, q in enumerate(questions)}
        unknown = [x for x in ids if x not in by_id]
        if unknown:
            raise LongMemEvalFormatError(f"question id(s) {unknown[:5]} are not in the file; "
                                         f"pass ids from its 'question_id' field")
        wanted = set(ids)
        pool = [i for i in pool if questions[i]["question_id"] in wanted]
    if per_type is not None:
        rng = random.Random(seed)
        by_type: dict[str, list[int]] = {}
        for i in pool:
            by_type.setdefault(str(questions[i]["question_type"]), []).append(i)
        kept: list[int] = []
        for qtype in sorted(by_type):
            members = by_type[qtype]
            kept += members if len(members) <= per_type else rng.sample(members, per_type)
        pool = sorted(kept)
    if limit is not None:
        pool = pool[:limit]
    return pool


def load_longmemeval(path: str | Path, *, per_type: int | None = None, seed: int = 0, limit: int | None = None,
                     ids: list[str] | None = None) -> LmeDataset:
    """Load (and optionally subset) a LongMemEval file.

    Args:
        path: a LongMemEval JSON file, plain or gzipped.
        per_type / seed / limit / ids: the subset (see :func:`select`).

    Returns:
        An :class:`LmeDataset` of the kept questions.

    Raises:
        LongMemEvalFormatError: the file is unreadable or any question breaks the schema.
    """
    if per_type is not None and per_type < 1:
        raise LongMemEvalFormatError(f"per_type must be at least 1, got {per_type}")
    if limit is not None and limit < 1:
        raise LongMemEvalFormatError(f"limit must be at least 1, got {limit}")
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise LongMemEvalFormatError(
            f"expected a non-empty list of questions in {str(path)!r}, got "
            f"{type(data).__name__ if data else 'an empty list'}; pass a file in LongMemEval's official schema")
    for i, q in enumerate(data):
        if not isinstance(q, dict) or not all(k in q for k in ("question_id", "question_type")):
            raise _fail(f"question {i}", "expected an object with 'question_id' and 'question_type'")
    seen = Counter(q["question_id"] for q in data)
    repeated = [k for k, n in seen.items() if n > 1]
    if repeated:
        raise _fail(f"question id {repeated[0]!r}", f"appears {seen[repeated[0]]} times; question ids must be unique")
    counts = LoadCounts(questions_in_file=len(data),
                        types_in_file=dict(sorted(Counter(str(q["question_type"]) for q in data).items())))
    keep = select(data, per_type=per_type, seed=seed, limit=limit, ids=ids)
    questions = []
    for i in keep:
        q = _question(data[i], i, counts)
        ev = q.evidence
        counts.evidence_turns += len(ev)
        counts.questions_without_evidence += not ev
        counts.abstention_questions += q.abstention
        questions.append(q)
    selection = {"per_type": per_type, "seed": seed if per_type is not None else None, "limit": limit,
                 "ids": list(ids) if ids is not None else None, "kept": len(questions),
                 "types": dict(sorted(Counter(q.question_type for q in questions).items()))}
    return LmeDataset(tuple(questions), counts, selection)
