"""Strict checking of request bodies and query strings against the routes' own JSON schemas.

The schemas the OpenAPI document publishes (memsieve.server.shapes) are the ones
requests are checked against, so the two cannot drift. Only the part of JSON
Schema those schemas use is understood: ``type`` (one or a list), ``properties``,
``required``, ``additionalProperties: false``, ``items``, ``enum``,
``minimum``/``exclusiveMinimum``/``maximum``, ``minItems``/``maxItems`` and ``anyOf``. No value is coerced
but one: ``"yes"`` is not true and ``1`` is not true, while ``5.0`` is the integer 5, as JSON
Schema says (a top-level integer field is handed on as an int).

The document also states rules this module leaves to the layer that owns them, so that their
messages and error types stay that layer's: a scope id's ``pattern`` and length and a body's
``not`` (no scope named) are memsieve.scope's and Call.scope's (ScopeError), a text's ``pattern``
(not blank) is the Memory's (InvalidTextError), and add's ``oneOf`` (text or messages) its
handler's, as is a batch item's (content or text: memsieve.write.candidates).
tests/test_server_schema.py runs schemathesis against a live server to keep both equal.
"""

from __future__ import annotations


import json
import re
from typing import Any
from urllib.parse import parse_qsl

from memsieve.errors import InvalidInputError, short_repr
from memsieve.jsonable import strict_values

JSONType = str

_NAMES = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
          "number": "a number", "boolean": "true or false", "null": "null"}


