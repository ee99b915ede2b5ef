"""The items of ``Memory.add_many``: one candidate each, validated before anything is written.

Bulk ingest embeds many texts per ONNX call and commits many decisions per
transaction, yet every item is decided exactly as its own ``add()`` call would
decide it: the items are read here, in full, up front, so a bad item fails the
whole call before the first chunk is written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memsieve.errors import InvalidInputError, InvalidTextError, short_repr
from memsieve.inputs import (MAX_METADATA_CHARS, MAX_TEXT_CHARS, check_metadata, check_record_id, check_role,
                              check_sources, check_text, iso_time, read_mapping, read_sequence)
from memsieve.write.path import Candidate

#: Most metadata one ``add_many`` call may store over all its items, in characters of JSON:
#: the call's metadata is stored with every item, so 2,000 items sharing 500 kB of it would
#: store a gigabyte.
MAX_BULK_METADATA_CHARS = 10 * MAX_METADATA_CHARS

#: Keys an item given as a mapping may hold.
ITEM_KEYS = frozenset({"content", "text", "role", "valid_from", "source", "metadata"})


def check_shared_metadata(metadata: dict[str, Any], *, count: int) -> dict[str, Any]:
    """``metadata`` (checked) that ``count`` candidates of one call each store: refused when that
    comes to more than MAX_BULK_METADATA_CHARS in all (``add`` with a list of messages).

    Raises:
        InvalidInputError: naming the total and the limit.
    """
    if not metadata or count * MAX_METADATA_CHARS <= MAX_BULK_METADATA_CHARS:
        return metadata  # each write's own bound (check_metadata) already keeps the total under the limit
    stored = len(json.dumps(metadata)) * count
    if stored > MAX_BULK_METADATA_CHARS:
        raise InvalidInputError(f"the call's metadata is stored with each of its {count:,} texts, "
                                f"{stored:,} characters of JSON in all, over the limit of "
                                f"{MAX_BULK_METADATA_CHARS:,}; split the call or store less metadata")
    return metadata


def bulk_items(items: object, *, metadata: dict[str, Any], max_chars: int = MAX_TEXT_CHARS
               ) -> list[tuple[str, str | None, str | None, list[str], dict[str, Any]]]:
    """(text, role, valid_from, sources, metadata) per item, in order.

    Args:
        items: a sequence of strings, or of mappings with ``content`` (or
            ``text``) and optionally ``role``, ``valid_from``, ``source`` and
            ``metadata`` (merged over the call's ``metadata``).
        metadata: the call's metadata, already checked.

    Raises:
        InvalidTextError, InvalidInputError: an item is malformed; its index is named.
    """
    if isinstance(items, (str, bytes, bytearray, Mapping)) or not isinstance(items, Sequence):
        raise InvalidTextError(f"add_many expects a list of texts or of items, got {type(items).__name__}; "
                               "pass e.g. ['first text', {'content': 'second', 'valid_from': '2024-05-01'}]")
    items = read_sequence(items, what="add_many's items")
    if not items:
        raise InvalidTextError("nothing to add: the list is empty; pass at least one item")
    out = []
    shared = len(json.dumps(metadata)) if metadata else 0
    stored = 0
    for i, item in enumerate(items):
        if isinstance(item, Mapping):
            item = read_mapping(item, what=f"item {i}")
            unknown = sorted(set(map(str, item)) - ITEM_KEYS)
            if unknown:
                raise InvalidInputError(f"item {i} has unknown key(s) {unknown}; use {sorted(ITEM_KEYS)}")
            if "content" in item and "text" in item:
                raise InvalidInputError(f"item {i} has both 'content' and 'text'; pass the text once, as 'content'")
            content = item.get("content", item.get("text"))
            if content is None:
                given = next((k for k in ("content", "text") if k in item), None)
                raise InvalidTextError(f"item {i} {given} is null; pass a string" if given else
                                       f"item {i} has no 'content'; pass {{'content': '...'}}")
            text = check_text(content, where=f"item {i} content", max_chars=max_chars)
            role = check_role(item.get("role"), where=f"item {i}")  # as add() checks a chat message's
            own = check_metadata(item.get("metadata"), where=f"item {i} metadata")
            meta = {**metadata, **own}
            size = len(json.dumps(meta)) if own else shared
            if size > MAX_METADATA_CHARS:
                raise InvalidInputError(f"item {i} metadata, merged over the call's, is {size:,} characters of "
                                        f"JSON, over the limit of {MAX_METADATA_CHARS:,}; store less with it")
            stored += size
            check_role_clash(role, meta, where=f"item {i}")
            out.append((text, role, iso_time(item.get("valid_from"), where=f"item {i} valid_from", keep_offset=True),
                        check_sources(item.get("source"), where=f"item {i} source"), meta))
        else:
            out.append((check_text(item, where=f"item {i}", max_chars=max_chars), None, None, [], dict(metadata)))
            stored += shared
        if stored > MAX_BULK_METADATA_CHARS:
            raise InvalidInputError(f"the items' metadata comes to {stored:,} characters of JSON by item {i}, over "
                                    f"the limit of {MAX_BULK_METADATA_CHARS:,} for one call (the call's metadata "
                                    "is stored with every item); split the call or store less metadata")
    return out


def check_role_clash(role: str | None, metadata: dict[str, Any], *, where: str) -> None:
    """A message's role is stored as ``metadata['role']``, where the read path finds the speaker: a
    metadata ``role`` that says another would overwrite it, or be overwritten.

    Raises:
        InvalidInputError: naming both.
    """
    given = metadata.get("role") if metadata else None
    if role is not None and given is not None and given != role:
        raise InvalidInputError(f"{where}: the message's role {role!r} and metadata['role'] {short_repr(given)} "
                                "clash (the role is stored as metadata['role']); store the other value under "
                                "another metadata key")


def candidate(text: str, role: str | None, valid_from: str | None, sources: list[str],
              metadata: dict[str, Any], vector: Any, parts: Any = ()) -> Candidate:
    """The write path's candidate for one item (with the passages 1.. of a long text), as ``add()`` builds it."""
    meta = dict(metadata)
    if role is not None:
        meta.setdefault("role", role)
    return Candidate(text=text, vector=vector, sources=list(sources), metadata=meta, valid_from=valid_from,
                     parts=list(parts))


def check_replaces(replaces: object, *, infer: bool) -> list[str]:
    """The ids an ``add`` takes the place of (``Memory.add(replaces=...)``), each once, in order.

    Raises:
        InvalidInputError: not a list or tuple of ids, or given with ``infer`` (extraction may
            find nothing to store, and a replace must store what takes the place of what it retires).
        NotFoundError: an id that is no string (as for an unknown id).
    """
    if isinstance(replaces, (str, bytes)) or not isinstance(replaces, Sequence):
        raise InvalidInputError(f"replaces must be a list of memory ids, got {type(replaces).__name__} "
                                f"{short_repr(replaces)}; pass e.g. [old_id]")
    ids = list(dict.fromkeys(check_record_id(i) for i in read_sequence(replaces, what="replaces")))
    if ids and infer:
        raise InvalidInputError("replaces cannot be used with infer=True: extraction may find nothing to store "
                                "in place of what it would retire; add with infer, then delete what it replaces")
    return ids
