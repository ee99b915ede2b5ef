"""Read a LoCoMo file (the original schema) into write streams and questions.

LoCoMo is read in place, never copied: ``load_locomo(path)`` returns plain
dataclasses. Two write streams come out of one conversation:

- ``turns``: every dialogue turn as ``"Speaker: text"`` (plus
  ``" [image: caption]"`` when the turn carries a ``blip_caption``), one
  candidate per turn, sourced by its ``dia_id``;
- ``observations``: the facts the dataset's authors extracted per session and
  speaker, one list of candidates per (session, speaker), each sourced by the
  dia_id(s) written beside it.

Every candidate's ``valid_from`` is its session's date. Evidence ids are messy in
the real data (``"D8:6; D9:17"``, ``"D"``, ``"D:11:26"``, ids that name no
turn); they are parsed leniently, and every repair or loss is counted in
:class:`LoadCounts` rather than raised.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsieve.errors import MemsieveError
from memsieve.write.ingest import parse_locomo_date

STREAMS = ("turns", "observations")

CATEGORY_LABELS = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}

# A well-formed id is D<session>:<turn>. The lenient form also accepts the
# stray colon seen in the data ("D:11:26") and surrounding spaces.
_STRICT_ID = re.compile(r"^D(\d+):(\d+)$")
_LENIENT_ID = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$")
_ID_SEPARATORS = re.compile(r"[;,\s]+(?=D)")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


class LocomoFormatError(MemsieveError, ValueError):
    """The file is not LoCoMo's schema at all (not a list of samples, no conversation)."""


@dataclass(frozen=True)
class Candidate:
    """One text offered to the write path.

    Attributes:
        text: the text given to ``Memory.add``.
        sources: the dia_ids it was written from (may be empty if all were malformed).
        valid_from: ISO date-time of its session, or None if the date did not parse.
    """

    text: str
    sources: tuple[str, ...]
    valid_from: str | None


@dataclass(frozen=True)
class Session:
    """One dated session of a conversation.

    Attributes:
        index: the N of ``session_N``.
        valid_from: ISO date-time parsed from ``session_N_date_time`` or None.
        turns: one candidate per dialogue turn, in order.
        facts: (speaker, candidates) pairs from ``session_N_observation``, in file order.
    """

    index: int
    valid_from: str | None
    turns: tuple[Candidate, ...]
    facts: tuple[tuple[str, tuple[Candidate, ...]], ...]


@dataclass(frozen=True)
class Question:
    """One QA item.

    Attributes:
        sample_id: the conversation it belongs to (its scope).
        index: position in the sample's ``qa`` list.
        question: the question text.
        answer: ``str(answer)`` or None (category 5 has only an adversarial answer).
        adversarial_answer: the distractor of category 5, else None.
        category: LoCoMo's integer category 1..5.
        evidence: well-formed ids that name a turn of this conversation.
    """

    sample_id: str
    index: int
    question: str
    answer: str | None
    adversarial_answer: str | None
    category: int
    evidence: tuple[str, ...]

    @property
    def qid(self) -> str:
        """Stable id ``<sample_id>/<index>``."""
        return f"{self.sample_id}/{self.index}"


@dataclass(frozen=True)
class Conversation:
    """A sample: its sessions (the write streams) and its questions."""

    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def stream(self, name: str) -> list[tuple[Session, list[list[Candidate]]]]:
        """The add() calls of a stream, grouped by session.

        Args:
            name: ``"turns"`` (one call per turn) or ``"observations"`` (one call per
                session and speaker, carrying that speaker's list of facts).

        Returns:
            [(session, [call, ...])] where each call is a list of candidates.
        """
        if name not in STREAMS:
            raise LocomoFormatError(f"unknown stream {name!r}; use one of {', '.join(STREAMS)}")
        out = []
        for s in self.sessions:
            if name == "turns":
                calls = [[c] for c in s.turns]
            else:
                calls = [list(cands) for _, cands in s.facts if cands]
            out.append((s, calls))
        return out


@dataclass
class LoadCounts:
    """What the loader repaired or dropped. Nothing here is ever raised."""

    evidence_ids: int = 0
    evidence_repaired: int = 0
    evidence_split: int = 0
    evidence_malformed: int = 0
    evidence_unknown_turn: int = 0
    questions_without_evidence: int = 0
    fact_ids: int = 0
    fact_ids_repaired: int = 0
    fact_ids_malformed: int = 0
    facts_malformed: int = 0
    facts_without_source: int = 0
    sessions_without_observation: int = 0
    sessions_without_date: int = 0
    turns_with_image: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)

    def note(self, kind: str, value: object) -> None:
        """Keep up to five raw examples of each kind of problem for the report."""
        bucket = self.examples.setdefault(kind, [])
        if len(bucket) < 5:
            bucket.append(repr(value))


