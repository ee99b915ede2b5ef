"""The updates set (eval/updates/*.jsonl): item types, loading and validation.

Each line of a split file is one short conversation::

    {"id": "correction-03", "kind": "correction", "split": "dev",
     "turns": [{"text": "...", "date": "2024-05-02", "role": "user"},
               {"text": "...", "date": "2024-06-11", "role": "user", "forget": true}],
     "question": "...", "expected": ["antwerp"], "stale": ["ghent"],
     "answer_turn": 1, "note": "..."}

``expected`` and ``stale`` are content tokens in the sense of
:func:`memsieve.eval.metrics.content_tokens` (lowercase, no stopwords), so a
token matches a retrieved text exactly when answer recall would count it.
A turn with ``"forget": true`` is a request to forget, sent to
``Memory.forget`` instead of ``Memory.add``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from memsieve.errors import MemsieveError
from memsieve.eval.metrics import content_tokens

#: Every kind, in report order.
KINDS = ("detail", "correction", "preference", "negation", "event", "filler", "paraphrase", "forget",
         "neighbour")
#: Kinds whose last fact turn is a newer version of an earlier one.
VERSION_KINDS = frozenset({"detail", "correction", "preference", "negation", "event"})
#: Kinds whose expected tokens must rank above their stale ones. A ``neighbour`` is
#: the control of the version kinds: a later fact about the same subject that is
#: *not* a version ("Lena works as a dentist" then "Lena now lives near the
#: park"), so the question about the older fact must still find it first.
RANKED_KINDS = VERSION_KINDS | {"neighbour"}
SPLITS = ("dev", "test")
#: The split files, relative to the set's directory.
SPLIT_FILES = {"dev": "dev.jsonl", "test": "test.jsonl"}
ROLES = ("user", "assistant")


class UpdatesFormatError(MemsieveError, ValueError):
    """A split file of the updates set is missing, is not JSONL, or holds a malformed item."""


@dataclass(frozen=True)
class Turn:
    """One message of an item: its text, the day it was said, who said it, and
    whether it asks to forget (then it goes to ``Memory.forget``)."""

    text: str
    date: str
    role: str = "user"
    forget: bool = False


@dataclass(frozen=True)
class Item:
    """One conversation of the set.

    Attributes:
        id: unique id, ``<kind>-NN``.
        kind: one of :data:`KINDS`.
        split: ``dev`` or ``test``.
        turns: the messages, in order, dates non-decreasing.
        question: the query sent to ``Memory.search``.
        expected: tokens that must be in the top results (may be empty for forget items).
        stale: tokens of the older version (versions) or of the text to forget (forget).
        answer_turn: index of the turn holding ``expected`` (paraphrase: the original), or None.
        note: free text for readers.
    """

    id: str
    kind: str
    split: str
    turns: tuple[Turn, ...]
    question: str
    expected: tuple[str, ...]
    stale: tuple[str, ...]
    answer_turn: int | None
    note: str = ""

    @property
    def forget_turns(self) -> list[int]:
        return [i for i, t in enumerate(self.turns) if t.forget]


def default_dir() -> Path:
    """``eval/updates`` of the source tree this package was installed from (editable installs)."""
    return Path(__file__).resolve().parents[3] / "eval" / "updates"


def load_items(directory: str | Path | None = None, *, split: str = "dev") -> list[Item]:
    """Read and validate one split (``dev``, ``test``) or both (``all``).

    Args:
        directory: the folder holding dev.jsonl and test.jsonl (default: :func:`default_dir`).
        split: ``dev``, ``test`` or ``all``.

    Raises:
        UpdatesFormatError: unknown split, unreadable file or malformed item
            (the message names the file, the line and the field).
    """
    if split not in SPLITS + ("all",):
        raise UpdatesFormatError(f"unknown split {split!r}; use dev, test or all")
    folder = Path(directory) if directory is not None else default_dir()
    items: list[Item] = []
    for name in SPLITS if split == "all" else (split,):
        items += _read_split(folder / SPLIT_FILES[name], name)
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise UpdatesFormatError(f"item id {it.id!r} occurs twice; give every item its own id")
        seen.add(it.id)
    return items


def _read_split(path: Path, split: str) -> list[Item]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UpdatesFormatError(f"cannot read the updates set {str(path)!r}: {exc.strerror}; "
                                 "pass --data DIR holding dev.jsonl and test.jsonl") from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UpdatesFormatError(f"{where} is not JSON ({exc.msg}); write one item per line") from None
        item = parse_item(raw, where=where)
        if item.split != split:
            raise UpdatesFormatError(f"{where}: item {item.id!r} says split {item.split!r} but sits in "
                                     f"{path.name}; move it or fix its split")
        out.append(item)
    return out


def parse_item(raw: object, *, where: str = "item") -> Item:
    """Build an :class:`Item` from one decoded JSON object, checking every field's type."""
    if not isinstance(raw, dict):
        raise UpdatesFormatError(f"{where} is a {type(raw).__name__}, not an object; write one JSON object per line")
    fields = _Fields(raw, where)
    kind = fields.text("kind")
    if kind not in KINDS:
        raise UpdatesFormatError(f"{where}: unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    turns_raw = fields.array("turns")
    if not turns_raw:
        raise UpdatesFormatError(f"{where}: 'turns' is empty; give at least one turn")
    turns = tuple(_parse_turn(t, where=f"{where} turn {i}") for i, t in enumerate(turns_raw))
    expected, stale = (fields.tokens(name) for name in ("expected", "stale"))
    answer = raw.get("answer_turn")
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)
                               or not 0 <= answer < len(turns)):
        raise UpdatesFormatError(f"{where}: answer_turn {answer!r} is not a turn index (0..{len(turns) - 1})")
    return Item(id=fields.text("id"), kind=kind, split=fields.text("split"), turns=turns,
                question=fields.text("question"), expected=expected, stale=stale, answer_turn=answer,
                note=fields.text("note", default=""))


