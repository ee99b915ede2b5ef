"""Reading conversations from JSON or JSONL files, the LoCoMo format included."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memsieve.errors import InvalidTextError

_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One utterance to store: its text, where it came from, and when it was said."""

    text: str
    source: str | None
    valid_from: str | None
    conversation: str


# LoCoMo's session dates: "1:56 pm on 8 May, 2023" (also abbreviated months and 24-hour times).
_LOCOMO_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%H:%M on %d %B, %Y")


def parse_locomo_date(value: object) -> str | None:
    """``"1:56 pm on 8 May, 2023"`` -> ``"2023-05-08T13:56:00"``; None if it is not such a date.

    Args:
        value: the raw ``session_N_date_time`` field (anything; non-strings give None).
    """
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    for fmt in _LOCOMO_DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).isoformat()
        except ValueError:
            continue
    return None


def _objects(value: object) -> list[dict[str, Any]]:
    """The dict items of a JSON list; anything else (a string, a number, null) holds none."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _locomo_turns(conv: dict[str, Any], conv_id: str) -> Iterator[Turn]:
    body = conv["conversation"]
    numbers = sorted(int(m.group(1)) for k in body if (m := _SESSION.match(k)))
    for n in numbers:
        date = parse_locomo_date(body.get(f"session_{n}_date_time"))
        for turn in _objects(body[f"session_{n}"]):
            text = f"{turn.get('speaker', '?')}: {turn.get('text', '')}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            yield Turn(text=text, source=turn.get("dia_id"), valid_from=date, conversation=conv_id)


def _plain_turns(conv: dict[str, Any], conv_id: str) -> Iterator[Turn]:
    for s_i, session in enumerate(_objects(conv.get("sessions"))):
        date = session.get("date")
        for t_i, turn in enumerate(_objects(session.get("turns"))):
            speaker = turn.get("speaker") or turn.get("role")
            content = turn.get("text") or turn.get("content") or ""
            yield Turn(text=f"{speaker}: {content}" if speaker else content,
                       source=turn.get("id") or f"S{s_i + 1}:{t_i + 1}", valid_from=date, conversation=conv_id)
    for m_i, msg in enumerate(_objects(conv.get("messages"))):
        role = msg.get("role")
        content = msg.get("content", "")
        yield Turn(text=f"{role}: {content}" if role else content, source=msg.get("id") or f"M{m_i + 1}",
                   valid_from=msg.get("date"), conversation=conv_id)


def conversations(path: str | Path) -> list[tuple[str, list[Turn]]]:
    """Load every conversation in a JSON (object or list) or JSONL file.

    Understands LoCoMo conversations (``conversation.session_N``), plain
    ``{"id", "sessions": [{"date", "turns": [{"speaker", "text"}]}]}`` and
    ``{"id", "messages": [{"role", "content"}]}``.

    Raises:
        InvalidTextError: the file is not JSON/JSONL or holds no conversation.
    """
    try:
        raw = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InvalidTextError(f"cannot read conversations from {str(path)!r} ({reason}); "
                               f"pass the path of a UTF-8 JSON or JSONL file") from None
    try:
        data: Any = json.loads(raw)
        items = data if isinstance(data, list) else [data]
    except (json.JSONDecodeError, RecursionError):
        try:
            items = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InvalidTextError(f"{path} is neither JSON nor JSONL: {exc}; check the file") from None
    out = []
    for i, conv in enumerate(items):
        if not isinstance(conv, dict):
            raise InvalidTextError(f"item {i} of {path} is {type(conv).__name__}, expected a conversation object")
        conv_id = str(conv.get("sample_id") or conv.get("id") or f"conversation-{i + 1}")
        if isinstance(conv.get("conversation"), dict):
            turns = list(_locomo_turns(conv, conv_id))
        else:
            turns = list(_plain_turns(conv, conv_id))
        turns = [t for t in turns if t.text.strip()]
        if turns:
            out.append((conv_id, turns))
    if not out:
        raise InvalidTextError(f"{path} holds no conversation turns; see `memsieve ingest --help` for the formats")
    return out
