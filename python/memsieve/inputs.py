"""Validating what a caller passes to ``Memory``: texts, metadata, sources, times, limits and ids.

Every check raises a typed ``MemsieveError`` before anything is embedded or
written, with a message that names the bad value and says how to fix it. The
rules are the ones no store can relax: SQLite and PostgreSQL take only valid
UTF-8 (no lone surrogates), PostgreSQL text and JSONB hold no NUL, and JSON
holds no NaN, no infinity and no Python object.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import numbers
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from memsieve.errors import (CallbackError, ConfigError, InvalidInputError, InvalidTextError, MemsieveError,
                             NotFoundError, short_repr)
from memsieve.plain import plain
from memsieve.records import LAYERS
from memsieve.scope import INVISIBLE_RANGES
from memsieve.times import iso_time, now_iso  # noqa: F401 - re-exported: the checks of every input live here

#: Longest text one candidate may hold: 100,000 characters, well above any chat
#: turn (LongMemEval's longest are about 40,000). The embedder reads about 1,000
#: characters; a longer text is also embedded passage by passage
#: (memsieve.text.passages), so every part of it counts in the gate and is
#: found by search. The limit bounds one write's cost: a text of 100,000
#: characters is ~140 passages to embed.
MAX_TEXT_CHARS = 100_000

#: Deepest nesting of dicts and lists in metadata. JSON from real tools rarely
#: passes 10 levels; the cap keeps encoding far below Python's recursion limit.
MAX_METADATA_DEPTH = 64

#: Largest metadata one write may carry, in characters of its JSON: ten texts at
#: their limit. It is stored with every memory the write adds, so it bounds what
#: one call can make the store hold (a LangGraph item's value lives there too).
MAX_METADATA_CHARS = 1_000_000

#: Longest role a message or item may name: it is stored in the memory's metadata (as "role"),
#: on top of what MAX_METADATA_CHARS bounds.
MAX_ROLE_CHARS = 100

#: Most sources one write may name, and the longest one: a source is the id of
#: what a memory came from ("session:turn", a URL), not content.
MAX_SOURCES = 1_000
MAX_SOURCE_CHARS = 2_000

#: Metadata integers must fit in a signed 64-bit integer, the widest integer
#: SQLite's JSON functions and most JSON readers keep exactly.
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

#: Limits are ints in [1, 2**63 - 1] (the range of SQLite's LIMIT). Above
#: LIMIT_CEILING a limit is treated as LIMIT_CEILING: no scope holds two billion
#: memories, so the answer is the same, and derived sizes (3 * limit for the
#: hybrid search's candidate lists) stay far from overflowing.
LIMIT_CEILING = 2**31 - 1

#: Longest memory or rejection id: ids are UUIDs (36 characters), so a longer
#: string cannot name a record.
MAX_RECORD_ID_CHARS = 128

# Lone surrogates are not Unicode text (they cannot be encoded as UTF-8); NUL is
# refused by PostgreSQL in text and JSONB.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def normalize_text(text: str) -> str:
    """The form exact dedup compares: NFKC, case-folded, whitespace collapsed."""
    # str.split() cuts at runs of exactly the characters \s matches and drops them at both ends.
    # ASCII is its own NFKC form and case-folds as it lowercases: most texts skip the Unicode
    # tables and the regex engine, which an add() meets cold right after the embedding.
    if text.isascii():
        return " ".join(text.split()).lower()
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def text_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def check_storable(value: str, *, where: str, error: type[Exception] = InvalidInputError) -> str:
    """Refuse a string that no store can hold: a lone surrogate or a NUL character.

    Args:
        value: the string to check.
        where: how the message names it (``"text"``, ``"metadata['k']"``).
        error: the MemsieveError subclass to raise.

    Returns:
        ``value`` unchanged.
    """
    bad = _UNSTORABLE.search(value)
    if bad is not None:
        ch = bad.group()
        what = "a NUL character" if ch == "\x00" else f"a lone surrogate {ch!r}"
        fix = "remove it" if ch == "\x00" else "decode the source bytes with errors='replace', or remove it"
        raise error(f"{where} holds {what} at position {bad.start()}, which memsieve can neither store nor "
                    f"search; {fix}")
    return value


# A visible character: neither whitespace nor one of memsieve.scope.INVISIBLE_RANGES (which scope ids
# trim at their edges too, so a blank text and a blank id are one rule).
_VISIBLE = re.compile(rf"[^\s{INVISIBLE_RANGES}]")


def is_blank(text: str) -> bool:
    """Whether a text holds nothing to see: only whitespace and invisible format characters
    (``INVISIBLE_RANGES``).

    What ``check_text`` refuses as empty; a reader of a chat log skips such a
    turn (real logs hold messages of a lone zero-width space) rather than
    failing the whole log on it."""
    return _VISIBLE.search(text) is None


def check_text(text: object, *, where: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """A candidate text or query: a non-empty str within ``max_chars``, stripped of surrounding whitespace."""
    if not isinstance(text, str):
        raise InvalidTextError(f"{where} must be a string, got {type(text).__name__}; pass text as str")
    stripped = text.strip()
    if is_blank(stripped):
        raise InvalidTextError(f"{where} is empty or only whitespace (or invisible format characters such as "
                               "a zero-width space); pass some text")
    if len(stripped) > max_chars:
        raise InvalidTextError(
            f"{where} has {len(stripped)} characters, over the limit of {max_chars}; "
            f"split it into smaller chunks or raise max_text_chars"
        )
    return check_storable(stripped, where=where, error=InvalidTextError)


def _check_role(role: object, *, where: str) -> str | None:
    if role is None:
        return None
    if not isinstance(role, str):
        raise InvalidTextError(f"{where} role must be a string, got {type(role).__name__} {short_repr(role)}; "
                               "pass e.g. 'user' or 'assistant'")
    if is_blank(role):
        raise InvalidTextError(f"{where} role is blank; pass e.g. 'user' or 'assistant', or leave it out")
    if len(role) > MAX_ROLE_CHARS:
        # The role is stored in the memory's metadata, past the metadata bound: it stays a name.
        raise InvalidTextError(f"{where} role has {len(role):,} characters, over the limit of {MAX_ROLE_CHARS}; "
                               "a role names a speaker ('user', 'assistant', a tool's name)")
    return check_storable(role, where=f"{where} role", error=InvalidTextError)


def check_role(role: object, *, where: str) -> str | None:
    """A message's or an item's ``role``: None, or a non-blank storable string (``where`` names it)."""
    return _check_role(role, where=where)


def read_sequence(items: Sequence[Any], *, what: str) -> list[Any]:
    """A caller's sequence that is no list (a ``UserList``, a ``Sequence`` of its own) read into
    one, its items as plain values (memsieve.plain), through its own methods, which may raise.

    Raises:
        InvalidInputError: reading it raised; the caller's exception is chained.
    """
    if type(items) in (list, tuple):
        return list(items)
    try:
        return [plain(item) for item in items]
    except MemsieveError:
        raise
    except Exception as exc:
        raise InvalidInputError(f"reading {what} raised {type(exc).__name__}: {short_repr(str(exc), 80)}; "
                                "pass a list") from exc


def read_mapping(item: Mapping[Any, Any], *, what: str) -> dict[Any, Any]:
    """A caller's mapping that is no dict read into one (as ``read_sequence`` reads a sequence)."""
    if type(item) is dict:
        return item
    try:
        return plain({key: item[key] for key in list(item)})
    except MemsieveError:
        raise
    except Exception as exc:
        raise InvalidInputError(f"reading {what} raised {type(exc).__name__}: {short_repr(str(exc), 80)}; "
                                "pass a dict") from exc


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
    messages_or_text = read_sequence(messages_or_text, what="the messages")
    if len(messages_or_text) == 0:
        raise InvalidTextError("nothing to add: the list is empty; pass at least one text")
    out: list[tuple[str, str | None]] = []
    for i, item in enumerate(messages_or_text):
        if isinstance(item, Mapping):
            item = read_mapping(item, what=f"message {i}")
            if "content" not in item:
                raise InvalidTextError(f"message {i} has no 'content' key; pass {{'role': ..., 'content': ...}}")
            out.append((check_text(item["content"], where=f"message {i} content", max_chars=max_chars),
                        _check_role(item.get("role"), where=f"message {i}")))
        else:
            out.append((check_text(item, where=f"item {i}", max_chars=max_chars), None))
    return out