class _Fields:
    """Typed reads of one raw item; every failure names the line and the field."""

    def __init__(self, raw: dict[str, Any], where: str) -> None:
        self.raw, self.where = raw, where

    def _get(self, name: str, default: object) -> object:
        if name not in self.raw and default is None:
            raise UpdatesFormatError(f"{self.where} has no {name!r}; add it")
        return self.raw.get(name, default)

    def text(self, name: str, *, default: str | None = None) -> str:
        value = self._get(name, default)
        if not isinstance(value, str):
            raise UpdatesFormatError(f"{self.where}: {name!r} is {value!r}, expected a string")
        return value

    def array(self, name: str) -> list[Any]:
        value = self._get(name, None)
        if not isinstance(value, list):
            raise UpdatesFormatError(f"{self.where}: {name!r} is {value!r}, expected a list")
        return value

    def tokens(self, name: str) -> tuple[str, ...]:
        values = self.array(name)
        for v in values:
            if not isinstance(v, str) or content_tokens(v) != [v]:
                raise UpdatesFormatError(f"{self.where}: {name} token {v!r} is not one content token; "
                                         "use lowercase words that are not stopwords, e.g. 'antwerp'")
        return tuple(values)


def _parse_turn(raw: object, *, where: str) -> Turn:
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
        raise UpdatesFormatError(f"{where} needs a non-empty 'text'; write {{'text': ..., 'date': 'YYYY-MM-DD'}}")
    day = raw.get("date")
    try:
        date.fromisoformat(day)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UpdatesFormatError(f"{where}: date {day!r} is not YYYY-MM-DD; write e.g. '2024-05-02'") from None
    role = raw.get("role", "user")
    if role not in ROLES:
        raise UpdatesFormatError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
    forget = raw.get("forget", False)
    if not isinstance(forget, bool):
        raise UpdatesFormatError(f"{where}: 'forget' is {forget!r}; use true or false")
    return Turn(text=raw["text"], date=day, role=role, forget=forget)  # type: ignore[arg-type]