@dataclass(frozen=True)
class Dataset:
    """The loaded conversations and the loader's counts."""

    conversations: tuple[Conversation, ...]
    counts: LoadCounts

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]


def parse_session_date(raw: object) -> str | None:
    """``"1:56 pm on 8 May, 2023"`` -> ``"2023-05-08T13:56:00"``; None if it does not parse.

    The same parser as ``memsieve ingest`` (:func:`memsieve.write.ingest.parse_locomo_date`).
    """
    return parse_locomo_date(raw)


def parse_dia_ids(raw: object) -> tuple[list[str], int, int, int]:
    """Parse a dia_id field (a string, a list, or junk) leniently.

    Returns:
        (ids, repaired, split, malformed): the canonical ``D<s>:<t>`` ids in order
        without duplicates, how many needed repair, how many extra ids came out of
        splitting one string (``"D8:6; D9:17"``), and how many pieces were unusable.
    """
    pieces: list[object]
    if isinstance(raw, (list, tuple)):
        pieces = list(raw)
    else:
        pieces = [raw]
    ids: list[str] = []
    repaired = split = malformed = 0
    for piece in pieces:
        if not isinstance(piece, str):
            malformed += 1
            continue
        parts = [p.strip() for p in _ID_SEPARATORS.split(piece.strip()) if p.strip()]
        if not parts:
            malformed += 1
            continue
        split += len(parts) - 1
        for part in parts:
            if _STRICT_ID.match(part):
                canon = part
            else:
                m = _LENIENT_ID.match(part)
                if m is None:
                    malformed += 1
                    continue
                canon = f"D{int(m.group(1))}:{int(m.group(2))}"
                repaired += 1
            if canon not in ids:
                ids.append(canon)
    return ids, repaired, split, malformed


def _turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn.get('speaker', '?')}: {str(turn.get('text', '')).strip()}"
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text += f" [image: {caption.strip()}]"
    return text


def _load_sessions(sample: dict[str, Any], counts: LoadCounts) -> tuple[list[Session], set[str]]:
    conv = sample["conversation"]
    observations = sample.get("observation") or {}
    sessions: list[Session] = []
    known: set[str] = set()
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    for n in numbers:
        raw_turns = conv.get(f"session_{n}")
        if not isinstance(raw_turns, list) or not raw_turns:
            continue
        date = parse_session_date(conv.get(f"session_{n}_date_time"))
        if date is None:
            counts.sessions_without_date += 1
            counts.note("session_date", conv.get(f"session_{n}_date_time"))
        turns = []
        for t in raw_turns:
            if not isinstance(t, dict):
                continue
            dia = t.get("dia_id")
            if isinstance(dia, str):
                known.add(dia)
            if t.get("blip_caption"):
                counts.turns_with_image += 1
            turns.append(Candidate(_turn_text(t), (dia,) if isinstance(dia, str) else (), date))
        facts = _load_facts(observations.get(f"session_{n}_observation"), date, counts, n)
        sessions.append(Session(n, date, tuple(turns), facts))
    return sessions, known


def _load_facts(raw: object, date: str | None, counts: LoadCounts, n: int):
    if not isinstance(raw, dict):
        counts.sessions_without_observation += 1
        counts.note("session_without_observation", f"session_{n}")
        return ()
    out = []
    for speaker, items in raw.items():
        cands = []
        for item in items if isinstance(items, list) else []:
            if not (isinstance(item, (list, tuple)) and len(item) >= 1 and isinstance(item[0], str)
                    and item[0].strip()):
                counts.facts_malformed += 1
                counts.note("fact", item)
                continue
            ids, rep, split, bad = parse_dia_ids(item[1] if len(item) > 1 else None)
            counts.fact_ids += len(ids)
            counts.fact_ids_repaired += rep + split
            counts.fact_ids_malformed += bad
            if rep or split or bad:
                counts.note("fact_source", item[1] if len(item) > 1 else None)
            if not ids:
                counts.facts_without_source += 1
            cands.append(Candidate(item[0].strip(), tuple(ids), date))
        out.append((str(speaker), tuple(cands)))
    return tuple(out)