# ---- metadata and sources ----------------------------------------------------


def _check_json_leaf(value: object, where: str) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        check_storable(value, where=where)
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise InvalidInputError(f"{where} is an integer outside the signed 64-bit range; store it as a string")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"{where} is {value!r}, which JSON cannot hold; store None or a finite number")
    else:
        raise InvalidInputError(
            f"{where} is {short_repr(value, 60)} of type {type(value).__name__}, which JSON cannot hold; "
            "convert it to a str, int, float, bool, None, list or dict (e.g. float(x) for a numpy number)"
        )


def check_metadata(metadata: object, *, where: str = "metadata") -> dict[str, Any]:
    """Validate metadata (or search filters) and return a JSON-clean deep copy.

    Accepted: a dict with str keys whose values are str, int (64-bit), finite
    float, bool, None, lists and dicts of these, nested at most
    MAX_METADATA_DEPTH levels. The walk is iterative, so depth or a value that
    contains itself cannot exhaust the stack.

    Raises:
        InvalidInputError: naming the first offending value by its path.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"{where} must be a dict, got {type(metadata).__name__}; pass e.g. {{'role': 'user'}}")
    stack: list[tuple[object, str, int]] = [(metadata, where, 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_METADATA_DEPTH:
                raise InvalidInputError(
                    f"{where} is nested deeper than {MAX_METADATA_DEPTH} levels of dicts and lists, or refers "
                    "to itself; flatten it"
                )
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise InvalidInputError(
                            f"{path} has the key {short_repr(key)} of type {type(key).__name__}; "
                            "metadata keys must be strings"
                        )
                    check_storable(key, where=f"a key of {path}")
                    stack.append((item, f"{path}[{short_repr(key, 40)}]", depth + 1))
            else:
                stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
        else:
            _check_json_leaf(value, path)
    # Round-tripping keeps what is stored identical to what filters compare
    # against (int and str subclasses become plain int and str).
    encoded = json.dumps(metadata, allow_nan=False)
    if len(encoded) > MAX_METADATA_CHARS:
        raise InvalidInputError(f"{where} is {len(encoded):,} characters of JSON, over the limit of "
                                f"{MAX_METADATA_CHARS:,}; keep large content in the text or elsewhere and store "
                                "a reference to it")
    return json.loads(encoded)


def check_sources(source: object, *, where: str = "source") -> list[str]:
    """``source`` of ``add``: None, a string, or a list of strings; returned as a list."""
    if source is None:
        return []
    items = [source] if isinstance(source, str) else source
    if not isinstance(items, (list, tuple)) or not all(isinstance(s, str) for s in items):
        raise InvalidInputError(
            f"{where} must be a string or a list of strings, got {type(source).__name__} {short_repr(source)}"
        )
    if len(items) > MAX_SOURCES:
        raise InvalidInputError(f"{where} names {len(items):,} sources, over the limit of {MAX_SOURCES:,}; "
                                "name what the memory came from, or split the write")
    long = next((i for i, s in enumerate(items) if len(s) > MAX_SOURCE_CHARS), None)
    if long is not None:
        raise InvalidInputError(f"{where} {long} has {len(items[long]):,} characters, over the limit of "
                                f"{MAX_SOURCE_CHARS:,}; a source is an id (\"session:turn\", a URL), not content")
    blank = next((i for i, s in enumerate(items) if is_blank(s)), None)
    if blank is not None:
        raise InvalidInputError(f"{where} {blank} ({short_repr(items[blank])}) is blank; pass the id of what the "
                                "memory came from, or leave the source out")
    return [check_storable(s, where=f"{where} {i}") for i, s in enumerate(items)]


def check_flag(value: object, *, where: str) -> bool:
    """A yes/no option: True or False only, so that ``purge="no"`` cannot mean yes."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{where} must be True or False, got {type(value).__name__} {short_repr(value)}")
    return value


