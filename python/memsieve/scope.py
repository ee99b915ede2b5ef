"""Scopes: the (user_id, agent_id, run_id) partition of memories, gate state and rejections."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from memsieve.errors import ScopeError

MAX_ID_CHARS = 256


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to. At least one id is set.

    The key is the JSON encoding of the three ids, so no choice of ids can make
    two scopes collide (a separator-joined key would let ``("a|b", "")`` meet
    ``("a", "b")``).
    """

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, user_id: object = None, agent_id: object = None, run_id: object = None) -> "Scope":
        """Validate and build a scope.

        Raises:
            ScopeError: no id is given, or an id is not a non-empty string.
        """
        ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        for name, value in ids.items():
            if value is None:
                continue
            if not isinstance(value, str):
                raise ScopeError(f"{name} must be a string, got {type(value).__name__} {value!r}; pass str({value!r})")
            if not value.strip():
                raise ScopeError(f"{name} is empty; pass a non-empty id or leave it out")
            if len(value) > MAX_ID_CHARS or "\x00" in value:
                raise ScopeError(
                    f"{name} must be at most {MAX_ID_CHARS} characters with no NUL byte, got {len(value)} characters"
                )
        if user_id is None and agent_id is None and run_id is None:
            raise ScopeError("no scope given; pass at least one of user_id=, agent_id= or run_id=")
        return cls(user_id, agent_id, run_id)  # type: ignore[arg-type]

    @property
    def key(self) -> str:
        return json.dumps([self.user_id, self.agent_id, self.run_id], separators=(",", ":"), ensure_ascii=False)

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
