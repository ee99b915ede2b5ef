"""Reading conversations from JSON or JSONL files, the LoCoMo format included.

The whole file is read and checked before anything is returned, so a caller
that stores the turns only after :func:`conversations` returns never stores
half a file: every text, date and source is checked with the library's own
validators (:func:`memsieve.inputs.check_text`, :func:`memsieve.inputs.iso_time`,
:func:`memsieve.inputs.check_sources`), and a bad one raises a typed error
naming the conversation, the session or message, and the turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memsieve.errors import InvalidInputError, InvalidTextError, ScopeError, short_repr
from memsieve.inputs import MAX_TEXT_CHARS, check_sources, check_text, is_blank, iso_time
from memsieve.scope import Scope

_SESSION = re.compile(r"^session_(\d+)$")

#: Types of an OpenAI-style content part whose ``text`` is kept; other parts
#: (``image_url``, ``input_audio``, ``file``, ``refusal``, ...) hold no text to store.
_TEXT_PARTS = ("text", "input_text", "output_text")


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


def _objects(value: object, *, where: str = "", what: str = "") -> list[tuple[int, dict[str, Any]]]:
    """The objects of a JSON list with their 1-based positions; a missing list (null) holds none.

    With ``where`` (the place) and ``what`` (the field), anything but a list of objects is refused:
    a conversation whose "messages" is a string is malformed, not empty."""
    if value is None:
        return []
    if not where:
        return [(i, v) for i, v in enumerate(value, 1) if isinstance(v, dict)] if isinstance(value, list) else []
    if not isinstance(value, list):
        raise InvalidTextError(f"{where} has {what!r} as {type(value).__name__} {short_repr(value)}; write it as a "
                               "JSON list of objects (see memsieve ingest --help)")
    for i, v in enumerate(value, 1):
        if not isinstance(v, dict):
            raise InvalidTextError(f"{where} has {what!r} item {i} as {type(v).__name__} {short_repr(v)}; each "
                                   "item is a JSON object")
    return list(enumerate(value, 1))


def _date(value: object, *, where: str) -> str | None:
    """A plain-format date: None, or an ISO-8601 time as the library checks it (returned as written)."""
    if value is None:
        return None
    iso_time(value, where=where)  # refuses anything but an ISO-8601 string
    return value  # type: ignore[return-value]


def _locomo_date(value: object, *, where: str) -> str | None:
    """A LoCoMo ``session_N_date_time``: None, ``"1:56 pm on 8 May, 2023"`` or an ISO-8601 time."""
    if value is None:
        return None
    parsed = parse_locomo_date(value)
    if parsed is not None:
        return parsed
    try:
        return _date(value, where=where)
    except InvalidInputError:
        raise InvalidInputError(f"{where} {short_repr(value)} is neither a LoCoMo date (e.g. '1:56 pm on 8 May, "
                                "2023') nor an ISO-8601 time (e.g. '2023-05-08T13:56:00'); fix it or remove "
                                "the key") from None


def _label(value: object, *, where: str, what: str) -> str | None:
    """A speaker or role: None or a string (checked with the text in the end)."""
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"{where} {what} must be a string, got {type(value).__name__} {short_repr(value)}; "
                            f"write the {what} as a JSON string")


def _source(value: object, *, where: str) -> str | None:
    """A turn's id, stored as its source: None, a string, or an integer (written as a string)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    try:
        check_sources(value if isinstance(value, str) else [value])
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where} id is not usable as a source: {exc}; write the id as a JSON string"
                                ) from None
    return value  # type: ignore[return-value]