def check_progress(progress: object, *, takes: str, args: int = 1, after: str = "") -> Any:
    """A progress callback: None, or a callable that takes ``args`` positional arguments (``takes``
    says what they are), returned wrapped so that an exception it raises becomes a
    ``CallbackError`` saying what stays done (``after``).

    Raises:
        ConfigError: not a callable, or one that cannot take ``args`` arguments; refused before any
            work starts.
    """
    if progress is None:
        return None
    if not callable(progress):
        raise ConfigError(f"progress must be a callable taking {takes}, got {type(progress).__name__} "
                          f"{short_repr(progress)}; pass a function or None")
    try:
        inspect.signature(progress).bind(*([0] * args))
    except TypeError:
        raise ConfigError(f"progress must take {takes} ({args} positional argument{'s' if args > 1 else ''}), "
                          f"but {short_repr(progress)} cannot; e.g. progress=lambda *done: print(*done)") from None
    except ValueError:  # no signature to read (some builtins): it is called as it is
        pass

    def called(*done: Any) -> Any:
        try:
            return progress(*done)
        except Exception as exc:
            raise CallbackError(f"the progress callback raised {type(exc).__name__}: {exc}; {after}") from exc

    return called


def check_layer(value: object) -> str | None:
    """The ``layer`` filter of ``rejections``: None, or one of ``memsieve.records.LAYERS``.

    Raises:
        InvalidInputError: not a str, or no decision layer: a typo ("Exact") would match nothing,
            which is not an empty answer.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"layer must be a string or None, got {type(value).__name__} {short_repr(value)}")
    layer = check_storable(value, where="layer")
    if layer not in LAYERS:
        raise InvalidInputError(f"layer {short_repr(layer)} is no decision layer; use one of {', '.join(LAYERS)} "
                                "(rejections come from 'exact', 'novelty', 'band' and 'llm')")
    return layer


# ---- limits and ids ----------------------------------------------------------


@overload
def check_limit(limit: object, *, where: str = ..., optional: Literal[False] = ...) -> int: ...
@overload
def check_limit(limit: object, *, where: str = ..., optional: bool) -> int | None: ...


def check_limit(limit: object, *, where: str = "limit", optional: bool = False) -> int | None:
    """A result limit: an int in [1, 2**63 - 1], capped at LIMIT_CEILING.

    Args:
        limit: the caller's value. ``bool`` is refused (``True`` is not 1 here),
            and so are floats, even integral ones. numpy integers are accepted.
        where: the argument's name in the message.
        optional: whether None (no limit) is allowed; it is returned as None.

    Returns:
        ``min(limit, LIMIT_CEILING)``, or None.

    Raises:
        InvalidInputError: not an int, below 1, or 2**63 and above.
    """
    if limit is None and optional:
        return None
    if isinstance(limit, bool) or not isinstance(limit, numbers.Integral):
        none = " or None for no limit" if optional else ""
        raise InvalidInputError(
            f"{where} must be a positive integer{none}, got {type(limit).__name__} {short_repr(limit)}"
        )
    value = int(limit)
    if not 1 <= value <= _INT64_MAX:
        raise InvalidInputError(f"{where} must be between 1 and 2**63 - 1, got {short_repr(value)}")
    return min(value, LIMIT_CEILING)


def check_record_id(record_id: object, *, kind: str = "memory") -> str:
    """A memory or rejection id: a str that could name a record.

    Anything else cannot name a record, so it gets the same NotFoundError as an
    unknown id (not a TypeError from the database driver).

    Args:
        record_id: the caller's value.
        kind: ``"memory"`` or ``"rejection"``.
    """
    missing = NotFoundError.no_rejection if kind == "rejection" else NotFoundError.no_memory
    if not isinstance(record_id, str):
        raise NotFoundError(
            f"no {kind} with id {short_repr(record_id)}: {kind} ids are strings, got {type(record_id).__name__}; "
            f"pass an id returned by add(), get_all() or rejections()"
        )
    if not is_storable_id(record_id):
        raise missing(record_id)
    return record_id


def is_storable_id(record_id: str) -> bool:
    """Whether a str could be a record's id (a memory's, a rejection's, a merge's): not empty, not over
    the length limit, nothing the store cannot hold (a lone surrogate, a NUL)."""
    return bool(record_id) and len(record_id) <= MAX_RECORD_ID_CHARS and not _UNSTORABLE.search(record_id)


# ---- options of Memory(...) --------------------------------------------------


def check_count(value: object, *, name: str, minimum: int = 1) -> int:
    """An integer option such as ``max_text_chars``: an int (not bool) of at least ``minimum``.

    Raises:
        ConfigError: naming the option and the value.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be an integer, got {type(value).__name__} {short_repr(value)}; "
                          f"pass e.g. {name}={max(minimum, 1) * 1000}")
    if int(value) < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {int(value)}")
    return int(value)


