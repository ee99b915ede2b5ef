"""The ASGI app of ``memsieve serve``: a front door (request id, log line, metrics, key, body limit)
around a Starlette router of memsieve.server.api's ENDPOINTS.

Order of a request: the request id is taken from ``X-Request-Id`` (if it is a
sane token) or made; the key is checked (401 before anything else, except on
/healthz and /readyz); the body is read up to the limit (413 past it, told by
Content-Length when sent, else counted); then the route's handler runs on the
checked arguments. Every answer carries ``X-Request-Id``, and every request
leaves one log line on stderr (``request_id=... method=... path=... status=...
ms=... key=NAME``; never a body, a key or a query string). Nothing is sent
anywhere but the answer.

``/ui`` and its files (memsieve.server.ui) are answered before the key check:
the page asks for a key and sends it on every API call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
import traceback
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memsieve.aio import DEFAULT_MAX_WORKERS
from memsieve.errors import InvalidInputError, LLMError, MemsieveError, StoreError
from memsieve.scope import Scope
from memsieve.server import api, replies, ui
from memsieve.server.errors import (
    BodyTooLargeError,
    ForbiddenError,
    IncompleteBodyError,
    MethodNotAllowedError,
    RequestTimeoutError,
    RouteNotFoundError,
    error_body,
    internal_error_body,
    one_line,
    status_of,
)
from memsieve.server.deadlines import DEFAULT_READ_TIMEOUT, body_deadline
from memsieve.server.keys import KeyRing
from memsieve.server.metrics import CONTENT_TYPE, Metrics
from memsieve.server.schema import finite, parse_body, parse_query
from memsieve.server.shares import ThreadShares

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_BODY_METHODS = ("POST", "PATCH", "PUT")
#: Headers a request must not repeat: two keys, or two idempotency keys, are ambiguous, and a proxy that
#: reads the first would disagree with this server.
_ONCE = ("authorization", "idempotency-key", "content-length", "content-type")


def _check_headers(raw: Any, method: str, *, routed: bool) -> None:
    """Refuse a repeated header of ``_ONCE`` and, on a route's method that takes none, a body (a
    DELETE's body, ignored, would leave its caller believing a reason or a scope in it was read). A
    method no route takes is left to its 405."""
    names = [k.decode("latin-1").lower() for k, _ in raw]
    twice = next((n for n in _ONCE if names.count(n) > 1), None)
    if twice is not None:
        raise InvalidInputError(f"the {twice} header is given {names.count(twice)} times; send it once")
    if routed and method not in _BODY_METHODS:
        length = next((v.decode("latin-1") for k, v in raw if k.decode("latin-1").lower() == "content-length"), "")
        if (length.strip() not in ("", "0")) or "transfer-encoding" in names:
            raise InvalidInputError(f"a {method} request takes no body; put the scope and options in the query "
                                    "string")
#: How many calls of one key run at once in a server process; the key's others wait on the event loop,
#: holding no thread. Half the pool: a tenant whose calls are slow (a consolidation of a large scope, a
#: batch of long texts) or wait on one scope's lock leaves the other half to everyone else, and a
#: second call of any key never takes the last free thread (memsieve.server.shares).
KEY_SHARE = max(1, DEFAULT_MAX_WORKERS // 2)

#: A probe scope for /readyz: reading it touches the store and matches nothing a client stored (probably).
READY_PROBE = {"user_id": "memsieve:readyz"}


#: Default seconds one ``POST /v1/consolidate`` may run (``--consolidate-seconds``).
DEFAULT_CONSOLIDATE_SECONDS = 30.0


@dataclass
class ServeConfig:
    """What one server process serves.

    Attributes:
        db: SQLite path or postgresql:// URL.
        keys_path: the keys file (memsieve.server.keys).
        max_body_bytes: the request body limit (413 past it).
        read_timeout: seconds a client has for a request's head, and again for its body (408
            past either; memsieve.server.deadlines).
        create: create the SQLite file if it does not exist.
        max_cache_bytes: bound of the worker's cache of scopes' gate state (None: Memory's default).
        llm_base_url: an OpenAI-compatible endpoint for ``infer`` (fact extraction) and the band's
            CRUD step (None: no LLM; ``infer`` is then a 400 and the band follows its policy).
        llm_model: the model name sent to that endpoint.
        llm_api_key_env: the environment variable that holds its API key (never an argument,
            so that it stays out of process listings).
        router_path: a saved ``memsieve.router.QueryRouter`` for ``mode: "auto"`` (None: ``auto`` is a 400).
        consolidate_seconds: the longest one ``POST /v1/consolidate`` may run (a request's
            ``max_seconds`` may ask for less): it holds the scope's write lock and a thread.
        metrics_dir: where the workers of one service share their counters, so a scrape of any of
            them sums all (memsieve.server.metrics); set by the supervisor of ``--workers N``.
    """

    db: str
    keys_path: str
    max_body_bytes: int = api.DEFAULT_MAX_BODY_BYTES
    read_timeout: float = DEFAULT_READ_TIMEOUT
    create: bool = False
    max_cache_bytes: int | None = None
    llm_base_url: str | None = None
    llm_model: str = "local"
    llm_api_key_env: str = "OPENAI_API_KEY"
    router_path: str | None = None
    metrics_dir: str | None = None
    consolidate_seconds: float = DEFAULT_CONSOLIDATE_SECONDS


def log(line: str) -> None:
    """One line on stderr, flushed (the service's only output besides its answers)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def loggable(text: str) -> str:
    """``text`` percent-encoded but for URL characters other than space and '%': what a client
    sends cannot break the request's log line in two or add fields to it (``key=admin``)."""
    return quote(text, safe="/-._~:@!$&'()*+,;")


def json_bytes(obj: Any) -> bytes:
    """``obj`` as strict JSON (UTF-8): NaN and infinities as null, numpy scalars as numbers."""
    try:
        # Most answers are plain JSON already; walking them first through finite() cost
        # a quarter of the service's own time on a search. Only one that json refuses
        # (a NaN, an inf, a numpy scalar) takes the walk.
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = json.dumps(finite(obj), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


class State:
    """What every request of this process shares: the memory, the keys, the metrics and the document."""

    def __init__(self, config: ServeConfig, keyring: KeyRing, *, ui_key: str | None = None) -> None:
        from memsieve import __version__

        self.config = config
        self.keyring = keyring
        self.ui_key = ui_key  # memsieve ui: the ephemeral admin key the page is served with
        self.metrics = Metrics(config.metrics_dir)
        self.metrics.keys = len(keyring)
        self.memory: Any = None  # an AsyncMemory once the lifespan has opened it
        self.replies: replies.Replies | None = None  # the kept answers of idempotent writes
        self.shares = ThreadShares(threads=DEFAULT_MAX_WORKERS, per_key=KEY_SHARE)  # by key digest
        self.document = api.openapi_document(version=__version__, max_body_bytes=config.max_body_bytes,
                                             router=config.router_path is not None,
                                             llm=config.llm_base_url is not None)

    def route_of(self, method: str, path: str) -> tuple[api.Endpoint | None, bool]:
        """(the endpoint of this method and path, whether some endpoint has this path)."""
        found = api.endpoints_on(path)
        # HEAD is GET without the body (the server leaves it out): a load balancer's
        # HEAD /healthz is the GET's check, with the GET's key rule.
        wanted = "GET" if method == "HEAD" else method
        return next((ep for ep in found if ep.method == wanted), None), bool(found)

    def reload_keys(self) -> None:
        """SIGHUP: reread the keys file; a bad file keeps the keys in force."""
        failed = self.keyring.reload()
        self.metrics.reloaded(failed is None, len(self.keyring))
        if failed is None:
            log(f"memsieve serve: reloaded {len(self.keyring)} key(s) from {self.keyring.path}")
        else:
            log(f"memsieve serve: kept the {len(self.keyring)} key(s) in force, the reload failed: {failed}")

    def share_of(self, key: Any, *, lengthy: bool = False) -> contextlib.AbstractAsyncContextManager[Any]:
        """The key's share of the memory's threads (memsieve.server.shares: ``KEY_SHARE`` calls at once,
        never the last free thread for a second one, nor for a lengthy call); none for a public route."""
        if key is None:
            return contextlib.nullcontext()
        return self.shares.of(key.sha256, lengthy=lengthy)

    async def ready(self) -> None:
        if self.memory is None:
            raise StoreError("the store is not open yet; retry in a moment")
        # On a thread of its own, not the memory's pool: a readiness probe must not queue behind the
        # tenants' calls, or a busy server would be taken out of service for being busy.
        await asyncio.to_thread(self.memory.memory.get_all, limit=1, **READY_PROBE)


async def _send_json(send: Any, status: int, payload: Any, headers: list[tuple[bytes, bytes]]) -> None:
    data = json_bytes(payload)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


class FrontDoor:
    """ASGI middleware: request id, auth, body limit, the log line and the metrics of every request."""

    def __init__(self, app: Any, state: State) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        given = headers.get("x-request-id", "")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        method, path = scope["method"], scope["path"]
        is_ui = ui.is_ui_path(path)
        endpoint, path_known = self.state.route_of(method, path)
        route = "/ui" if is_ui else (endpoint.path if endpoint is not None
                                     else ("(method not allowed)" if path_known else "(unknown)"))
        seen: dict[str, Any] = {"status": 500, "key": "-"}
        rid_header = (b"x-request-id", request_id.encode())

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                message = dict(message, headers=[*message.get("headers", []), rid_header])
            await send(message)

        body_read = False
        try:
            try:
                if self.state.ui_key is not None and not ui.host_is_loopback(headers.get("host")):
                    raise ForbiddenError("memsieve ui answers only requests to a loopback name (127.0.0.1, localhost "
                                         "or [::1]); open the address it printed")
                if is_ui:
                    await self._page(send_with_id, method, path)
                    return
                _check_headers(scope.get("headers", ()), method, routed=endpoint is not None)
                key = None
                if endpoint is None or not endpoint.public:
                    key = self.state.keyring.authenticate(headers.get("authorization"))
                    seen["key"] = key.name
                raw = await self._read_body(receive, headers) if method in _BODY_METHODS else b""
                body_read = True
                idem = replies.check_key(headers.get("idempotency-key"))
            except MemsieveError as exc:
                extra = [(b"www-authenticate", b"Bearer")] if status_of(exc) == 401 else []
                # A body left unread (a 401 before it is read), or cut short, leaves the
                # connection's stream at no request's start: the answer closes it.
                if (isinstance(exc, (BodyTooLargeError, RequestTimeoutError, IncompleteBodyError))
                        or (not body_read and _declares_body(headers))):
                    extra.append((b"connection", b"close"))
                await _send_json(send_with_id, status_of(exc), error_body(exc), extra)
                return
            scope["memsieve"] = {"key": key, "body": raw, "request_id": request_id, "idempotency_key": idem}
            await self.app(scope, _replay(raw), send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            self.state.metrics.observe(method, route, seen["status"], elapsed)
            log(f"memsieve serve: request_id={request_id} method={loggable(method)} path={loggable(path)} "
                f"status={seen['status']} "
                f"ms={elapsed * 1000:.1f} key={seen['key']}")

    async def _page(self, send: Any, method: str, path: str) -> None:
        """The inspector's files (GET or HEAD, no key: the page asks for one)."""
        if method not in ("GET", "HEAD"):
            raise MethodNotAllowedError(f"method {method} is not allowed on {path}; the page takes GET")
        found = ui.response(path, ui_key=self.state.ui_key)
        if found is None:
            raise RouteNotFoundError(f"no file {path!r}; the inspector is at /ui")
        status, headers, body = found
        await ui.send(send, status, headers, body, head=method == "HEAD")

    async def _read_body(self, receive: Any, headers: dict[str, str]) -> bytes:
        limit = self.state.config.max_body_bytes
        declared = headers.get("content-length")
        too_large = BodyTooLargeError(f"the body is over the limit of {limit} bytes; send less (split a batch into "
                                      "several requests) or start the server with a larger --max-body-bytes")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise too_large
        chunks, size = [], 0
        wait = self.state.config.read_timeout
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            message = await body_deadline(receive, deadline, read_timeout=wait)
            if message["type"] == "http.disconnect":
                # A body cut short is not the request the client meant: nothing of it is done.
                raise IncompleteBodyError(f"the client went away after {size} bytes of the body; nothing was done")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _declares_body(headers: dict[str, str]) -> bool:
    """Whether a request's head says a body follows (a length above 0, or chunks)."""
    length = headers.get("content-length", "0").strip()
    return "transfer-encoding" in headers or not (length.isdigit() and int(length) == 0)


def _replay(raw: bytes) -> Any:
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def _endpoint(ep: api.Endpoint, state: State) -> Any:
    """The Starlette endpoint of one route: check the arguments, call the handler, answer JSON.

    A write with an Idempotency-Key runs through memsieve.server.replies: once per key."""

    def arguments(request: Request, front: dict[str, Any]) -> dict[str, Any]:
        if ep.method in _BODY_METHODS:
            args = parse_body(front.get("body", b""), ep.body)
            parse_query(request.scope.get("query_string", b""), [])
            return args
        return parse_query(request.scope.get("query_string", b""), ep.query)

    async def answer(request: Request, front: dict[str, Any], args: dict[str, Any]) -> tuple[int, bytes]:
        request_id = front.get("request_id", "-")
        try:
            call = api.Call(memory=state.memory, key=front.get("key"), args=args, path=dict(request.path_params),
                            metrics=state.metrics, readiness=state.ready, document=state.document,
                            consolidate_seconds=state.config.consolidate_seconds)
            assert ep.handler is not None
            async with state.share_of(call.key, lengthy=ep.lengthy):
                result = await ep.handler(call)
            return 200, json_bytes(result)
        except MemsieveError as exc:
            if isinstance(exc, LLMError):  # the client gets a plain message; the operator the whole one
                log(f"memsieve serve: request_id={request_id} the LLM failed: {one_line(exc)}")
            return status_of(exc), json_bytes(error_body(exc))
        except Exception:
            return 500, _failed(request_id)

    async def endpoint(request: Request) -> Response:
        front = request.scope.get("memsieve", {})
        try:
            key = front.get("key")
            if ep.admin:
                assert key is not None
                key.require_admin(ep.path)
            if ep.text:  # /metrics: it takes no query parameter, as every route refuses one it does not know
                parse_query(request.scope.get("query_string", b""), [])
                return Response(state.metrics.render(), media_type=CONTENT_TYPE)
            args = arguments(request, front)  # bad input is a 400 before any key is claimed
            idem = front.get("idempotency_key")
            if idem is None or not ep.writes or state.replies is None:
                status, body = await answer(request, front, args)
                return Response(body, status_code=status, media_type="application/json")
            assert key is not None
            # The key must grant the scope now, as on a first run: a kept answer quotes texts, and
            # a grant taken away since (a SIGHUP) must not leave it readable.
            api.Call(memory=state.memory, key=key, args=args, path={}, metrics=state.metrics).scope(by_id=True)
            query = request.scope.get("query_string", b"")
            status, body, replayed = await state.replies.run(
                # Kept per key, by its digest: a new key given an old key's name gets none of its answers.
                key_name=key.sha256.hex(), idem_key=idem, scope_key=_scope_key(args),
                request_print=replies.fingerprint(ep.method, request.scope["path"], query, front.get("body", b"")),
                produce=lambda: answer(request, front, args))
            return Response(body, status_code=status, media_type="application/json",
                            headers=replies.REPLAYED if replayed else None)
        except MemsieveError as exc:
            return Response(json_bytes(error_body(exc)), status_code=status_of(exc), media_type="application/json")
        except Exception:
            return Response(_failed(front.get("request_id", "-")), status_code=500, media_type="application/json")

    return endpoint


def _failed(request_id: str) -> bytes:
    """The 500 body of an unexpected failure, its traceback logged under the request id."""
    log(f"memsieve serve: request_id={request_id} failed:\n" + traceback.format_exc().rstrip())
    return json_bytes(internal_error_body(request_id))


def _scope_key(args: dict[str, Any]) -> str | None:
    """The scope a write's checked arguments name (its kept answer is deleted by a purge there), or None."""
    try:
        found = Scope.optional(**{k: args.get(k) for k in api.SCOPE_IDS})
    except MemsieveError:  # a malformed id: the handler answers 400, and nothing is kept
        return None
    return None if found is None else found.key


_EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"]


async def _not_allowed(request: Request) -> Response:
    raise HTTPException(405)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        allowed = api.methods_of(request.url.path)
        err: MemsieveError = MethodNotAllowedError(f"method {request.method} is not allowed on {request.url.path}; "
                                                   f"it takes {', '.join(allowed)} (see /openapi.json)")
        # Starlette's own Allow names only the first route that matched the path, not every method of it.
        headers = {"Allow": ", ".join(allowed)}
    else:
        err = RouteNotFoundError(f"no route {request.url.path!r}; the routes are listed in /openapi.json")
        headers = {}
    return Response(json_bytes(error_body(err)), status_code=status_of(err), media_type="application/json",
                    headers=headers)


def build_app(config: ServeConfig, memory: Any, *, keyring: KeyRing | None = None,
              ui_key: str | None = None) -> FrontDoor:
    """The service's ASGI app: ``memory`` (a memsieve.Memory) served by ``config``'s rules.

    The app's lifespan closes the memory on shutdown, after the calls in
    flight have finished. ``app.state.reload_keys`` rereads the keys file
    (memsieve.server.run calls it on SIGHUP). ``ui_key``: ``memsieve ui``'s
    ephemeral admin key, which the page at /ui is served with; the app then
    answers only requests whose Host is a loopback name.

    Raises:
        ConfigError: the keys file is missing or invalid.
    """
    from memsieve import AsyncMemory

    state = State(config, keyring or KeyRing(config.keys_path), ui_key=ui_key)
    state.memory = AsyncMemory.wrap(memory)
    state.replies = replies.Replies(memory.store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await state.memory.close()  # waits for the calls in flight, then closes the store

    # Literal paths first, then a 405 for their other methods, then the templates: Starlette takes the
    # first route that matches path and method, and GET /v1/memories/batch is not a call by id.
    ordered = sorted(api.ENDPOINTS, key=lambda ep: "{" in ep.path)
    routes = [Route(ep.path, _endpoint(ep, state), methods=[ep.method]) for ep in ordered if "{" not in ep.path]
    routes += [Route(path, _not_allowed, methods=_EVERY_METHOD) for path in api.SHADOWING_PATHS]
    routes += [Route(ep.path, _endpoint(ep, state), methods=[ep.method]) for ep in ordered if "{" in ep.path]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: _http_error})
    # "/v1/search/" is an unknown route (404 JSON), not a redirect built from the client's Host header.
    app.router.redirect_slashes = False
    return FrontDoor(app, state)