def _content(value: object, *, where: str) -> str:
    """A turn's text: a string, or an OpenAI-style list of content parts whose text parts are joined.

    Missing text (None) is ``""``: the turn is skipped. Anything else that is
    not text raises InvalidTextError naming ``where``.
    """
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        texts = []
        for p_i, part in enumerate(value, 1):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise InvalidTextError(
                    f"{where} content part {p_i} is {short_repr(part)}, not a content part; write each part "
                    "as an object with a 'type', e.g. {\"type\": \"text\", \"text\": \"...\"}")
            if part["type"] in _TEXT_PARTS:
                text = part.get("text")
                if not isinstance(text, str):
                    raise InvalidTextError(
                        f"{where} content part {p_i} of type {part['type']!r} has the text "
                        f"{short_repr(text)} ({type(text).__name__}); write its 'text' as a JSON string")
                texts.append(text)
        return "\n".join(t for t in texts if not is_blank(t))
    raise InvalidTextError(f"{where} text must be a string, got {type(value).__name__} {short_repr(value)}; "
                           "write the text as a JSON string (or a list of content parts)")


def _turn(speaker: str | None, content: str, *, source: str | None, date: str | None, conv_id: str,
          where: str, max_chars: int) -> Turn | None:
    """The Turn to store, its text checked as ``Memory.add`` checks one; None when the turn has no text."""
    if is_blank(content):
        return None
    text = f"{speaker}: {content}" if speaker else content
    return Turn(text=check_text(text, where=f"{where} text", max_chars=max_chars), source=source,
                valid_from=date, conversation=conv_id)


def _locomo_turns(conv: dict[str, Any], conv_id: str, where: str, max_chars: int) -> Iterator[Turn | None]:
    body = conv["conversation"]
    sessions = []
    for key in body:
        m = _SESSION.match(key)
        if m is None:
            continue
        n = int(m.group(1))
        if key != f"session_{n}":
            raise InvalidInputError(f"{where} has the session key {key!r}; LoCoMo numbers sessions without "
                                    f"leading zeros: rename it 'session_{n}' (and its date 'session_{n}_date_time')")
        sessions.append(n)
    for n in sorted(sessions):
        at = f"{where}, session_{n}"
        date = _locomo_date(body.get(f"session_{n}_date_time"), where=f"{where}, session_{n}_date_time")
        for t_i, turn in _objects(body[f"session_{n}"]):
            here = f"{at}, turn {t_i}"
            speaker = _label(turn.get("speaker", "?"), where=here, what="speaker")
            content = _content(turn.get("text"), where=here)
            caption = turn.get("blip_caption")
            if caption:
                if not isinstance(caption, str):
                    raise InvalidTextError(f"{here} blip_caption must be a string, got {type(caption).__name__} "
                                           f"{short_repr(caption)}; write it as a JSON string")
                content = f"{content} [image: {caption}]" if content.strip() else f"[image: {caption}]"
            yield _turn(speaker, content, source=_source(turn.get("dia_id"), where=here), date=date,
                        conv_id=conv_id, where=here, max_chars=max_chars)


def _plain_turns(conv: dict[str, Any], conv_id: str, where: str, max_chars: int) -> Iterator[Turn | None]:
    if conv.get("sessions") is None and conv.get("messages") is None:
        raise InvalidTextError(f"{where} has neither 'sessions' nor 'messages'; see memsieve ingest --help "
                               "for the formats")
    for s_i, session in _objects(conv.get("sessions"), where=where, what="sessions"):
        at = f"{where}, session {s_i}"
        date = _date(session.get("date"), where=f"{at} date")
        if not isinstance(session.get("turns"), list):
            raise InvalidTextError(f"{at} has no 'turns' list (a session is {{\"date\", \"turns\": [{{\"speaker\", "
                                   "\"text\"}]}); rename its list 'turns', or write the conversation as "
                                   "'messages'")
        for t_i, turn in _objects(session.get("turns"), where=at, what="turns"):
            here = f"{at}, turn {t_i}"
            speaker = _label(turn.get("speaker"), where=here, what="speaker") or \
                _label(turn.get("role"), where=here, what="role")
            raw = turn.get("text") if turn.get("text") is not None else turn.get("content")
            yield _turn(speaker, _content(raw, where=here),
                        source=_source(turn.get("id"), where=here) or f"S{s_i}:{t_i}", date=date,
                        conv_id=conv_id, where=here, max_chars=max_chars)
    for m_i, msg in _objects(conv.get("messages"), where=where, what="messages"):
        here = f"{where}, message {m_i}"
        role = _label(msg.get("role"), where=here, what="role")
        yield _turn(role, _content(msg.get("content"), where=here),
                    source=_source(msg.get("id"), where=here) or f"M{m_i}",
                    date=_date(msg.get("date"), where=f"{here} date"), conv_id=conv_id, where=here,
                    max_chars=max_chars)


