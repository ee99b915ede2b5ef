"""The errors of the REST service, and the HTTP status of every memsieve error.

The service answers every failure as ``{"error": {"type": NAME, "message": TEXT}}``:
``type`` is the exception's class name (``ScopeError``, ``NotFoundError``, ...)
and ``message`` its one-line text. ``status_of`` is the one mapping from an
exception to its status; nothing else in the service picks a status for an
error.
"""

from __future__ import annotations

from typing import Any

from memsieve.consolidation import MergeConflictError
from memsieve.errors import (
    ClosedError,
    ConfigError,
    DtypeError,
    EmbedderError,
    InvalidInputError,
    InvalidVectorError,
    LLMError,
    MemsieveError,
    NotFoundError,
    ScopeError,
    ShapeError,
    StoreError,
    with_notes,
)


class UnauthorizedError(MemsieveError):
    """The request carries no API key, or one the keys file does not list (401)."""


class ForbiddenError(MemsieveError):
    """The key is valid but does not grant the scope (or the admin right) the request needs (403)."""


class BodyTooLargeError(InvalidInputError):
    """The request body is over the server's limit (413)."""


class RequestTimeoutError(InvalidInputError):
    """The request's head or body did not arrive within the server's --read-timeout (408)."""


class MalformedRequestError(InvalidInputError):
    """The bytes received are not an HTTP/1.1 request (400, from the protocol; the connection closes)."""


class HeadTooLargeError(InvalidInputError):
    """The request's head (request line and headers) is over the server's bound (431)."""


class IncompleteBodyError(InvalidInputError):
    """The client went away before its request's body was whole: nothing of it is done (400)."""


class RouteNotFoundError(MemsieveError, LookupError):
    """No route has this path (404)."""


class MethodNotAllowedError(MemsieveError):
    """The path exists, but not with this method (405)."""


class ReplyPendingError(MemsieveError):
    """A request with this Idempotency-Key is still running (409)."""


class ReplyMismatchError(InvalidInputError):
    """This Idempotency-Key was used for another request (422)."""


#: (class, status), most specific first: the first class an error is an instance of decides.
STATUSES: tuple[tuple[type[BaseException], int], ...] = (
    (BodyTooLargeError, 413),
    (RequestTimeoutError, 408),
    (ReplyMismatchError, 422),
    (ReplyPendingError, 409),
    (UnauthorizedError, 401),
    (ForbiddenError, 403),
    (RouteNotFoundError, 404),
    (MethodNotAllowedError, 405),
    (NotFoundError, 404),
    (MergeConflictError, 409),
    (ScopeError, 400),
    (InvalidInputError, 400),   # InvalidTextError and every other malformed argument
    (ConfigError, 400),          # an option this server cannot honour (mode='auto' without a router, infer without an LLM)
    (DtypeError, 400),
    (ShapeError, 400),
    (InvalidVectorError, 400),
    (LLMError, 502),             # the configured LLM endpoint failed
    (ClosedError, 503),          # the server is shutting down
    (StoreError, 503),           # the database did not answer
    (EmbedderError, 500),
)


def status_of(exc: BaseException) -> int:
    """The HTTP status for ``exc``: 500 for anything not in STATUSES (an unexpected failure)."""
    for cls, status in STATUSES:
        if isinstance(exc, cls):
            return status
    return 500


def one_line(text: object) -> str:
    """``text`` on one line (a driver's message may carry line breaks)."""
    return " ".join(str(text).split())


#: What a client is told when the server's LLM failed: its message names the LLM's address and model,
#: which are the operator's to know (the server logs it under the request id).
LLM_FAILED = ("the server's LLM failed; retry later, or without infer; the server's log has the detail "
              "under this request's X-Request-Id")


def error_body(exc: BaseException) -> dict[str, dict[str, Any]]:
    """The JSON body of a MemsieveError: its class name and message with its notes (an LLMError's
    kept in the log), and for a batch that failed part way, how many of its items were committed
    (``committed``: they stay stored; the client goes on with the rest)."""
    message = LLM_FAILED if isinstance(exc, LLMError) else with_notes(exc)
    body: dict[str, Any] = {"type": type(exc).__name__, "message": message}
    committed = getattr(exc, "committed", None)
    if type(committed) is int:
        body["committed"] = committed
    return {"error": body}


def internal_error_body(request_id: str) -> dict[str, dict[str, str]]:
    """The body of an unexpected failure: no traceback, the request id to find it in the server's log."""
    return {"error": {"type": "InternalError",
                      "message": f"the server failed on request {request_id}; its log on stderr has the traceback "
                                 "under that request id"}}
