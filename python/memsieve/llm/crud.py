"""The LLM CRUD decision for a candidate in the band, and its safety guard.

The model sees the candidate and its nearest memories as a list numbered
``0..k-1`` and answers ADD, UPDATE(i), DELETE(i) or NOOP(i). Its answer is
checked here before anything acts on it:

* Anything malformed (invalid JSON, an unknown event, a missing or
  out-of-range index) becomes ADD with the fault recorded: the fact is never
  lost because the model misbehaved.
* An unreachable endpoint also becomes ADD, with fault ``"llm_error"``.
* A well-formed UPDATE or DELETE can still name the wrong memory (an index in
  range but wrong). :func:`guard_destructive` turns it into ADD when the
  candidate is not plausibly about the target (cosine below
  ``crud_update_min_sim``). The caller holds the vectors, so it runs the guard.

The asymmetry is deliberate: a wrong ADD costs a duplicate that consolidation
can merge, a wrong UPDATE or DELETE destroys a memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memsieve.errors import ConfigError, InvalidTextError, LLMError, LLMResponseError
from memsieve.llm.client import LLMClient
from memsieve.llm.prompts import CRUD_EVENTS, CRUD_SCHEMA, crud_messages, forget_messages

# Fault codes a CrudDecision can carry; None means the answer was used as given.
FAULTS = (
    "invalid_json",
    "index_out_of_range",
    "unknown_event",
    "missing_index",
    "llm_error",
    "guard_rejected",
)
_DESTRUCTIVE = ("UPDATE", "DELETE")


@dataclass(frozen=True)
class CrudDecision:
    """What the band does with one candidate.

    Attributes:
        event: ``"ADD"``, ``"UPDATE"``, ``"DELETE"`` or ``"NOOP"``.
        target_index: The list position the model named, or None. Kept on a
            faulted ADD for the record (it may be out of range).
        target_id: The memory id at ``target_index``, or None when the index
            was missing or out of range. On a guard-rejected ADD it names the
            memory the model wanted to change.
        text: For UPDATE, the merged memory text; None otherwise (an ADD stores
            the candidate itself).
        reason: The model's reason, or why the answer was overridden.
        fault: None, or one of :data:`FAULTS`.
        raw: The model's raw reply, if there was one.
    """

    event: str
    target_index: int | None
    target_id: str | None
    text: str | None
    reason: str
    fault: str | None
    raw: str | None


def _fallback(fault: str, reason: str, raw: str | None, index: int | None = None,
              target_id: str | None = None) -> CrudDecision:
    return CrudDecision(
        event="ADD", target_index=index, target_id=target_id, text=None,
        reason=reason, fault=fault, raw=raw,
    )


def _as_index(value: object) -> int | None:
    """Read an index the way models write it: 2, 2.0 or "2" (not True)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _check_inputs(candidate: object, neighbours: object) -> list[tuple[str, str]]:
    if not isinstance(candidate, str) or not candidate.strip():
        raise InvalidTextError(
            f"expected the candidate as a non-empty str, got {candidate!r:.80}; "
            "pass the fact text"
        )
    if not isinstance(neighbours, Sequence) or isinstance(neighbours, (str, bytes)):
        raise InvalidTextError(
            f"expected neighbours as a list of (memory_id, text) pairs, got "
            f"{type(neighbours).__name__}; pass e.g. [('m1', 'likes tea')]"
        )
    pairs: list[tuple[str, str]] = []
    for i, pair in enumerate(neighbours):
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not isinstance(pair[1], str)
        ):
            raise InvalidTextError(
                f"expected neighbour {i} as a (memory_id, text) pair, got {pair!r:.80}; "
                "pass e.g. ('m1', 'likes tea')"
            )
        pairs.append((pair[0], pair[1]))
    return pairs


def decide_crud(
    client: LLMClient, candidate: str, neighbours: list[tuple[str, str]]
) -> CrudDecision:
    """Ask the LLM what to do with ``candidate`` given its nearest memories.

    Args:
        client: The LLM client (its ``prompt_style`` picks the prompt).
        candidate: The new fact.
        neighbours: ``(memory_id, text)`` pairs, nearest first. The model sees
            only the texts, numbered ``0..k-1``.

    Returns:
        The decision. It is never an exception for model or endpoint failures:
        those give ADD with ``fault`` set. An UPDATE or DELETE still has to
        pass :func:`guard_destructive` before it is applied.

    Raises:
        InvalidTextError: ``candidate`` or ``neighbours`` are malformed (a
            caller bug, not a model fault).
    """
    pairs = _check_inputs(candidate, neighbours)
    if not pairs:
        # Nothing to compare against: no call, nothing to get wrong.
        return CrudDecision(
            event="ADD", target_index=None, target_id=None, text=None,
            reason="no stored neighbours to compare with", fault=None, raw=None,
        )
    messages = crud_messages(candidate, [t for _, t in pairs], style=client.config.prompt_style)
    return _ask(client, messages, candidate, pairs, name="crud")


