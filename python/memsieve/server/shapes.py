"""The JSON schemas of the REST API: published in its OpenAPI document and checked on every request.

memsieve.server.api builds its routes' bodies and replies from these blocks,
memsieve.server.schema checks requests against them. Rules a schema states
but the checker leaves to their owners (a scope id's pattern, a text's, "name
a scope") are compared with those owners in tests/test_server_schema.py.
"""

from __future__ import annotations

from typing import Any

from memsieve.inputs import INVISIBLE_RANGES, MAX_METADATA_DEPTH, MAX_SOURCE_CHARS, MAX_SOURCES
from memsieve.scope import ID_PATTERN, MAX_ID_CHARS


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def list_of(name: str) -> dict[str, Any]:
    return {"type": "array", "items": ref(name)}


def string(description: str, **more: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **more}


#: A text the Memory takes: something visible (not only whitespace and invisible format characters), no
#: NUL (memsieve.inputs.check_text enforces it, with lone surrogates).
TEXT_PATTERN = rf"^[^\x00]*[^\s\x00{INVISIBLE_RANGES}][^\x00]*$"
#: A string a store can hold: no NUL (memsieve.inputs.check_storable).
STORABLE_PATTERN = r"^[^\x00]*$"


def text(description: str) -> dict[str, Any]:
    # Published so that a client knows the rule; the Memory's text checks enforce it.
    return string(description + " (something visible, no NUL)", pattern=TEXT_PATTERN)


def opt_string(description: str) -> dict[str, Any]:
    return {"type": ["string", "null"], "description": description}


def boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def integer(description: str, **more: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **more}


def _scope_id(description: str) -> dict[str, Any]:
    # Published so that a generated client knows the rule; memsieve.scope enforces it (ScopeError).
    return {**opt_string(description + "; ids are NFC-normalized and stripped of surrounding whitespace"),
            "minLength": 1, "maxLength": MAX_ID_CHARS, "pattern": ID_PATTERN}


SCOPE_PROPS: dict[str, Any] = {
    "user_id": _scope_id("user id of the scope"),
    "agent_id": _scope_id("agent id of the scope"),
    "run_id": _scope_id("run id of the scope"),
}
#: A body naming no scope: every id absent or null. Bodies that need a scope are published as ``not`` this.
NO_SCOPE = {"properties": {name: {"type": "null"} for name in SCOPE_PROPS}}
# Metadata and filters as memsieve.inputs.check_metadata takes them (which enforces it, nesting depth included).
METADATA = {"type": "object", "propertyNames": {"pattern": STORABLE_PATTERN},
            "additionalProperties": ref("JSONValue"),
            "description": "JSON metadata stored with the memory (see JSONValue)"}
FILTERS = {**METADATA, "description": 'metadata equality filters, e.g. {"topic": "travel"}'}
LIMIT = integer("how many, at most", minimum=1, maximum=2**63 - 1)
#: A message's role: the chat's speakers (the read path weighs the user's and the assistant's words apart).
ROLE = {"type": ["string", "null"], "enum": ["user", "assistant", "system", None],
        "description": "user, assistant or system"}
MESSAGE = {"type": "object", "additionalProperties": False, "required": ["content"],
           "properties": {"role": ROLE, "content": text("the message text")}}
#: Most items one batch request (or messages one add) may carry: a request's work stays bounded, more
#: go in more requests. At 2,000, a batch of one-item transactions took over 180 s on a busy 2-core
#: machine (the schemathesis run of tests/test_server_schema.py sends exactly that).
MAX_BATCH_ITEMS = 500
_SOURCE_ID = {"type": "string", "pattern": TEXT_PATTERN, "maxLength": MAX_SOURCE_CHARS}
SOURCE = {"anyOf": [_SOURCE_ID, {"type": "array", "items": _SOURCE_ID, "maxItems": MAX_SOURCES}, {"type": "null"}],
          "description": f"where the text came from: an id, or a list of at most {MAX_SOURCES:,} ids (each with "
                         f"something visible, at most {MAX_SOURCE_CHARS:,} characters)"}
#: An ISO 8601 time as the store reads it: a date-time, or a date alone (midnight UTC). Published with
#: formats; the Memory's time parser enforces them (InvalidInputError naming the field).
ISO_TIME = {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}


def iso_time(description: str, *, nullable: bool = True) -> dict[str, Any]:
    options = ISO_TIME["anyOf"] + ([{"type": "null"}] if nullable else [])
    # The formats say what a client should send; the server reads any ISO 8601 time Python's
    # datetime.fromisoformat reads ("2023-01-01 10:00:00", "20230101T000000Z" too).
    return {"anyOf": options, "description": description + " (ISO 8601; RFC 3339 date-time or date advised)"}


