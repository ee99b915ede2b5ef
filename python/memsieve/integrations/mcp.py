"""``memsieve mcp``: a local, offline MCP server over one memsieve store.

Built on the official ``mcp`` Python SDK (2.x, the ``memsieve[mcp]`` extra).
The tools' arguments are JSON-schema'd from their signatures and every result
is a JSON object (also sent as text, for clients that read only text). The
first four tools keep OpenMemory's names (``add_memories``, ``search_memory``,
``list_memories``, ``delete_memories``), so clients written for it work
unchanged. The arguments are strict: one a tool does not take is refused with
a tool error naming it and the ones the tool takes (every input schema says
``additionalProperties: false``), so a misspelled ``userid`` or ``dryrun`` is
never silently dropped.

Scope: the server is pinned to the scope it is started with
(``--user/--agent/--run``). A call may name that scope or none; a call naming
any other scope is refused with a tool error before anything is read, so a
client cannot read or erase another user's memories. Only a server started
with ``unsafe_any_scope`` (``--unsafe-any-scope``) lets each call name any
scope; reads by id are then confined to the scope the call names. A server
with neither refuses to start.

Over HTTP every request must carry ``Authorization: Bearer TOKEN`` (the scheme
in any case, as RFC 7235 has it); the token comes from a file
(``--token-file``) or ``MEMSIEVE_MCP_TOKEN`` and is compared in constant time.
A request without it gets 401 and reaches no tool.

The server holds one ``Memory`` (through ``memsieve.AsyncMemory``, so a slow
embedding never stalls the protocol) and relies on its locking: writes of one
scope are serialized, as in the library. A ``MemsieveError`` comes back as an
MCP tool error (``isError``) carrying memsieve's message, and so does an
argument that fails its schema (pydantic's message); any other failure of a
call is a tool error with the SDK's generic message, its traceback logged on
stderr. The server keeps serving either way.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import json
import os
import signal
import threading
from collections.abc import Iterator
from typing import Annotated, Any

import anyio
import pydantic_core
from pydantic import ConfigDict, Field, StrictBool, StrictInt, model_validator
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from memsieve.aio import AsyncMemory
from memsieve.errors import ConfigError, MemsieveError, ScopeError
from memsieve.scope import Scope
from memsieve.integrations import require_extra
from memsieve.memory import Memory
from memsieve.read.render import render_results, result_date
from memsieve.write.retired import refuse_if_retired

require_extra("mcp", extra="mcp")

from mcp.server.mcpserver import MCPServer  # noqa: E402  (after the extra check, for its message)
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.mcpserver.tools import Tool  # noqa: E402
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

JSONDict = dict[str, Any]
Rows = list[JSONDict]


# What each tool returns: named, so the outputSchema a client lists says which keys to expect.
class Decisions(TypedDict):
    decisions: Rows


class Found(TypedDict):
    results: Rows
    context: str


class Memories(TypedDict):
    memories: Rows


class Deleted(TypedDict):
    deleted: Rows


class OneMemory(TypedDict):
    memory: JSONDict


class History(TypedDict):
    history: Rows


class Rejections(TypedDict):
    rejections: Rows


class Removed(TypedDict):
    removed: Rows
    folds: Rows
    purged: bool
    dry_run: bool


class Erased(TypedDict):
    erasure: JSONDict

UserId = Annotated[str | None, Field(description="user id of the scope (default: the server's --user)")]
AgentId = Annotated[str | None, Field(description="agent id of the scope (default: the server's --agent)")]
RunId = Annotated[str | None, Field(description="run id of the scope (default: the server's --run)")]
MemoryId = Annotated[str, Field(description="a memory id, as returned by add_memories or list_memories")]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
REMOVES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def _plain(obj: Any) -> Any:
    """``obj`` as strict JSON values: a NaN or infinite score becomes null (as in the CLI's --json), a
    numpy scalar a number, anything else unknown its str()."""
    return json.loads(pydantic_core.to_json(obj, inf_nan_mode="null", fallback=_scalar))


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") and callable(value.item) else str(value)


class MemoryTools:
    """The tool bodies: one AsyncMemory and the server's default scope.

    Args:
        memory: the store every call reads and writes.
        user_id: default user id of the scope.
        agent_id: default agent id of the scope.
        run_id: default run id of the scope.
    """

    def __init__(self, memory: AsyncMemory, *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, unsafe_any_scope: bool = False) -> None:
        self.memory = memory
        self.defaults: JSONDict = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        self.unsafe_any_scope = check_scope_policy(self.defaults, unsafe_any_scope=unsafe_any_scope)

    def scope(self, user_id: str | None, agent_id: str | None, run_id: str | None) -> JSONDict:
        """The call's ids when it names any, else the server's scope; another scope only if the server allows it.

        Raises:
            ScopeError: the call names a scope other than the one the server is pinned to.
        """
        given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        if not any(v is not None for v in given.values()):
            return dict(self.defaults)
        if not self.unsafe_any_scope and not _same_scope(given, self.defaults):
            raise ScopeError(f"this server serves only the scope {_scope_text(self.defaults)}, and the call named "
                             f"{_scope_text(given)}; leave the ids out, or start the server with "
                             "--unsafe-any-scope to let every client read and erase every scope")
        return given

    async def add_memories(self, text: Annotated[str, Field(description="what to remember")],
                           infer: Annotated[StrictBool, Field(description="extract facts with the configured LLM first")]
                           = False,
                           valid_from: Annotated[str | None, Field(description="ISO time the fact began to hold "
                                                                   "(default: now)")] = None,
                           user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None) -> Decisions:
        """Remember text. The write gate decides: each decision says its event (ADD, UPDATE, DELETE or NOOP),
        the layer that decided, why, and for a NOOP the rejection id that restore_rejection takes."""
        if infer and self.memory.memory.llm is None:
            raise ConfigError("infer=true needs an LLM and this server's memory has none (`memsieve mcp` serves "
                              "without one); call add_memories with infer=false: the write gate decides alone")
        decisions = await self.memory.add(text, infer=infer, valid_from=valid_from,
                                          **self.scope(user_id, agent_id, run_id))
        return {"decisions": _plain([d.to_dict() for d in decisions])}

    async def search_memory(self, query: Annotated[str, Field(description="the question or text to match")],
                            limit: Annotated[StrictInt, Field(description="how many results, at most")] = 10,
                            user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None,
                            reference_time: Annotated[str | None, Field(
                                description="the question's now, an ISO time with its UTC offset "
                                            "(2024-06-03T09:00:00+09:00): 'yesterday', 'last month' are read "
                                            "against it; default: the call's time in UTC")] = None) -> Found:
        """Search memories, best first. Each result has its date (when the fact began to hold); `context` is the
        results rendered as prompt lines, one dated line per memory."""
        hits = await self.memory.search(query, limit=limit, reference_time=reference_time,
                                        **self.scope(user_id, agent_id, run_id))
        results = [dict(h.to_dict(), date=result_date(h)) for h in hits]
        return {"results": _plain(results), "context": render_results(hits)}

    async def list_memories(self, limit: Annotated[StrictInt | None, Field(description="how many, at most (none: all)")]
                            = 100, user_id: UserId = None, agent_id: AgentId = None,
                            run_id: RunId = None) -> Memories:
        """List the scope's active memories."""
        items = await self.memory.get_all(limit=limit, **self.scope(user_id, agent_id, run_id))
        return {"memories": _plain([it.to_dict() for it in items])}

    async def delete_memories(self, memory_ids: Annotated[list[str], Field(description="ids of the memories")],
                              user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None) -> Deleted:
        """Delete memories (soft: they leave search and stay readable with get_memory and memory_history).
        Every id is checked first, so an unknown id deletes nothing."""
        scope = self.scope(user_id, agent_id, run_id)
        merges = await self.memory.merges(**scope)
        for memory_id in memory_ids:
            await self.memory.get(memory_id, **scope)
            refuse_if_retired(merges, memory_id, "deleted")  # or the ids before it would be deleted alone
        deleted = [await self.memory.delete(memory_id, **scope) for memory_id in memory_ids]
        return {"deleted": _plain([it.to_dict() for it in deleted])}

    async def get_memory(self, memory_id: MemoryId, user_id: UserId = None, agent_id: AgentId = None,
                         run_id: RunId = None) -> OneMemory:
        """One memory by id, active or deleted."""
        item = await self.memory.get(memory_id, **self.scope(user_id, agent_id, run_id))
        return {"memory": _plain(item.to_dict())}

    async def update_memory(self, memory_id: MemoryId, text: Annotated[str, Field(description="the new text")],
                            user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None) -> OneMemory:
        """Replace a memory's text; the old text stays in its history."""
        item = await self.memory.update(memory_id, text, **self.scope(user_id, agent_id, run_id))
        return {"memory": _plain(item.to_dict())}

    async def memory_history(self, memory_id: MemoryId, user_id: UserId = None, agent_id: AgentId = None,
                             run_id: RunId = None) -> History:
        """Every change of a memory, oldest first, each with its layer and reason."""
        rows = await self.memory.history(memory_id, **self.scope(user_id, agent_id, run_id))
        return {"history": _plain([h.to_dict() for h in rows])}

    async def list_rejections(self, since: Annotated[str | None, Field(description="ISO time; only later ones")]
                              = None, limit: Annotated[StrictInt | None, Field(description="how many, at most")] = 100,
                              user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None) -> Rejections:
        """What the write gate did not store, and why; each can be stored after all with restore_rejection."""
        rows = await self.memory.rejections(since=since, limit=limit, **self.scope(user_id, agent_id, run_id))
        return {"rejections": _plain([r.to_dict() for r in rows])}

    async def restore_rejection(self, rejection_id: Annotated[str, Field(description="id from list_rejections")],
                                user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None) -> OneMemory:
        """Store a rejected candidate as a memory after all, bypassing the gate."""
        item = await self.memory.restore(rejection_id, **self.scope(user_id, agent_id, run_id))
        return {"memory": _plain(item.to_dict())}

    async def forget(self, what: Annotated[str, Field(description='the request, e.g. "forget my old address"')],
                     purge: Annotated[StrictBool, Field(description="erase text and embedding, leaving a tombstone")]
                     = False, dry_run: Annotated[StrictBool, Field(description="only list what would be removed")] = False,
                     user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None) -> Removed:
        """Remove the memories a request names (soft delete, or purge); returns them as they are afterwards, and
        the texts folded into memories (shown beside them in search) that it named and took out of search."""
        removed = await self.memory.forget(what, purge=purge, dry_run=dry_run,
                                           **self.scope(user_id, agent_id, run_id))
        return {"removed": _plain([it.to_dict() for it in removed]),
                "folds": _plain([r.to_dict() for r in removed.folds]), "purged": purge and not dry_run,
                "dry_run": dry_run}

    async def purge_memory(self, memory_id: MemoryId, reason: Annotated[str, Field(description="recorded in its "
                           "history")] = "purged by the user", user_id: UserId = None, agent_id: AgentId = None,
                           run_id: RunId = None) -> Erased:
        """Erase one memory's text and embedding everywhere (active or deleted, and what merges retired into it),
        keeping a tombstone; `erasure.pending` says whether some bytes may still be in the store's files."""
        done = await self.memory.purge(memory_id, reason=reason, **self.scope(user_id, agent_id, run_id))
        return {"erasure": _plain(done.to_dict())}


#: Tool name -> its annotations; the order is the order clients list them in.
TOOLS: dict[str, ToolAnnotations] = {
    "add_memories": WRITES, "search_memory": READ_ONLY, "list_memories": READ_ONLY,
    "delete_memories": REMOVES, "get_memory": READ_ONLY, "update_memory": WRITES,
    "memory_history": READ_ONLY, "list_rejections": READ_ONLY, "restore_rejection": WRITES, "forget": REMOVES,
    "purge_memory": REMOVES,
}


def _as_tool_error(body: Any) -> Any:
    """``body`` with a MemsieveError turned into a ToolError, so the client gets memsieve's message.

    ``functools.wraps`` keeps the body's name, docstring and signature, which
    the SDK reads to name, describe and JSON-schema the tool.
    """

    @functools.wraps(body)
    async def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return await body(*args, **kwargs)
        except MemsieveError as exc:
            raise ToolError(" ".join(str(exc).split())) from exc  # one line, whatever a driver put in it

    return tool


class _StrictArguments(ArgModelBase):
    """Mixed into the SDK's pydantic model of a tool's arguments: every argument it has no field for is refused.

    The SDK's model ignores unknown keys, so ``userid="bob"`` or ``dryrun=False``
    would be dropped without a word. This forbids extra keys (the JSON schema
    then says ``additionalProperties: false``) and, before any field is
    validated, names the unknown ones and the ones the tool takes; the SDK turns
    that ValidationError into a tool error, as for any argument failing its schema.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _refuse_unknown(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = [field.alias or name for name, field in cls.model_fields.items()]
            unknown = sorted(str(key) for key in data if key not in known)
            if unknown:
                raise PydanticCustomError("unknown_argument", "unknown argument(s) {unknown}; the arguments are "
                                          "{known}", {"unknown": str(unknown), "known": str(known)})
        return data


def _strict_arguments(arg_model: type[ArgModelBase]) -> type[ArgModelBase]:
    """``arg_model`` refusing unknown arguments (same name, fields and schema, plus additionalProperties false)."""
    return type(arg_model.__name__, (arg_model, _StrictArguments), {"__module__": arg_model.__module__})


def _strict_tool(tool: Tool) -> Tool:
    """``tool`` with strict arguments: its input schema and its validation refuse unknown arguments."""
    arg_model = _strict_arguments(tool.fn_metadata.arg_model)
    return tool.model_copy(update={"fn_metadata": tool.fn_metadata.model_copy(update={"arg_model": arg_model}),
                                   "parameters": arg_model.model_json_schema(by_alias=True)})


def build_server(tools: MemoryTools) -> MCPServer:
    """An MCPServer whose tools are ``tools``' methods (named as in TOOLS), with strict arguments."""
    registered = [_strict_tool(Tool.from_function(_as_tool_error(getattr(tools, name)), name=name,
                                                  annotations=annotations, structured_output=True))
                  for name, annotations in TOOLS.items()]
    return MCPServer("memsieve", instructions=(
        "Long-term memory. add_memories stores what is worth remembering (the write gate refuses near-duplicates "
        "and says why); search_memory before answering questions about the user; list_rejections and "
        "restore_rejection audit and undo the gate."), log_level="WARNING", tools=registered)


def _same_scope(given: JSONDict, served: JSONDict) -> bool:
    """Whether a call's ids name the served scope, as the library reads ids (NFC, edges stripped):
    "José" typed composed or decomposed, or "me " for "me", is the one scope."""
    try:
        return Scope.of(**given) == Scope.of(**served)
    except ScopeError:
        return False  # ids the library refuses name no scope, and the served one least of all


def _scope_text(ids: JSONDict) -> str:
    named = ", ".join(f"{k}={v!r}" for k, v in ids.items() if v is not None)
    return f"({named})" if named else "(no ids)"


def check_scope_policy(defaults: JSONDict, *, unsafe_any_scope: object) -> bool:
    """Whether calls may name any scope; a server with no scope of its own must say so explicitly.

    Raises:
        ConfigError: no scope and no ``unsafe_any_scope``, or a non-bool flag.
    """
    if not isinstance(unsafe_any_scope, bool):
        raise ConfigError(f"unsafe_any_scope must be True or False, got {unsafe_any_scope!r}")
    if not unsafe_any_scope and all(v is None for v in defaults.values()):
        raise ConfigError("memsieve mcp needs the scope it serves: pass --user/--agent/--run (every other scope "
                          "is then refused), or --unsafe-any-scope to let every client read and erase every scope")
    if any(v is not None for v in defaults.values()):
        Scope.of(**defaults)  # ScopeError now, for a blank or malformed id, not on every call once serving
    return unsafe_any_scope


#: The environment variable that may hold the HTTP transport's bearer token.
TOKEN_ENV = "MEMSIEVE_MCP_TOKEN"
#: Shorter tokens are refused: a guessable token is no authentication.
MIN_TOKEN_CHARS = 16


def load_token(token_file: str | None) -> str:
    """The HTTP bearer token: the first line of ``token_file``, else ``$MEMSIEVE_MCP_TOKEN``.

    Raises:
        ConfigError: no token, an unreadable file, or a token under 16 characters.
    """
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.readline().strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the token file {token_file!r}: {exc.strerror or exc}; "
                              "pass --token-file with a readable file holding the token") from None
        where = f"the token file {token_file!r}"
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
        where = f"${TOKEN_ENV}"
        if not token:
            raise ConfigError(f"--http needs a bearer token: write one to a file and pass --token-file PATH, or set "
                              f"{TOKEN_ENV}; clients then send 'Authorization: Bearer TOKEN' (make one with "
                              "python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{where} holds a token of {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
                          "(python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    return token


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer TOKEN``.

    The header is read as scheme and token: the scheme is matched in any case
    (``bearer`` too, RFC 7235, as ``memsieve serve`` does), the token with
    ``hmac.compare_digest``, whose time does not depend on where the two first
    differ. A refused request gets 401 with a JSON body and never reaches the
    MCP app.
    """

    def __init__(self, app: Any, *, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    def _accepts(self, authorization: bytes) -> bool:
        scheme, _, token = authorization.partition(b" ")
        token_ok = hmac.compare_digest(token.strip(b" \t"), self._expected)
        return scheme.lower() == b"bearer" and token_ok

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = value
                break
        if self._accepts(given):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized", "message": "send 'Authorization: Bearer TOKEN' with the "
                           "server's token"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def check_port(port: Any) -> int:
    """``port`` itself if it is a TCP port number."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError(f"--http takes a TCP port in 1..65535, got {port!r}")
    return port


class _Stopped(Exception):
    """SIGTERM or SIGINT arrived: stop serving, close the store, exit quietly."""


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGINT into _Stopped while serving.

    uvicorn catches both for a graceful shutdown, then re-raises the signal
    through the handler it found; with the default one the process would die
    there, before the store is closed (its search indexes persisted).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(memory: Memory, *, http_port: int | None = None, user_id: str | None = None,
          agent_id: str | None = None, run_id: str | None = None, unsafe_any_scope: bool = False,
          token: str | None = None) -> None:
    """Serve ``memory`` until the client hangs up (stdio) or the process is stopped; then close it.

    Args:
        memory: the store to serve (closed when serving ends).
        http_port: None for stdio; else streamable HTTP on 127.0.0.1 at
            ``http://127.0.0.1:PORT/mcp``.
        user_id: default user id of the scope.
        agent_id: default agent id of the scope.
        run_id: default run id of the scope.
        unsafe_any_scope: let each call name any scope (else every scope but
            the server's is refused).
        token: the bearer token every HTTP request must carry (required with
            ``http_port``; see ``load_token``).
    """
    port = None if http_port is None else check_port(http_port)
    check_scope_policy({"user_id": user_id, "agent_id": agent_id, "run_id": run_id},
                       unsafe_any_scope=unsafe_any_scope)
    if port is not None and (not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS):
        raise ConfigError(f"serving HTTP needs a bearer token of at least {MIN_TOKEN_CHARS} characters "
                          "(memsieve.integrations.mcp.load_token)")

    async def run() -> None:
        amem = AsyncMemory.wrap(memory)
        server = build_server(MemoryTools(amem, user_id=user_id, agent_id=agent_id, run_id=run_id,
                                          unsafe_any_scope=unsafe_any_scope))
        try:
            if port is None:
                await server.run_stdio_async()
            else:
                await _serve_http(server, port=port, token=str(token))
        finally:
            await amem.close()

    with _stop_on_signals(), contextlib.suppress(_Stopped):
        anyio.run(run)


async def _serve_http(server: MCPServer, *, port: int, token: str) -> None:
    """Streamable HTTP on 127.0.0.1:PORT/mcp behind the bearer token."""
    import uvicorn

    app = BearerAuth(server.streamable_http_app(host="127.0.0.1"), token=token)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()
