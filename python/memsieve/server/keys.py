"""API keys of the REST service: the keys file, what each key grants, and keygen.

The keys file is JSON, one entry per key, never holding a key in clear::

    {"keys": [
      {"name": "ana-app", "sha256": "<64 hex digits>", "users": ["ana"]},
      {"name": "planner", "sha256": "...",
       "scopes": [{"user_id": "bob", "agent_id": "planner", "run_id": null}]},
      {"name": "ops", "sha256": "...", "admin": true}
    ]}

- ``users``: every scope whose ``user_id`` is one of these (any agent, any run).
- ``scopes``: exactly these (user_id, agent_id, run_id) triples (a missing id is null).
- ``admin``: every scope, calls by id without a scope, and ``/metrics``.

A request's key is hashed with SHA-256 and compared with every entry's digest
by ``hmac.compare_digest``. ``add_key`` (``memsieve serve keygen``) makes a
new key, appends its entry with an atomic rewrite (mode 0600, under a lock
file) and returns the key, which is shown once and stored nowhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from memsieve.errors import ConfigError, ScopeError, short_repr
from memsieve.scope import Scope
from memsieve.server.errors import ForbiddenError, UnauthorizedError

_HEX64 = re.compile(r"[0-9a-f]{64}")
_ENTRY_KEYS = {"name", "sha256", "users", "scopes", "admin", "created_at"}
_SCOPE_KEYS = ("user_id", "agent_id", "run_id")
#: New keys start with this, so a leaked one is easy to recognise (and to grep for).
KEY_PREFIX = "msk_"


def digest(key: str) -> bytes:
    """The SHA-256 digest of a key, as the keys file stores it (in hex)."""
    return hashlib.sha256(key.encode("utf-8")).digest()


@dataclass(frozen=True)
class KeyEntry:
    """One key of the keys file: its name, its digest and what it grants."""

    name: str
    sha256: bytes
    admin: bool = False
    users: frozenset[str] = frozenset()
    scopes: frozenset[tuple[str | None, str | None, str | None]] = frozenset()

    def grants(self, user_id: str | None, agent_id: str | None, run_id: str | None) -> bool:
        """Whether this key may touch the scope (user_id, agent_id, run_id)."""
        if self.admin:
            return True
        if user_id is not None and user_id in self.users:
            return True
        return (user_id, agent_id, run_id) in self.scopes

    def check(self, scope: dict[str, str | None]) -> None:
        """Raise ForbiddenError unless this key grants ``scope`` (a dict of the three ids)."""
        if not self.grants(scope.get("user_id"), scope.get("agent_id"), scope.get("run_id")):
            named = ", ".join(f"{k}={v!r}" for k, v in scope.items() if v is not None) or "no ids"
            raise ForbiddenError(f"the key {self.name!r} does not grant the scope ({named}); use a key whose entry "
                                 "in the keys file lists this user or this exact scope")

    def require_admin(self, what: str) -> None:
        if not self.admin:
            raise ForbiddenError(f"{what} needs an admin key, and {self.name!r} is not one; make one with "
                                 "`memsieve serve keygen --keys KEYS.json --admin`")


def _fail(path: str, text: str) -> ConfigError:
    return ConfigError(f"the keys file {path!r} {text}")


def _normal_ids(path: str, name: str, **ids: str | None) -> tuple[str | None, str | None, str | None]:
    """A granted scope's ids as ``Scope.of`` normalizes them; a malformed id fails the file."""
    try:
        scope = Scope.of(**ids)
    except ScopeError as exc:
        raise _fail(path, f"has key {name!r} with a scope id the memory refuses: {exc}") from None
    return scope.user_id, scope.agent_id, scope.run_id