def _load_questions(sample: dict[str, Any], known: set[str], counts: LoadCounts) -> list[Question]:
    out = []
    for i, qa in enumerate(sample.get("qa") or []):
        ids, rep, split, bad = parse_dia_ids(qa.get("evidence") or [])
        counts.evidence_ids += len(ids)
        counts.evidence_repaired += rep
        counts.evidence_split += split
        counts.evidence_malformed += bad
        if rep or split or bad:
            counts.note("evidence", qa.get("evidence"))
        valid = []
        for e in ids:
            if e in known:
                valid.append(e)
            else:
                counts.evidence_unknown_turn += 1
                counts.note("evidence_unknown_turn", f"{sample['sample_id']}:{e}")
        if not valid:
            counts.questions_without_evidence += 1
        answer = qa.get("answer")
        adv = qa.get("adversarial_answer")
        out.append(
            Question(
                sample_id=str(sample["sample_id"]),
                index=i,
                question=str(qa.get("question", "")).strip(),
                answer=None if answer is None else str(answer),
                adversarial_answer=None if adv is None else str(adv),
                category=int(qa.get("category", 0)),
                evidence=tuple(valid),
            )
        )
    return out


def load_locomo(path: str | Path, *, conversations: list[str] | None = None) -> Dataset:
    """Load a LoCoMo JSON file.

    Args:
        path: the JSON file (a list of samples in LoCoMo's schema).
        conversations: keep only these sample_ids (all when None).

    Returns:
        A :class:`Dataset`; malformed ids and facts are counted, not raised.

    Raises:
        LocomoFormatError: the file is not a list of samples with a conversation,
            or a requested sample_id is absent.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LocomoFormatError(f"cannot read LoCoMo file {str(path)!r}: {exc}; pass the path of locomo_dev.json") from exc
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise LocomoFormatError(
            f"expected a list of samples with a 'conversation' key in {str(path)!r}, "
            f"got {type(data).__name__}; pass a file in LoCoMo's original schema"
        )
    counts = LoadCounts()
    wanted = set(conversations) if conversations else None
    if wanted is not None:
        missing = wanted - {str(s.get("sample_id")) for s in data}
        if missing:
            raise LocomoFormatError(
                f"conversation(s) {sorted(missing)} not in {str(path)!r}; "
                f"available: {[s.get('sample_id') for s in data]}"
            )
    convs = []
    for sample in data:
        sid = str(sample.get("sample_id"))
        if wanted is not None and sid not in wanted:
            continue
        sessions, known = _load_sessions(sample, counts)
        questions = _load_questions(sample, known, counts)
        convs.append(Conversation(sid, tuple(sessions), tuple(questions)))
    return Dataset(tuple(convs), counts)


def check_category_labels(questions: list[Question]) -> dict[str, Any]:
    """Test the label map (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
    5 adversarial) against the questions themselves.

    Each label predicts a signature that the texts can confirm or refute:
    temporal questions mostly begin with "When"; multi-hop questions cite the most
    evidence turns; open-domain ones ask what someone "would"/"likely" do;
    single-hop is the largest answerable category with about one evidence turn;
    adversarial items carry ``adversarial_answer`` instead of ``answer``.

    Returns:
        {"consistent": bool, "checks": [{"label", "claim", "ok", "observed"}], "by_category": {...}}
    """
    stats: dict[int, dict[str, float]] = {}
    for c in sorted({q.category for q in questions}):
        qs = [q for q in questions if q.category == c]
        n = len(qs)
        stats[c] = {
            "n": n,
            "when_share": sum(q.question.lower().startswith("when") for q in qs) / n,
            "mean_evidence": sum(len(q.evidence) for q in qs) / n,
            "hypothetical_share": sum(bool(re.search(r"\b(would|likely)\b", q.question.lower())) for q in qs) / n,
            "adversarial_share": sum(q.answer is None and q.adversarial_answer is not None for q in qs) / n,
        }

    def arg_best(key: str, among: list[int] | None = None) -> int | None:
        pool = [c for c in (among or list(stats)) if c in stats]
        return max(pool, key=lambda c: stats[c][key]) if pool else None

    answerable = [c for c in stats if stats[c]["adversarial_share"] < 0.5]
    checks = [
        ("temporal", 2, arg_best("when_share"), "category with most questions starting 'When'"),
        ("multi-hop", 1, arg_best("mean_evidence"), "category citing the most evidence turns per question"),
        ("open-domain", 3, arg_best("hypothetical_share"), "category with most 'would'/'likely' questions"),
        ("adversarial", 5, arg_best("adversarial_share"), "category whose items carry adversarial_answer only"),
        ("single-hop", 4, max(answerable, key=lambda c: stats[c]["n"]) if answerable else None,
         "largest answerable category"),
    ]
    rows = []
    for label, expected, got, claim in checks:
        observed = {k: round(v, 3) for k, v in stats.get(expected, {}).items()}
        rows.append({"label": label, "category": expected, "claim": claim, "ok": got == expected,
                     "winner": got, "observed": observed})
    return {"consistent": all(r["ok"] for r in rows), "checks": rows,
            "by_category": {str(c): {k: round(v, 3) for k, v in s.items()} for c, s in stats.items()}}