BATCH_ITEM = {
    "anyOf": [{"type": "string", "pattern": TEXT_PATTERN},
              {"type": "object", "additionalProperties": False,
               "properties": {"content": text("the text"), "text": text("the text, when content is not given"),
                              "role": ROLE,
                              "valid_from": iso_time("when it began to hold"),
                              "source": SOURCE, "metadata": METADATA},
               "oneOf": [{"required": ["content"]}, {"required": ["text"]}]}],
    "description": "a text, or an object with content (or text) and optionally role, valid_from, source, metadata"}
SEARCH_MODE = {"type": "string", "enum": ["hybrid", "dense", "keyword", "auto"],
               "description": "hybrid (default), dense, keyword, or auto (the server needs a router)"}


def body(required: list[str] | None = None, *, scoped: bool = False, **props: Any) -> dict[str, Any]:
    """A request body schema: an object of exactly these fields plus the scope ids.

    ``scoped``: the body must name a scope (a call by id need not, with an admin key). The document
    says so with ``not``; memsieve.server.api's ``Call.scope`` enforces it.
    """
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False,
                              "properties": {**props, **SCOPE_PROPS}}
    if required:
        schema["required"] = required
    if scoped:
        schema["not"] = NO_SCOPE
    return schema


def query_params(**props: Any) -> list[dict[str, Any]]:
    """The query parameters of a GET or DELETE: these plus the scope ids."""
    return [{"name": name, "in": "query", "required": False, "schema": schema}
            for name, schema in {**props, **SCOPE_PROPS}.items()]


def nullable_number(description: str) -> dict[str, Any]:
    return {"type": ["number", "null"], "description": description + " (null when not a finite number)"}


_MEMORY_FIELDS = {
    "id": {"type": "string"}, "text": {"type": "string"}, "user_id": {"type": ["string", "null"]},
    "agent_id": {"type": ["string", "null"]}, "run_id": {"type": ["string", "null"]}, "metadata": {"type": "object"},
    "source": {"type": ["string", "null"]}, "sources": {"type": "array", "items": {"type": "string"}},
    "seen_count": {"type": "integer"}, "is_active": {"type": "boolean"}, "created_at": {"type": "string"},
    "updated_at": {"type": ["string", "null"]}, "last_seen_at": {"type": ["string", "null"]},
    "valid_from": {"type": ["string", "null"]}, "valid_to": {"type": ["string", "null"]},
    "expired_at": {"type": ["string", "null"]},
    "valid_from_offset": {"type": ["integer", "null"], "description": "the UTC offset valid_from was given in, "
                                                                       "seconds east of UTC (null: UTC)"},
}