def parse_keys(data: Any, *, path: str) -> list[KeyEntry]:
    """The entries of a parsed keys file, checked strictly.

    Raises:
        ConfigError: the file is not of the documented shape (named, with the fix).
    """
    if not isinstance(data, dict) or set(data) != {"keys"} or not isinstance(data["keys"], list):
        raise _fail(path, 'must be a JSON object {"keys": [...]}; make one with `memsieve serve keygen`')
    out: list[KeyEntry] = []
    names: set[str] = set()
    for i, entry in enumerate(data["keys"]):
        where = f"entry {i}"
        if not isinstance(entry, dict):
            raise _fail(path, f"has {where} that is not an object")
        unknown = sorted(set(entry) - _ENTRY_KEYS)
        if unknown:
            raise _fail(path, f"has {where} with unknown field(s) {unknown}; use {sorted(_ENTRY_KEYS)}")
        name, hexdigest = entry.get("name"), entry.get("sha256")
        if not isinstance(name, str) or not name:
            raise _fail(path, f"has {where} without a non-empty string 'name'")
        if name in names:
            raise _fail(path, f"names two keys {name!r}; give each key its own name")
        names.add(name)
        if not isinstance(hexdigest, str) or not _HEX64.fullmatch(hexdigest):
            raise _fail(path, f"has key {name!r} whose 'sha256' is not 64 lowercase hex digits (the SHA-256 of "
                              "the key, never the key itself)")
        admin = entry.get("admin", False)
        if not isinstance(admin, bool):
            raise _fail(path, f"has key {name!r} whose 'admin' is not true or false")
        users = entry.get("users", [])
        if not isinstance(users, list) or not all(isinstance(u, str) and u for u in users):
            raise _fail(path, f"has key {name!r} whose 'users' is not a list of non-empty strings")
        # Ids as the memory spells them (NFC, stripped), so " ana" in the file grants the scope "ana".
        users = [_normal_ids(path, name, user_id=u)[0] for u in users]
        scopes = entry.get("scopes", [])
        if not isinstance(scopes, list):
            raise _fail(path, f"has key {name!r} whose 'scopes' is not a list")
        triples = set()
        for j, scope in enumerate(scopes):
            if (not isinstance(scope, dict) or not set(scope) <= set(_SCOPE_KEYS)
                    or not all(v is None or (isinstance(v, str) and v) for v in scope.values())
                    or all(scope.get(k) is None for k in _SCOPE_KEYS)):
                raise _fail(path, f"has key {name!r} whose scope {j} is not an object of user_id/agent_id/run_id "
                                  "(non-empty strings or null, at least one given)")
            triples.add(_normal_ids(path, name, **{k: scope.get(k) for k in _SCOPE_KEYS}))
        if not admin and not users and not triples:
            raise _fail(path, f"has key {name!r} that grants nothing; give it 'users', 'scopes' or 'admin': true")
        out.append(KeyEntry(name=name, sha256=bytes.fromhex(hexdigest), admin=admin, users=frozenset(users),
                            scopes=frozenset(triples)))  # type: ignore[arg-type]
    return out