def decide_forget(client: LLMClient, request: str, neighbours: list[tuple[str, str]]) -> CrudDecision:
    """Ask the LLM which memory a request to forget names: a DELETE request.

    Same contract as :func:`decide_crud` (the model sees numbered texts, a
    failure is a decision with ``fault`` set, a DELETE must still pass
    :func:`guard_destructive`); the caller treats anything but DELETE as "the
    model named nothing".
    """
    pairs = _check_inputs(request, neighbours)
    if not pairs:
        return CrudDecision(event="NOOP", target_index=None, target_id=None, text=None,
                            reason="no stored memories to forget", fault=None, raw=None)
    return _ask(client, forget_messages(request, [t for _, t in pairs]), request, pairs, name="forget")


def _ask(client: LLMClient, messages: list[dict], candidate: str, pairs: list[tuple[str, str]], *,
         name: str) -> CrudDecision:
    try:
        done = client.complete(messages, schema=CRUD_SCHEMA, name=name)
    except LLMResponseError as exc:
        return _fallback("invalid_json", f"stored as new: {exc}", getattr(exc, "raw", None))
    except LLMError as exc:
        return _fallback("llm_error", f"stored as new: {exc}", None)
    return _interpret(done.data, done.raw, candidate, pairs)


def _interpret(data: dict, raw: str, candidate: str, pairs: list[tuple[str, str]]) -> CrudDecision:
    k = len(pairs)
    reason = data.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    event = data.get("event")
    event = event.strip().upper() if isinstance(event, str) else None
    if event not in CRUD_EVENTS:
        return _fallback(
            "unknown_event",
            f"stored as new: the model answered event {data.get('event')!r}, "
            f"not one of {', '.join(CRUD_EVENTS)}",
            raw,
        )
    if event == "ADD":
        return CrudDecision(event="ADD", target_index=None, target_id=None, text=None,
                            reason=reason, fault=None, raw=raw)
    index = _as_index(data.get("index"))
    if index is None:
        return _fallback(
            "missing_index",
            f"stored as new: the model answered {event} without a usable index "
            f"(got {data.get('index')!r})",
            raw,
        )
    if not 0 <= index < k:
        return _fallback(
            "index_out_of_range",
            f"stored as new: the model answered {event} {index}, but only "
            f"memories 0..{k - 1} were shown",
            raw,
            index=index,
        )
    text = None
    if event == "UPDATE":
        merged = data.get("text")
        # A model that forgets the merged text still meant "replace with the
        # new fact"; the old text goes to history, so nothing is lost.
        text = merged.strip() if isinstance(merged, str) and merged.strip() else candidate
    return CrudDecision(event=event, target_index=index, target_id=pairs[index][0], text=text,
                        reason=reason, fault=None, raw=raw)


def guard_destructive(
    decision: CrudDecision, cos_to_target: float, min_sim: float = 0.35
) -> CrudDecision:
    """Refuse an UPDATE or DELETE whose target is not plausibly the same subject.

    Args:
        decision: A decision from :func:`decide_crud`.
        cos_to_target: Cosine between the candidate's vector and the target
            memory's vector (both L2-normalized float32, so a dot product).
        min_sim: ``crud_update_min_sim``; below it the target is treated as
            a wrong index.

    Returns:
        ``decision`` unchanged when it is not destructive or the cosine passes;
        otherwise an ADD with fault ``"guard_rejected"`` that keeps the
        rejected target for the record. A NaN cosine is a rejection.

    Raises:
        ConfigError: ``min_sim`` is not a finite number in [-1, 1].
    """
    if not isinstance(decision, CrudDecision):
        raise ConfigError(
            f"expected a CrudDecision, got {type(decision).__name__}; pass the "
            "result of decide_crud"
        )
    if isinstance(min_sim, bool) or not isinstance(min_sim, (int, float)) or not (
        math.isfinite(min_sim) and -1.0 <= min_sim <= 1.0
    ):
        raise ConfigError(
            f"crud_update_min_sim must be a finite number in [-1, 1], got {min_sim!r}; "
            "the default is 0.35"
        )
    if decision.event not in _DESTRUCTIVE:
        return decision
    cos = float(cos_to_target)
    if math.isfinite(cos) and cos >= min_sim:
        return decision
    said = f" (model's reason: {decision.reason})" if decision.reason else ""
    return replace(
        decision,
        event="ADD",
        text=None,
        fault="guard_rejected",
        reason=(
            f"guard rejected {decision.event} of memory {decision.target_index}: "
            f"cosine {cos:.3f} < crud_update_min_sim {min_sim:.2f}, stored as new{said}"
        ),
    )