_JSON_VALUE = ref("JSONValue")
COMPONENTS: dict[str, Any] = {
    "JSONValue": {"description": "a JSON value a store can hold: no NUL in a string or a key, integers within the "
                                 f"signed 64-bit range, at most {MAX_METADATA_DEPTH} levels of lists and objects",
                  "anyOf": [{"type": "null"}, {"type": "boolean"}, {"type": "string", "pattern": STORABLE_PATTERN},
                            {"type": "number", "minimum": -(2**63), "maximum": 2**63 - 1},
                            {"type": "array", "items": _JSON_VALUE},
                            {"type": "object", "propertyNames": {"pattern": STORABLE_PATTERN},
                             "additionalProperties": _JSON_VALUE}]},
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["type", "message"],
        "properties": {"type": string("the error class, e.g. ScopeError, NotFoundError, ForbiddenError"),
                       "message": string("what was wrong, naming the value, and the fix")}}}},
    "Decision": {"type": "object", "required": ["event", "memory_id", "text", "layer", "reason"], "properties": {
        "event": {"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NOOP"]},
        "memory_id": {"type": ["string", "null"], "description": "the memory added or changed; for a NOOP the "
                                                                 "memory it was folded into"},
        "text": {"type": "string"}, "layer": {"type": "string"}, "reason": {"type": "string"},
        "novelty": nullable_number("the gate's score"), "tau": nullable_number("the scope's threshold"),
        "delta": nullable_number("the band width"), "kappa": nullable_number("the kernel concentration"),
        "nearest_id": {"type": ["string", "null"]}, "nearest_cos": nullable_number("cosine to the nearest memory"),
        "information": nullable_number("informational novelty in [0, 1]"),
        "new_terms": {"type": "array", "items": {"type": "string"}},
        "rejection_id": {"type": ["string", "null"], "description": "a NOOP's rejection: POST "
                                                                    "/v1/rejections/{id}/restore stores it after all"},
        "linked_to": {"type": ["string", "null"]}, "link_kind": {"type": ["string", "null"]},
        "added_id": {"type": ["string", "null"]}, "fault": {"type": ["string", "null"]}}},
    "Memory": {"type": "object", "required": list(_MEMORY_FIELDS), "properties": _MEMORY_FIELDS},
    "SearchResult": {"type": "object", "required": ["id", "text", "score", "date"], "properties": {
        "id": {"type": "string"}, "text": {"type": "string"}, "score": nullable_number("higher is better"),
        "date": {"type": ["string", "null"], "description": "the day the fact began to hold (valid_from, in the "
                                                            "offset it was given in)"},
        "source": {"type": ["string", "null"]}, "sources": {"type": "array", "items": {"type": "string"}},
        "metadata": {"type": "object"}, "valid_from": {"type": ["string", "null"]},
        "valid_from_offset": {"type": ["integer", "null"], "description": "seconds east of UTC valid_from was "
                                                                          "given in (null: UTC)"},
        "created_at": {"type": "string"}, "superseded_by": {"type": ["string", "null"]},
        "folded": {"type": "array", "description": "the latest texts folded into this memory that say words it "
                                                  "does not, oldest first; POST /v1/rejections/{id}/restore "
                                                  "stores one as its own memory",
                   "items": {"type": "object", "required": ["id", "text", "created_at"], "properties": {
                       "id": {"type": "string"}, "text": {"type": "string"},
                       "valid_from": {"type": ["string", "null"]},
                       "valid_from_offset": {"type": ["integer", "null"]}, "created_at": {"type": "string"},
                       "source": {"type": ["string", "null"]}, "metadata": {"type": "object"}}}}}},
    "HistoryEntry": {"type": "object", "required": ["memory_id", "event", "layer", "reason", "created_at"],
                     "properties": {"memory_id": {"type": "string"}, "event": {"type": "string"},
                                    "old_text": {"type": ["string", "null"]}, "new_text": {"type": ["string", "null"]},
                                    "layer": {"type": "string"}, "reason": {"type": "string"},
                                    "created_at": {"type": "string"}, "extra": {"type": "object"}}},
    "Rejection": {"type": "object", "required": ["id", "text", "layer", "reason", "created_at"], "properties": {
        "id": {"type": "string"}, "text": {"type": "string"}, "user_id": {"type": ["string", "null"]},
        "agent_id": {"type": ["string", "null"]}, "run_id": {"type": ["string", "null"]},
        "sources": {"type": "array", "items": {"type": "string"}}, "metadata": {"type": "object"},
        "layer": {"type": "string"}, "reason": {"type": "string"}, "created_at": {"type": "string"},
        "novelty": nullable_number("the gate's score"), "tau": nullable_number("threshold"),
        "delta": nullable_number("band"), "kappa": nullable_number("kappa"), "nearest_id": {"type": ["string", "null"]},
        "nearest_cos": nullable_number("cosine"), "restored_memory_id": {"type": ["string", "null"]},
        "restored_at": {"type": ["string", "null"]}, "information": nullable_number("informational novelty"),
        "forgotten_at": {"type": ["string", "null"], "description": "when a request to forget named its text; it "
                                                                   "then leaves search"}}},
    "Erasure": {"type": "object", "required": ["memory_ids", "pending", "why"], "properties": {
        "memory_ids": {"type": "array", "items": {"type": "string"}}, "pending": {"type": "boolean"},
        "why": {"type": ["string", "null"]}}},
    "Merge": {"type": "object", "required": ["id", "kind", "kept_id", "member_ids", "reason"], "properties": {
        "id": {"type": ["string", "null"]}, "kind": {"type": "string"}, "kept_id": {"type": "string"},
        "member_ids": {"type": "array", "items": {"type": "string"}}, "reason": {"type": "string"},
        "text": {"type": "string"}, "status": {"type": "string"}, "created_at": {"type": "string"},
        "undone_at": {"type": ["string", "null"]}}},
    "Consolidation": {"type": "object", "required": ["scope", "dry_run", "merges"], "properties": {
        "scope": {"type": "object"}, "dry_run": {"type": "boolean"}, "min_sim": {"type": "number"},
        "active_before": {"type": "integer"}, "active_after": {"type": "integer"}, "pairs": {"type": "integer"},
        "merges": list_of("Merge"),
        "refused": list_of("Merge"), "complete": {"type": "boolean"}, "clusters_left": {"type": "integer"},
        "pairs_left": {"type": "integer"}}},
}