def _conversation_id(conv: dict[str, Any], i: int, path: str | Path) -> str:
    raw = conv.get("sample_id") or conv.get("id")
    if raw is None or raw == "":
        return f"conversation-{i}"
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    if not isinstance(raw, str):
        key = "sample_id" if conv.get("sample_id") else "id"
        raise InvalidInputError(f"conversation {i} of {path} has the {key} {short_repr(raw)} "
                                f"({type(raw).__name__}); write the id as a JSON string")
    return raw


def conversations(path: str | Path, *, max_chars: int = MAX_TEXT_CHARS,
                  scope_ids: bool = False) -> list[tuple[str, list[Turn]]]:
    """Load every conversation in a JSON (object or list) or JSONL file, checked whole.

    Understands LoCoMo conversations (``conversation.session_N`` with
    ``session_N_date_time``), plain
    ``{"id", "sessions": [{"date", "turns": [{"speaker", "text"}]}]}`` and
    ``{"id", "messages": [{"role", "content", "date"}]}``.

    A turn's text is a string or, as in OpenAI's chat format, a list of content
    parts: the text of its ``text`` parts (also ``input_text``/``output_text``)
    is kept, joined by newlines, and parts without text (images, audio, files,
    refusals) are left out. A turn with no text (missing, null, empty or only
    whitespace; an assistant message that only calls tools, say) is skipped, as
    are list items that are not objects. Every other malformed value is an
    error: nothing is returned unless the whole file is valid.

    Dates are ISO-8601 times, as ``Memory.add``'s ``valid_from`` takes them;
    LoCoMo's session dates may also be in its own form ("1:56 pm on 8 May,
    2023"). Turn ids (``dia_id``, ``id``) become the memory's source.

    Args:
        path: the file.
        max_chars: the longest text a turn may hold (``Memory.max_text_chars``).
        scope_ids: also check each conversation's id as ``Scope.of`` checks a
            user id, for a caller that stores each conversation under its own
            id (``memsieve ingest`` without --user/--agent/--run).

    Raises:
        InvalidTextError: the file is not JSON/JSONL, holds no conversation, or
            a turn's text is not text (not a string or content parts, holds a
            NUL, or is too long).
        InvalidInputError: a date, an id, a speaker or a LoCoMo session key is
            malformed.
        ScopeError: with ``scope_ids``, a conversation's id is not a valid
            scope id. Every message names the conversation (by position and
            id), the session or message, and the turn, and says how to fix it.
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
        items = []
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError) as exc:
                where = f"line {number}" + (f", column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "")
                why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
                raise InvalidTextError(f"{path} is neither JSON nor JSONL: {why} at {where}; check the file") from None
    out = []
    for i, conv in enumerate(items, 1):
        if not isinstance(conv, dict):
            raise InvalidTextError(f"conversation {i} of {path} is {type(conv).__name__}, expected a conversation "
                                   "object; write each conversation as a JSON object")
        conv_id = _conversation_id(conv, i, path)
        if scope_ids:
            try:
                Scope.of(user_id=conv_id)
            except ScopeError as exc:
                raise ScopeError(f"conversation {i} of {path} has the id {short_repr(conv_id)}, which cannot be "
                                 f"its user id ({exc}); fix the id, or store the whole file in one scope "
                                 "(memsieve ingest FILE --user ID)") from None
        where = f"conversation {i} ({short_repr(conv_id)}) of {path}"
        if isinstance(conv.get("conversation"), dict):
            found = list(_locomo_turns(conv, conv_id, where, max_chars))
        else:
            found = list(_plain_turns(conv, conv_id, where, max_chars))
        turns = [t for t in found if t is not None]
        if turns:
            out.append((conv_id, turns))
    if not out:
        raise InvalidTextError(f"{path} holds no conversation turns; see `memsieve ingest --help` for the formats")
    return out
