"""Turning what a caller passes to ``add`` into validated candidate texts."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from memsieve.errors import InvalidTextError

#: Longest text one candidate may hold. The default embedder truncates at 256
#: tokens (roughly 1,000 characters of English); longer texts are refused rather
#: than silently cut, so the caller decides how to split them.
MAX_TEXT_CHARS = 4000

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """The form exact dedup compares: NFKC, case-folded, whitespace collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def text_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def check_text(text: object, *, where: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(text, str):
        raise InvalidTextError(f"{where} must be a string, got {type(text).__name__}; pass text as str")
    stripped = text.strip()
    if not stripped:
        raise InvalidTextError(f"{where} is empty or only whitespace; pass some text")
    if len(stripped) > max_chars:
        raise InvalidTextError(
            f"{where} has {len(stripped)} characters, over the limit of {max_chars}; "
            f"split it into smaller chunks or raise max_text_chars"
        )
    if "\x00" in stripped:
        raise InvalidTextError(f"{where} contains a NUL byte; remove it")
    return stripped


def candidate_texts(messages_or_text: object, *, max_chars: int = MAX_TEXT_CHARS) -> list[tuple[str, str | None]]:
    """Validate the input of ``add`` and return (text, role) pairs.

    Accepts a string, a list of strings, or a list of chat messages
    (``{"role": ..., "content": ...}``). Raises InvalidTextError before anything
    is written when any item is bad.
    """
    if isinstance(messages_or_text, str):
        return [(check_text(messages_or_text, where="text", max_chars=max_chars), None)]
    if isinstance(messages_or_text, Mapping):
        messages_or_text = [messages_or_text]
    if not isinstance(messages_or_text, Sequence) or isinstance(messages_or_text, (bytes, bytearray)):
        raise InvalidTextError(
            f"expected a string, a list of strings or a list of messages, got {type(messages_or_text).__name__}"
        )
    if len(messages_or_text) == 0:
        raise InvalidTextError("nothing to add: the list is empty; pass at least one text")
    out: list[tuple[str, str | None]] = []
    for i, item in enumerate(messages_or_text):
        if isinstance(item, Mapping):
            if "content" not in item:
                raise InvalidTextError(f"message {i} has no 'content' key; pass {{'role': ..., 'content': ...}}")
            role = item.get("role")
            out.append((check_text(item["content"], where=f"message {i} content", max_chars=max_chars),
                        str(role) if role is not None else None))
        else:
            out.append((check_text(item, where=f"item {i}", max_chars=max_chars), None))
    return out


def iso_time(value: object, *, where: str) -> str | None:
    """Accept None, a datetime or an ISO-8601 string; return an ISO string in UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidTextError(f"{where} {value!r} is not an ISO-8601 time; pass e.g. '2023-05-08T13:56:00'") from None
    else:
        raise InvalidTextError(f"{where} must be a datetime or an ISO-8601 string, got {type(value).__name__}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat()


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


def check_metadata(metadata: object) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidTextError(f"metadata must be a dict, got {type(metadata).__name__}")
    for key in metadata:
        if not isinstance(key, str):
            raise InvalidTextError(f"metadata keys must be strings, got {key!r}")
    return dict(metadata)


def check_sources(source: object) -> list[str]:
    if source is None:
        return []
    if isinstance(source, str):
        return [source]
    if isinstance(source, Sequence) and all(isinstance(s, str) for s in source):
        return list(source)
    raise InvalidTextError(f"source must be a string or a list of strings, got {source!r}")
