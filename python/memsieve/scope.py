"""Scopes: the (user_id, agent_id, run_id) partition of memories, gate state and rejections.

A scope is the exact triple. ``user_id="u"`` names the scope ("u", None,
None) and sees nothing written as ("u", agent "x"): there is no inheritance
between scopes, each has its own memories, gate state and rejections.

Ids are normalized before use: NFC, surrounding whitespace stripped. So
``" u"``, ``"u"`` and ``"u\\n"`` are one scope, and so are the composed and the
decomposed spellings of "José". Ids that hold a control character after
stripping (a tab inside, NUL, ESC, ...) or a lone surrogate are refused.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

from memsieve.errors import NotFoundError, ScopeError, short_repr

MAX_ID_CHARS = 256

# C0 and C1 control characters, DEL, lone surrogates (not Unicode text), and the bidirectional
# overrides and isolates, which make an id read as another in a log or a page.
_REFUSED = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
_NAMES = ("user_id", "agent_id", "run_id")

#: The ids ``Scope.of`` accepts, as a JSON Schema pattern for the documents that publish them (the REST
#: API's): a character that is not a space, and no control character but in the whitespace around the id
#: (which normalizing strips, "u\n" being "u"). NFC, the length limit
#: (MAX_ID_CHARS, after stripping) and lone surrogates (a "\ud800" escape in JSON) are not in it, since
#: not every ECMA-262 engine can name a surrogate in a pattern. Tests keep the two rules equal.
#: The invisible format characters of the Basic Multilingual Plane (Unicode's Cf: the soft hyphen,
#: zero-width space, joiners, direction marks, the BOM, ...), as regular-expression ranges that
#: Python and ECMA-262 read alike, so the REST API can publish the rule (server/shapes.TEXT_PATTERN).
#: Written out rather than read from unicodedata, so the rule is one across Python versions. A blank
#: text (memsieve.inputs.is_blank) is made of these and whitespace; an id's edges are stripped of them.
INVISIBLE_RANGES = (r"\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
                    r"\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb")
_EDGE_CLASS = rf"\s{INVISIBLE_RANGES}"
_REFUSED_CLASS = r"\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
ID_PATTERN = (rf"^[{_EDGE_CLASS}]*[^{_REFUSED_CLASS}{_EDGE_CLASS}]"
              rf"(?:[^{_REFUSED_CLASS}]*[^{_REFUSED_CLASS}{_EDGE_CLASS}])?[{_EDGE_CLASS}]*$")


def normalize_id(value: str) -> str:
    """The canonical spelling of a scope id: NFC, surrounding whitespace and invisible format
    characters (zero-width spaces, joiners, byte-order marks) stripped, so that "ana" and
    "ana\u200b" are one id.

    Idempotent: ``normalize_id(normalize_id(x)) == normalize_id(x)``.
    """
    return _EDGES.sub("", unicodedata.normalize("NFC", value))


# Whitespace and format characters (category Cf) at either end of an id.
_EDGES = re.compile(rf"^[{_EDGE_CLASS}]+|[{_EDGE_CLASS}]+$")


def _check_id(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ScopeError(f"{name} must be a string, got {type(value).__name__} {short_repr(value)}; "
                         f"pass str({short_repr(value)})")
    bad = _REFUSED.search(value)
    if bad is not None and 0xD800 <= ord(bad.group()) <= 0xDFFF:
        raise ScopeError(f"{name} {short_repr(value)} holds a lone surrogate at position {bad.start()}, "
                         "which is not Unicode text; decode the id with errors='replace' or remove it")
    norm = normalize_id(value)
    if not norm:
        raise ScopeError(f"{name} is empty (or holds only invisible characters); pass a non-empty id or leave it out")
    bad = _REFUSED.search(norm)
    if bad is not None:
        raise ScopeError(f"{name} {short_repr(value)} holds the control character {bad.group()!r}; "
                         "remove it (ids may hold any printable text)")
    if len(norm) > MAX_ID_CHARS:
        raise ScopeError(f"{name} has {len(norm)} characters, over the limit of {MAX_ID_CHARS}; "
                         "pass a shorter id (a hash of a long one, for instance)")
    return norm


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to. At least one id is set.

    Build scopes with ``Scope.of`` (which validates and normalizes); the plain
    constructor keeps ids as given and serves keys read back from a store.

    The key is the JSON encoding of the three ids, so no choice of ids can make
    two scopes collide (a separator-joined key would let ``("a|b", "")`` meet
    ``("a", "b")``).
    """

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, user_id: object = None, agent_id: object = None, run_id: object = None) -> "Scope":
        """Validate, normalize (NFC, stripped) and build a scope.

        Raises:
            ScopeError: no id is given, or an id is not a string, is empty after
                stripping, is over MAX_ID_CHARS, or holds a control character
                or a lone surrogate.
        """
        ids = [_check_id(name, value) for name, value in zip(_NAMES, (user_id, agent_id, run_id))]
        if ids == [None, None, None]:
            raise ScopeError("no scope given; pass at least one of user_id, agent_id or run_id")
        return cls(*ids)

    @classmethod
    def optional(cls, user_id: object = None, agent_id: object = None, run_id: object = None) -> "Scope | None":
        """``Scope.of`` when any id is given, None when none is (a by-id call with no scope)."""
        if user_id is None and agent_id is None and run_id is None:
            return None
        return cls.of(user_id, agent_id, run_id)

    @functools.cached_property
    def key(self) -> str:
        # Cached: every write reads it about ten times (the scope is immutable). A call builds a
        # new Scope of ids seen before, so the keys are remembered by ids too.
        return _key_of(self.user_id, self.agent_id, self.run_id)

    @property
    def slug(self) -> str:
        """A short filesystem-safe name for the scope (used for index files)."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:24]

    @classmethod
    def from_key(cls, key: str) -> "Scope":
        user_id, agent_id, run_id = json.loads(key)
        return cls(user_id, agent_id, run_id)

    def as_dict(self) -> dict[str, str | None]:
        return {"user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id}

    @property
    def is_normalized(self) -> bool:
        """Whether ``Scope.of`` of these ids gives this very scope (false for keys older versions wrote)."""
        ids = (self.user_id, self.agent_id, self.run_id)
        return ids != (None, None, None) and all(v is None or _is_normal_id(v) for v in ids)


def _plainly_normal(key: str) -> bool:
    """A quick pass for the common key: short printable ASCII (always NFC), nothing escaped by JSON (so no
    control character), no id empty or with a space at an edge (the compact encoding puts no space elsewhere)."""
    return (len(key) <= MAX_ID_CHARS and key.isascii()
            and not any(mark in key for mark in ("\\", "\x7f", '" ', ' "', '""')))


def _is_normal_id(value: object) -> bool:
    """What ``_check_id`` accepts unchanged, tested without building messages (run on every stored key)."""
    return (isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS and _EDGES.search(value) is None
            and unicodedata.is_normalized("NFC", value) and _REFUSED.search(value) is None)


def check_owner(found: Scope, wanted: Scope | None, *, missing: NotFoundError) -> None:
    """Raise ``missing`` when a scope was asked for and the record lives in another.

    Args:
        found: the scope the memory or rejection belongs to.
        wanted: the scope the caller passed, or None (no restriction).
        missing: the same error an unknown id gets, so a mismatch tells the
            caller nothing about other scopes.
    """
    if wanted is not None and found != wanted:
        raise missing


def unreachable_scopes(keys: Iterable[str]) -> list[Scope]:
    """Scopes of stored keys that ``Scope.of`` can no longer produce.

    Versions before normalization stored ids as given, so a memory written as
    (" u",) or with a decomposed "José" sits under a key that the normalized
    spelling does not reach.
    """
    stale = []
    for key in keys:
        if _plainly_normal(key):
            continue
        ids = json.loads(key)
        if not all(v is None or _is_normal_id(v) for v in ids):  # a Scope is built only for the rare stale key
            stale.append(Scope(*ids))
    return stale


def warn_unreachable_scopes(keys: Iterable[str]) -> list[Scope]:
    """Warn (UserWarning) if the store holds scopes written with unnormalized ids; return them."""
    stale = unreachable_scopes(keys)
    if stale:
        shown = ", ".join(short_repr(s.as_dict(), 120) for s in stale[:3])
        more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
        warnings.warn(
            f"{len(stale)} scope(s) in this store were written with ids that are not normalized (NFC, no "
            f"surrounding whitespace, no control characters): {shown}{more}. memsieve now normalizes ids, so "
            "calls cannot reach these scopes; read them with Memory.store and re-add their memories under the "
            "normalized ids",
            UserWarning, stacklevel=3,
        )
    return stale


@functools.lru_cache(maxsize=4096)
def _key_of(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    """A scope's key: its three ids as a compact JSON array (how every store names the scope)."""
    return json.dumps([user_id, agent_id, run_id], separators=(",", ":"), ensure_ascii=False)