def read_keys(path: str) -> list[KeyEntry]:
    """Read and check the keys file at ``path``.

    Raises:
        ConfigError: missing, unreadable, not JSON, or not of the documented shape.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror or exc}); create it with "
                          f"`memsieve serve keygen --keys {path} --user ID`") from None
    except UnicodeDecodeError as exc:
        raise _fail(path, f"is not UTF-8 (byte {exc.start}); save it as UTF-8 JSON or make a new one with "
                          "`memsieve serve keygen`") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(path, f"is not JSON ({exc.msg} at line {exc.lineno}); fix it or make a new one with "
                          "`memsieve serve keygen`") from None
    except RecursionError:
        raise _fail(path, "nests arrays or objects too deeply to read; it should hold one object with a "
                          "\"keys\" list, as `memsieve serve keygen` writes it") from None
    except ValueError as exc:  # an integer past Python's digit limit, which json reports as a plain ValueError
        raise _fail(path, f"holds a value JSON cannot be read into ({short_repr(str(exc), 80)}); fix it or make "
                          "a new one with `memsieve serve keygen`") from None
    return parse_keys(data, path=path)


class KeyRing:
    """The keys a server accepts, reread from their file by ``reload()`` (on SIGHUP).

    A reload that fails keeps the keys in force and returns the error, so a
    typo in the file cannot lock every client out.
    """

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self._entries: tuple[KeyEntry, ...] = tuple(read_keys(self.path))

    @classmethod
    def ephemeral(cls, name: str, key: str) -> "KeyRing":
        """One admin key held in this process only (``memsieve ui``): no file, nothing to reload."""
        ring = cls.__new__(cls)
        ring.path = ""
        ring._entries = (KeyEntry(name=name, sha256=digest(key), admin=True),)
        return ring

    def __len__(self) -> int:
        return len(self._entries)

    def reload(self) -> ConfigError | None:
        """Reread the file; on failure keep the current keys and return the error."""
        if not self.path:  # an ephemeral ring has no file
            return None
        try:
            self._entries = tuple(read_keys(self.path))
        except ConfigError as exc:
            return exc
        return None

    def authenticate(self, authorization: str | None) -> KeyEntry:
        """The entry of the key in an ``Authorization: Bearer KEY`` header value.

        Every entry's digest is compared (``hmac.compare_digest``), so the time
        taken does not say which entry, if any, came close.

        Raises:
            UnauthorizedError: no header, not a bearer token, or an unknown key.
        """
        if not authorization:
            raise UnauthorizedError("no API key: send 'Authorization: Bearer KEY' with a key from "
                                    "`memsieve serve keygen`")
        scheme, _, key = authorization.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            raise UnauthorizedError("the Authorization header is not 'Bearer KEY'; send the key as a bearer token")
        given = digest(key)
        found = None
        for entry in self._entries:
            if hmac.compare_digest(given, entry.sha256) and found is None:
                found = entry
        if found is None:
            raise UnauthorizedError("this API key is not valid here (unknown, or removed from the keys file); "
                                    "ask the operator for a key")
        return found


# ---- keygen ------------------------------------------------------------------

_file_lock = threading.Lock()


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on ``PATH.lock`` while the keys file is rewritten (POSIX; a thread lock elsewhere)."""
    with _file_lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def grant_entry(*, name: str, key: str, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None, exact: bool = False, admin: bool = False) -> dict[str, Any]:
    """The keys-file entry for ``key``: admin, every scope of ``user_id``, or one exact triple.

    ``user_id`` alone grants every scope of that user unless ``exact``; with
    ``agent_id`` or ``run_id`` the grant is the exact triple.

    Raises:
        ConfigError: no grant named, admin with a scope, or an empty id.
    """
    ids: dict[str, str | None] = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    if any(v is not None for v in ids.values()):
        try:
            scope = Scope.of(**ids)
        except ScopeError as exc:
            raise ConfigError(f"the key's scope is not one the memory accepts: {exc}") from None
        # Stored as the memory spells them, so the grant matches the scope a request names.
        ids = {"user_id": scope.user_id, "agent_id": scope.agent_id, "run_id": scope.run_id}
        user_id = scope.user_id
    entry: dict[str, Any] = {"name": name, "sha256": digest(key).hex(),
                             "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if admin:
        if any(v is not None for v in ids.values()):
            raise ConfigError("an admin key grants every scope; pass --admin without --user/--agent/--run")
        entry["admin"] = True
    elif all(v is None for v in ids.values()):
        raise ConfigError("a key must grant something: pass --user ID (every scope of that user), add --agent/--run "
                          "(or --exact) for one exact scope, or --admin")
    elif user_id is not None and agent_id is None and run_id is None and not exact:
        entry["users"] = [user_id]
    else:
        entry["scopes"] = [ids]
    return entry


def add_key(path: str, *, name: str | None = None, **grant: Any) -> tuple[str, dict[str, Any]]:
    """Make a new key, add its entry to the keys file at ``path`` (created if missing) and return (key, entry).

    The file is rewritten atomically (a temp file in the same folder, fsynced,
    then renamed over it) with mode 0600, under a lock, so two keygens never
    lose each other's entry and a crash never leaves half a file.

    Raises:
        ConfigError: the existing file is invalid, the name is taken, or the grant is malformed.
    """
    path = str(path)
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    with _locked(path):
        if os.path.exists(path):
            current = read_keys(path)  # refuse to rewrite a file we cannot read
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        else:
            current, data = [], {"keys": []}
        name = name if name is not None else f"key-{digest(key).hex()[:8]}"
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"--name must be a non-empty string, got {name!r}")
        if any(e.name == name for e in current):
            raise ConfigError(f"the keys file {path!r} has a key named {name!r} already; pass another --name")
        entry = grant_entry(name=name, key=key, **grant)
        data["keys"].append(entry)
        parse_keys(data, path=path)  # the file we write is one we can read
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=folder)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return key, entry