def json_type(value: Any) -> JSONType:
    """The JSON type name of a parsed JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is(value: Any, kind: str) -> bool:
    got = json_type(value)
    # JSON Schema's integer is a number with no fraction: 5.0 is one (parse_body hands it on as 5).
    return (got == kind or (kind == "number" and got == "integer")
            or (kind == "integer" and got == "number" and float(value).is_integer()))


def _expected(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "type" not in schema and "anyOf" in schema:
        return " or ".join(dict.fromkeys(_expected(s) for s in schema["anyOf"]))
    if schema.get("format") in _FORMATS:
        return _FORMATS[schema["format"]]
    return " or ".join(_NAMES.get(k, k) for k in _kinds(schema)) or "a value"


#: What a string of a format is, in a message: "as_of must be an ISO 8601 time or null".
_FORMATS = {"date-time": "an ISO 8601 time (a string)", "date": "an ISO 8601 time (a string)"}


def check(value: Any, schema: dict[str, Any], *, where: str) -> None:
    """Raise InvalidInputError naming ``where`` unless ``value`` fits ``schema``."""
    if "anyOf" in schema:
        failed: list[tuple[dict[str, Any], InvalidInputError]] = []
        for option in schema["anyOf"]:
            try:
                check(value, option, where=where)
                break
            except InvalidInputError as exc:
                failed.append((option, exc))
        else:
            # The option of the value's own JSON type says what is wrong with it (an unknown
            # field of an item, one source too many), not merely which types would do.
            same = [exc for option, exc in failed if any(_is(value, k) for k in _kinds(option))]
            if len(same) == 1:
                raise same[0]
            raise InvalidInputError(f"{where} must be {_expected(schema)}, got {json_type(value)} "
                                    f"{short_repr(value)}")
    kinds = _kinds(schema)
    if kinds:
        if not any(_is(value, k) for k in kinds):
            fix = (f"send it as a bare JSON {json_type(json.loads(value))}, without quotes"
                   if isinstance(value, str) and _bare(value) else f"send {_expected(schema)}")
            raise InvalidInputError(f"{where} must be {_expected(schema)}, got {json_type(value)} "
                                    f"{short_repr(value)}; {fix}")
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidInputError(f"{where} must be {_expected(schema)}, got {short_repr(value)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise InvalidInputError(f"{where} must be at least {schema['minimum']}, got {short_repr(value)}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise InvalidInputError(f"{where} must be above {schema['exclusiveMinimum']}, got {short_repr(value)}")
        if "maximum" in schema and value > schema["maximum"]:
            raise InvalidInputError(f"{where} must be at most {schema['maximum']}, got {short_repr(value)}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise InvalidInputError(f"{where} must hold at least {schema['minItems']} item(s), got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise InvalidInputError(f"{where} must hold at most {schema['maxItems']} items, got {len(value)}; "
                                    "send them in several requests")
        if "items" in schema:
            for i, item in enumerate(value):
                check(item, schema["items"], where=f"{where}[{i}]")
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        if schema.get("additionalProperties") is False:
            unknown = sorted(k for k in value if k not in props)
            if unknown:
                raise InvalidInputError(f"{where} has unknown field(s) {unknown}; the fields are {sorted(props)}")
        missing = [k for k in schema.get("required", ()) if k not in value]
        if missing:
            raise InvalidInputError(f"{where} lacks the required field(s) {missing}")
        for key, sub in props.items():
            if key in value:
                check(value[key], sub, where=f"field {key!r}" if where == "the body" else f"{where}.{key}")


def _kinds(schema: dict[str, Any]) -> list[str]:
    kinds = schema.get("type")
    return [kinds] if isinstance(kinds, str) else list(kinds or [])


def _bare(text: str) -> bool:
    """Whether ``text`` is a JSON number, true, false or null written as a string (``"3"``, ``"true"``)."""
    try:
        return json_type(json.loads(text)) in ("integer", "number", "boolean", "null")
    except ValueError:
        return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: The deepest nesting a body may have: far above any request's shape (a filter
#: with a few levels of and/or), far below what recursion in Python's json and in
#: the checks below can take.
MAX_DEPTH = 64


def depth_of(value: Any) -> int:
    """How deeply arrays and objects nest in a parsed JSON value (a scalar is 0), read without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def parse_body(raw: bytes, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The request body as a dict checked against ``schema`` (an empty body is ``{}``).

    Raises:
        InvalidInputError: not UTF-8 JSON, not an object, NaN/Infinity, or not fitting the schema.
    """
    if not raw.strip():
        body: Any = {}
    else:
        try:
            body = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant, object_pairs_hook=_no_twice)
        except UnicodeDecodeError:
            raise InvalidInputError("the body is not UTF-8; send JSON encoded as UTF-8") from None
        except (json.JSONDecodeError, ValueError) as exc:
            text = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InvalidInputError(f"the body is not valid JSON ({text}); send one JSON object") from None
        except RecursionError:
            raise InvalidInputError("the body nests arrays or objects too deeply to read; "
                                    f"send JSON nested at most {MAX_DEPTH} levels") from None
    if depth_of(body) > MAX_DEPTH:
        raise InvalidInputError(f"the body nests arrays or objects more than {MAX_DEPTH} levels deep; "
                                "send a flatter JSON object")
    if not isinstance(body, dict):
        raise InvalidInputError(f"the body must be a JSON object, got {json_type(body)}; send {{...}}")
    if schema is not None:
        check(body, schema, where="the body")
        for key, sub in schema.get("properties", {}).items():
            if isinstance(body.get(key), float) and "integer" in _kinds(sub):
                body[key] = int(body[key])
    elif body:
        raise InvalidInputError(f"this route takes no body, got field(s) {sorted(body)}")
    return body


def parse_query(query_string: bytes, params: list[dict[str, Any]]) -> dict[str, Any]:
    """The query string as typed values, by the route's documented query parameters.

    A boolean must be ``true`` or ``false``, an integer decimal digits; an
    unknown or repeated parameter is refused.

    Raises:
        InvalidInputError: naming the parameter and what it must be.
    """
    known = {p["name"]: p["schema"] for p in params if p["in"] == "query"}
    try:
        pairs = parse_qsl(query_string.decode("utf-8"), keep_blank_values=True, strict_parsing=False,
                          errors="strict")
    except UnicodeDecodeError:
        raise InvalidInputError("the query string is not UTF-8; percent-encode UTF-8 text") from None
    out: dict[str, Any] = {}
    for name, text in pairs:
        if name not in known:
            hint = f"the parameters are {sorted(known)}" if known else "this route takes none"
            raise InvalidInputError(f"unknown query parameter {name!r}; {hint}")
        if name in out:
            raise InvalidInputError(f"query parameter {name!r} is given twice; give it once")
        out[name] = _query_value(name, text, known[name])
    return out


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose every key is given once: a key given twice ("user_id" for two scopes) is
    ambiguous, and a proxy that reads the first would disagree with a server that reads the last."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {short_repr(key)} is given twice in one object; give it once")
        out[key] = value
    return out


# An optional minus and at most 19 ASCII digits: what int() reads, and no more ("--5", "+5", "٥" are none).
_INTEGER = re.compile(r"-?[0-9]{1,19}")


def _query_value(name: str, text: str, schema: dict[str, Any]) -> Any:
    kinds = _kinds(schema) or ["string"]
    where = f"query parameter {name!r}"
    if "boolean" in kinds:
        if text not in ("true", "false"):
            raise InvalidInputError(f"{where} must be true or false, got {short_repr(text)}")
        value: Any = text == "true"
    elif "integer" in kinds:
        if not _INTEGER.fullmatch(text):
            raise InvalidInputError(f"{where} must be an integer, got {short_repr(text)}")
        value = int(text)
    else:
        value = text
    check(value, {k: v for k, v in schema.items() if k != "type"}, where=where)
    return value


finite = strict_values  # the one rule (memsieve.jsonable), under the name the app uses