def check_real(value: object, *, name: str, what: str = "a number", low: float, high: float | None = None,
               low_open: bool = False, fix: str = "") -> float:
    """A number option such as ``min_sim``: any real number (numpy's too, not bool), finite, at least
    ``low`` (above it with ``low_open``) and at most ``high`` (None: no bound), as a float.

    Raises:
        ConfigError: naming the option, the value and the range; never OverflowError (an int
            too large for a float) or the value's own exception.
    """
    if high is None:
        where = f"{'>' if low_open else '>='} {low:g}"
    else:
        where = f"in {'(' if low_open else '['}{low:g}, {high:g}]"
    bad = ConfigError(f"{name} must be {what} {where}, got {type(value).__name__} {short_repr(value)}"
                      + (f"; {fix}" if fix else ""))
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise bad
    try:
        x = float(value)
    except (OverflowError, ValueError, TypeError):
        raise bad from None
    if not math.isfinite(x) or (high is not None and x > high) or x < low or (low_open and x == low):
        raise bad
    return x


def check_path(path: object) -> str:
    """The ``path`` of ``Memory``: a str or os.PathLike naming a file, ``":memory:"`` or a PostgreSQL URL.

    Raises:
        ConfigError: the wrong type, empty, or not encodable as a file name.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"path must be a str or os.PathLike, got {type(path).__name__} {short_repr(path)}; "
                          "pass a file name, ':memory:' or a postgresql:// URL")
    target = os.fspath(path)
    if not isinstance(target, str):
        raise ConfigError(f"path {short_repr(path)} is a bytes path; pass it as str (os.fsdecode(path))")
    if not target.strip():
        raise ConfigError("path is empty; pass a file name, ':memory:' or a postgresql:// URL")
    try:
        if "\x00" in target:
            raise ValueError("embedded NUL")
        os.fsencode(target)
    except (UnicodeEncodeError, ValueError):
        raise ConfigError(f"path {short_repr(target)} holds a NUL or a character the file system cannot encode; "
                          "pass a plain file name") from None
    return target


def check_embedder(embedder: Any) -> Any:
    """A custom embedder: an object with an int ``dim`` >= 1 and a callable ``embed(texts)``.

    None (the default ONNX embedder, loaded lazily) passes unchanged. Reading
    ``dim`` of an embedder whose width is known only from its model may load
    the model; the packaged embedder knows its width without loading.

    Raises:
        ConfigError: ``dim`` or ``embed`` is missing or of the wrong kind.
    """
    if embedder is None:
        return None
    name = type(embedder).__name__
    if not callable(getattr(embedder, "embed", None)):
        raise ConfigError(f"the embedder {name} has no embed(texts) method; pass an object with `dim` and `embed`")
    try:
        dim = embedder.dim
    except Exception as exc:  # a custom embedder's property may raise anything
        raise ConfigError(f"the embedder {name} has no readable `dim` ({type(exc).__name__}: {exc}); "
                          "give it an int attribute dim, the width of its vectors") from None
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or int(dim) < 1:
        raise ConfigError(f"the embedder {name} has dim={short_repr(dim)}; dim must be a positive int, "
                          "the width of the vectors embed() returns")
    return embedder


def check_router(router: Any) -> Any:
    """The ``router`` of ``Memory``: None, or an object with ``decide(query, vector)`` (a QueryRouter).

    Raises:
        ConfigError: ``router`` has no callable ``decide``.
    """
    if router is not None and not callable(getattr(router, "decide", None)):
        raise ConfigError(f"router must have a decide(query, vector) method, got {type(router).__name__}; "
                          "pass memsieve.router.QueryRouter.load(path) or None")
    return router
