"""The REST API's routes: each one's handler and its OpenAPI operation, side by side, in one table.

``ENDPOINTS`` is the only list of routes. The app (memsieve.server.app) mounts
exactly these, the OpenAPI document (``openapi_document``) is built from
exactly these, and a request's body and query string are checked against the
very schemas the document publishes (memsieve.server.schema). A route cannot
be served undocumented, nor documented and missing.

Scope: every route that reads or writes memories names its scope with
``user_id``/``agent_id``/``run_id``, in the JSON body of a POST or PATCH and in
the query string of a GET or DELETE. The key must grant that scope (403
otherwise, before anything is read). Routes by id pass the scope on to
``Memory``'s scoped calls, so a memory of any other scope is answered exactly as
an unknown id (404). Only an admin key may leave the scope out of a call by id.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.routing import compile_path

from memsieve.scope import Scope
from memsieve.errors import ConfigError, InvalidInputError, ScopeError, StoreError
from memsieve.read.render import result_date
from memsieve.records import LAYERS
from memsieve.server.keys import KeyEntry
from memsieve.server.shapes import (
    BATCH_ITEM, COMPONENTS, FILTERS, LIMIT, MAX_BATCH_ITEMS, MESSAGE, METADATA, SEARCH_MODE, SOURCE, body, boolean,
    integer,
    iso_time, list_of, nullable_number, opt_string, query_params, ref, string, text,
)

SCOPE_IDS = ("user_id", "agent_id", "run_id")

#: How many scopes GET /v1/scopes lists unless ``limit`` says otherwise (each one costs a stats call).
DEFAULT_SCOPES_LIMIT = 100
#: A scope no client writes, for the store size when a key grants no scope that holds anything.
READY_SCOPE = {"user_id": "memsieve:readyz"}

#: The body size limit unless ``--max-body-bytes`` says otherwise.
DEFAULT_MAX_BODY_BYTES = 1 << 20


# ---- the call a handler gets ----------------------------------------------------------------------------------

@dataclass
class Call:
    """One request as a handler sees it: checked arguments, the key, the memory and the metrics."""

    memory: Any  # memsieve.AsyncMemory
    key: KeyEntry | None
    args: dict[str, Any]  # the JSON body (POST, PATCH) or the query string (GET, DELETE), checked
    path: dict[str, str]
    metrics: Any
    readiness: Callable[[], Awaitable[None]] | None = None
    document: dict[str, Any] | None = None
    consolidate_seconds: float | None = None  # the server's bound on one consolidation (None: none)

    def scope(self, *, by_id: bool = False) -> dict[str, Any]:
        """The scope the request names, after checking the key grants it.

        ``by_id``: a call by id, where an admin key may name no scope at all
        (then ``{}``: the memory is found in whichever scope holds it).

        Raises:
            ScopeError: no scope named (400), or a malformed id.
            ForbiddenError: the key does not grant the scope (403).
        """
        ids = {k: self.args.get(k) for k in SCOPE_IDS}
        if all(v is None for v in ids.values()):
            if by_id and self.key is not None and self.key.admin:
                return {}
            raise ScopeError("no scope given; name user_id, agent_id and/or run_id (in the JSON body, or in the "
                             "query string of a GET or DELETE)")
        scope = Scope.of(**ids)  # a malformed id is bad input (400), whatever the key
        assert self.key is not None
        # The key is asked about the scope the memory will use: " ana" and "ana\n" are "ana".
        named = {"user_id": scope.user_id, "agent_id": scope.agent_id, "run_id": scope.run_id}
        self.key.check(named)
        return named

    def pick(self, *names: str) -> dict[str, Any]:
        """The named arguments the request gave (an omitted one keeps Memory's default)."""
        return {n: self.args[n] for n in names if n in self.args}

    def check_served(self) -> None:
        """Refuse ``infer: true`` on a server with no LLM and ``mode: "auto"`` on one with no router,
        with the server's fix (the library's names ``Memory(llm=...)``, which a client cannot pass)."""
        memory = self.memory.memory
        if self.args.get("infer") is True and memory.llm is None:
            raise ConfigError("infer=true needs an LLM and this server has none; send infer=false, or start "
                                    "the server with `memsieve serve --llm-base-url URL --llm-model NAME`")
        if self.args.get("mode") == "auto" and memory.router is None:
            raise ConfigError("mode 'auto' needs a query router and this server has none; send mode "
                                    "'hybrid', 'dense' or 'keyword', or start the server with "
                                    "`memsieve serve --router ROUTER.json`")


def _dicts(rows: list[Any]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in rows]


def _merge_row(row: Any) -> dict[str, Any]:
    return {"id": row.id, "kind": row.kind, "kept_id": row.kept_id, "member_ids": list(row.member_ids),
            "reason": row.reason, "created_at": row.created_at, "undone_at": row.undone_at}


# ---- handlers -------------------------------------------------------------------------------------------------

async def add_memory(call: Call) -> dict[str, Any]:
    has_text, has_messages = "text" in call.args, "messages" in call.args
    if has_text == has_messages:
        raise InvalidInputError("send exactly one of 'text' (a string) or 'messages' (a list of "
                                '{"role": ..., "content": ...}), got ' + ("both" if has_text else "neither"))
    what = call.args["text"] if has_text else call.args["messages"]
    call.check_served()
    decisions = await call.memory.add(what, **call.pick("infer", "metadata", "valid_from", "source"), **call.scope())
    call.metrics.decided([d.event for d in decisions])
    return {"decisions": _dicts(decisions)}


async def add_batch(call: Call) -> dict[str, Any]:
    lists = await call.memory.add_many(call.args["items"], **call.pick("metadata", "batch_size"), **call.scope())
    call.metrics.decided([d.event for ds in lists for d in ds])
    return {"decisions": [_dicts(ds) for ds in lists]}


async def list_memories(call: Call) -> dict[str, Any]:
    items = await call.memory.get_all(**call.pick("include_inactive", "limit"), **call.scope())
    return {"memories": _dicts(items)}


async def get_memory(call: Call) -> dict[str, Any]:
    item = await call.memory.get(call.path["id"], **call.scope(by_id=True))
    return {"memory": item.to_dict()}


async def update_memory(call: Call) -> dict[str, Any]:
    item = await call.memory.update(call.path["id"], call.args["text"], **call.pick("reason"),
                                    **call.scope(by_id=True))
    return {"memory": item.to_dict()}


async def delete_memory(call: Call) -> dict[str, Any]:
    item = await call.memory.delete(call.path["id"], **call.pick("reason"), **call.scope(by_id=True))
    return {"memory": item.to_dict()}


async def memory_history(call: Call) -> dict[str, Any]:
    scope = call.scope(by_id=True)
    rows = await call.memory.history(call.path["id"], **scope)
    links = await call.memory.links(call.path["id"], **scope)
    return {"history": _dicts(rows), "links": [{"id": other, "kind": kind, "cosine": cos} for other, kind, cos in links]}


async def purge_memory(call: Call) -> dict[str, Any]:
    done = await call.memory.purge(call.path["id"], **call.pick("reason"), **call.scope(by_id=True))
    return {"erasure": done.to_dict()}


async def compact(call: Call) -> dict[str, Any]:
    # Store-wide, so an admin key's: it rewrites every table a purge erases from.
    done = await call.memory.compact()
    return {"erasure": done.to_dict()}


async def search(call: Call) -> dict[str, Any]:
    call.check_served()
    hits = await call.memory.search(call.args["query"], **call.pick("limit", "filters", "as_of", "mode",
                                                                     "current_only", "reference_time"), **call.scope())
    return {"results": [dict(h.to_dict(), date=result_date(h)) for h in hits]}


async def context(call: Call) -> dict[str, Any]:
    call.check_served()
    text = await call.memory.context(call.args["query"], **call.pick(
        "limit", "filters", "as_of", "mode", "order", "dated", "date_format", "current_only", "reference_time"),
        **call.scope())
    return {"context": text, "lines": text.split("\n") if text else []}


async def list_rejections(call: Call) -> dict[str, Any]:
    rows = await call.memory.rejections(**call.pick("since", "layer", "limit"), **call.scope())
    return {"rejections": _dicts(rows)}


async def list_faults(call: Call) -> dict[str, Any]:
    return {"faults": await call.memory.faults(**call.scope())}


async def restore_rejection(call: Call) -> dict[str, Any]:
    item = await call.memory.restore(call.path["id"], **call.scope(by_id=True))
    return {"memory": item.to_dict()}


async def forget(call: Call) -> dict[str, Any]:
    purge, dry_run = call.args.get("purge", False), call.args.get("dry_run", False)
    removed = await call.memory.forget(call.args["what"], purge=purge, dry_run=dry_run, **call.scope())
    return {"removed": _dicts(removed), "folds": _dicts(removed.folds), "purged": purge and not dry_run,
            "dry_run": dry_run}


async def consolidate(call: Call) -> dict[str, Any]:
    # A consolidation holds the scope's write lock and a thread: the server bounds how long, and a
    # client may ask for less. What is left is reported (complete: false) for the next call.
    asked, bound = call.args.get("max_seconds"), call.consolidate_seconds
    budget = bound if asked is None else asked if bound is None else min(float(asked), bound)
    report = await call.memory.consolidate(**call.pick("dry_run", "min_sim"), max_seconds=budget, **call.scope())
    return {"consolidation": report.to_dict()}


async def list_merges(call: Call) -> dict[str, Any]:
    rows = await call.memory.merges(**call.pick("include_undone"), **call.scope())
    return {"merges": [_merge_row(r) for r in rows]}


async def undo_merge(call: Call) -> dict[str, Any]:
    revived = await call.memory.unconsolidate(call.path["id"], **call.scope(by_id=True))
    return {"memories": _dicts(revived)}


async def list_scopes(call: Call) -> dict[str, Any]:
    assert call.key is not None
    limit = call.args.get("limit", DEFAULT_SCOPES_LIMIT)
    granted = [s for s in await call.memory.scopes()
               if s.is_normalized and call.key.grants(s.user_id, s.agent_id, s.run_id)]
    out, store_bytes = [], None
    for s in granted[:limit]:
        st = await call.memory.stats(**s.as_dict())
        store_bytes = st["store_bytes"]
        out.append({"scope": s.as_dict(), "active_memories": st["active_memories"], "rejections": st["rejections"],
                    "events": st["events"], "tau": st["tau"], "kappa": st["kappa"]})
    if not call.key.admin:
        store_bytes = None  # the whole store's size moves with every tenant's writes: an admin's to read
    elif store_bytes is None:
        store_bytes = (await call.memory.stats(**READY_SCOPE))["store_bytes"]
    return {"scopes": out, "truncated": len(granted) > limit, "store_bytes": store_bytes,
            "key": {"name": call.key.name, "admin": call.key.admin}}


async def stats(call: Call) -> dict[str, Any]:
    return {"stats": _for_key(call.key, await call.memory.stats(**call.scope()))}


def _for_key(key: KeyEntry | None, stats: dict[str, Any]) -> dict[str, Any]:
    """A scope's stats as this key may read them: the LLM's calls and tokens are the whole server
    process's and the store's size the whole store's, every tenant's together, so only an admin key
    reads them (else ``llm`` and ``store_bytes`` are null: polled, they would show when and how much
    other tenants write)."""
    if key is None or not key.admin:
        stats = {**stats, "llm": None, "store_bytes": None}
    return stats


async def healthz(call: Call) -> dict[str, Any]:
    return {"status": "ok"}


async def readyz(call: Call) -> dict[str, Any]:
    if call.readiness is None:
        raise StoreError("the store is not open yet; retry in a moment")
    await call.readiness()
    return {"status": "ready"}


async def openapi(call: Call) -> dict[str, Any]:
    assert call.document is not None
    return call.document


# ---- the table ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Endpoint:
    """One route: method, path template, handler and its OpenAPI operation's parts.

    Attributes:
        returns: the 200 body's fields and their schemas (the body is an object of exactly these).
        body: the request body's schema (POST/PATCH), None for none.
        query: the query parameters (GET/DELETE).
        public: answered without a key (/healthz, /readyz).
        admin: needs an admin key.
        text: the 200 body is text (``/metrics``), not JSON.
        errors: the statuses it may answer besides 200, 401 and 500.
        lengthy: it may run long by what it is (a batch, a consolidation, a purge, a forget): such
            calls leave a thread of the process to the others (memsieve.server.shares).
    """

    method: str
    path: str
    handler: Callable[[Call], Awaitable[Any]] | None
    operation_id: str
    summary: str
    returns: dict[str, Any] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    query: list[dict[str, Any]] = field(default_factory=list)
    public: bool = False
    admin: bool = False
    text: bool = False
    errors: tuple[int, ...] = (400, 403)
    lengthy: bool = False

    @property
    def writes(self) -> bool:
        """It may change the store: an ``Idempotency-Key`` makes a retry of it answer, not write again."""
        return self.method in ("POST", "PATCH", "DELETE") and self.path not in READ_ONLY_POSTS


#: The POST routes that only read (their body is a query): no Idempotency-Key needed.
READ_ONLY_POSTS = ("/v1/search", "/v1/context")
IDEMPOTENCY_HEADER = {"name": "Idempotency-Key", "in": "header", "required": False,
                      "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
                      "description": "a key the client makes for this write (a UUID): a retry with the same key "
                                     "and body gets the first answer again (header Idempotent-Replayed: true) "
                                     "instead of writing twice; kept for a day"}


_ID = (400, 403, 404)
_DECISIONS = {"decisions": list_of("Decision")}
_MEMORY = {"memory": ref("Memory")}
_SEARCH_ARGS = dict(query=text("the question or text to match"), limit=LIMIT, filters=FILTERS,
                    as_of=iso_time("an ISO time: search what the store knew and what held then"), mode=SEARCH_MODE,
                    current_only=boolean("leave out older versions of a fact whose newer version is listed"),
                    reference_time=iso_time("the question's now, ISO time with its UTC offset: \"yesterday\", "
                                            "\"last month\" are read against it (default: the request's time, UTC)"))

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("POST", "/v1/memories", add_memory, "addMemory",
             "Remember text or chat messages; the write gate decides each candidate (ADD, UPDATE, DELETE or NOOP) "
             "and says why.", _DECISIONS,
             {**body(text=text("what to remember (or send messages)"),
                  messages={"type": "array", "items": MESSAGE, "minItems": 1, "maxItems": MAX_BATCH_ITEMS,
                            "description": f"chat messages, one candidate each, at most {MAX_BATCH_ITEMS:,} (or "
                                           "send text)"},
                  infer=boolean("extract facts with the server's LLM first"), metadata=METADATA,
                  valid_from=iso_time("ISO time the fact began to hold (default: now)"), source=SOURCE, scoped=True),
              "oneOf": [{"required": ["text"]}, {"required": ["messages"]}]}),
    Endpoint("POST", "/v1/memories/batch", add_batch, "addMemories",
             "Bulk add: one add per item, decided exactly as one call each, embedded and committed in chunks.",
             {"decisions": {"type": "array", "items": list_of("Decision"), "description": "one list per item"}},
             body(["items"], items={"type": "array", "minItems": 1, "maxItems": MAX_BATCH_ITEMS, "items": BATCH_ITEM,
                                    "description": f"the texts to add (at most {MAX_BATCH_ITEMS:,})"},
                  metadata=METADATA, batch_size=integer("items per embedding call and transaction", minimum=1,
                                                     maximum=4096), scoped=True), lengthy=True),
    Endpoint("GET", "/v1/memories", list_memories, "listMemories", "The scope's memories (active ones unless "
             "include_inactive).", {"memories": list_of("Memory")},
             query=query_params(limit=LIMIT, include_inactive=boolean("list deleted and merged memories too"))),
    Endpoint("GET", "/v1/memories/{id}", get_memory, "getMemory", "One memory by id, active or deleted.", _MEMORY,
             query=query_params(), errors=_ID),
    Endpoint("PATCH", "/v1/memories/{id}", update_memory, "updateMemory",
             "Replace a memory's text; the old text stays in its history.", _MEMORY,
             body(["text"], text=text("the new text"), reason=text("recorded in the history")), errors=_ID),
    Endpoint("DELETE", "/v1/memories/{id}", delete_memory, "deleteMemory",
             "Soft-delete a memory: it leaves search and stays readable by id.", _MEMORY,
             query=query_params(reason=text("recorded in the history")), errors=_ID),
    Endpoint("GET", "/v1/memories/{id}/history", memory_history, "memoryHistory",
             "Every change of a memory, oldest first, and the links touching it (versions: updates, supersedes).",
             {"history": list_of("HistoryEntry"), "links": {"type": "array", "items": {
                 "type": "object", "required": ["id", "kind", "cosine"],
                 "properties": {"id": {"type": "string"}, "kind": {"type": "string"},
                                "cosine": nullable_number("cosine between the two")}}}},
             query=query_params(), errors=_ID),
    Endpoint("POST", "/v1/memories/{id}/purge", purge_memory, "purgeMemory",
             "Erase a memory's text and embedding everywhere (and what merges retired into it), keeping a "
             "tombstone.", {"erasure": ref("Erasure")}, body(reason=text("recorded in the history")), errors=_ID,
             lengthy=True),
    Endpoint("POST", "/v1/compact", compact, "compact",
             "Rewrite the store so that no byte of a purged text stays in its files (an admin key; PostgreSQL: "
             "VACUUM FULL of the tables a purge erases from, which blocks their reads and writes while it runs). "
             "The erasure lists nothing; `pending` says what is still to finish.",
             {"erasure": ref("Erasure")}, {"type": "object", "additionalProperties": False, "properties": {}},
             admin=True, errors=(400, 403), lengthy=True),
    Endpoint("POST", "/v1/search", search, "search", "Search the scope, best first; each result has its date.",
             {"results": list_of("SearchResult")}, body(["query"], **_SEARCH_ARGS, scoped=True)),
    Endpoint("POST", "/v1/context", context, "context",
             "Search, then render the results as prompt lines, one dated line per memory.",
             {"context": string("the lines joined by newlines"), "lines": {"type": "array", "items": {"type": "string"}}},
             body(["query"], **_SEARCH_ARGS, order={"type": "string", "enum": ["relevance", "time"]},
                  dated=boolean("prefix each line with its date"),
                  date_format={"type": "string", "enum": ["iso", "long"]}, scoped=True)),
    Endpoint("GET", "/v1/rejections", list_rejections, "listRejections",
             "What the write gate did not store, and why.", {"rejections": list_of("Rejection")},
             query=query_params(since=iso_time("ISO time: only later ones", nullable=False),
                                layer={"type": "string", "enum": list(LAYERS),
                                       "description": "the layer that refused (rejections come from exact, "
                                                      "novelty, band and llm)"},
                                limit=LIMIT)),
    Endpoint("GET", "/v1/faults", list_faults, "listFaults",
             "What the LLM got wrong in this scope (invalid JSON, a wrong index, a guard's refusal), oldest first; "
             "each candidate it touched was still stored.",
             {"faults": {"type": "array", "items": {
                 "type": "object", "required": ["kind", "detail", "created_at"],
                 "properties": {"kind": string("invalid_json, bad_index, guard_rejected, unreachable, ..."),
                                "detail": string("what was wrong"),
                                "raw": opt_string("the model's raw answer, when there was one"),
                                "created_at": string("ISO time")}}}},
             query=query_params()),
    Endpoint("POST", "/v1/rejections/{id}/restore", restore_rejection, "restoreRejection",
             "Store a rejected candidate as a memory after all.", _MEMORY, body(), errors=_ID),
    Endpoint("POST", "/v1/forget", forget, "forget",
             "Remove the memories a request names (soft delete, or purge).",
             {"removed": list_of("Memory"), "folds": list_of("Rejection"), "purged": {"type": "boolean"},
              "dry_run": {"type": "boolean"}},
             body(["what"], what=text('the request, e.g. "forget my old address"'),
                  purge=boolean("erase text and embedding, keeping a tombstone"),
                  dry_run=boolean("only list what would be removed"), scoped=True), lengthy=True),
    Endpoint("POST", "/v1/consolidate", consolidate, "consolidate",
             "Merge the scope's duplicates and close its older versions, undoably.",
             {"consolidation": ref("Consolidation")},
             body(dry_run=boolean("only list the clusters"),
                  min_sim={"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "cosine members need"},
                  max_seconds={"type": "number", "exclusiveMinimum": 0, "maximum": 86400,
                               "description": "begin no new cluster after this long (the server's "
                                              "--consolidate-seconds bounds it); the report says what is left"},
                  scoped=True), lengthy=True),
    Endpoint("GET", "/v1/merges", list_merges, "listMerges", "The scope's merges, oldest first.",
             {"merges": list_of("Merge")}, query=query_params(include_undone=boolean("list undone merges too"))),
    Endpoint("POST", "/v1/merges/{id}/undo", undo_merge, "undoMerge",
             "Undo one merge: its members are active again as they were.", {"memories": list_of("Memory")},
             body(), errors=(400, 403, 404, 409)),
    Endpoint("GET", "/v1/scopes", list_scopes, "listScopes",
             "The scopes the store holds that the key grants (every one for an admin key), with counts, tau and "
             "kappa, and (to an admin key) the store's size.",
             {"scopes": {"type": "array", "items": {"type": "object", "properties": {
                 "scope": {"type": "object"}, "active_memories": {"type": "integer"},
                 "rejections": {"type": "integer"}, "events": {"type": "object"},
                 "tau": nullable_number("the scope's threshold"), "kappa": nullable_number("the kernel concentration")}}},
              "truncated": {"type": "boolean", "description": "more scopes than limit"},
              "store_bytes": {"type": ["integer", "null"],
                              "description": "the whole store's size in bytes; null but to an admin key"},
              "key": {"type": "object", "properties": {"name": {"type": "string"}, "admin": {"type": "boolean"}}}},
             query=[{"name": "limit", "in": "query", "required": False,
                     "schema": integer(f"how many scopes, at most (default {DEFAULT_SCOPES_LIMIT})", minimum=1,
                                   maximum=2**63 - 1)}],
             errors=(400,)),
    Endpoint("GET", "/v1/stats", stats, "stats", "Counts per event and layer, tau and kappa (and, to an admin key, "
             "the store's size and the server's LLM calls and tokens).",
             {"stats": {"type": "object"}}, query=query_params()),
    Endpoint("GET", "/healthz", healthz, "healthz", "Liveness: the process answers.",
             {"status": {"type": "string", "enum": ["ok"]}}, public=True, errors=(400,)),
    Endpoint("GET", "/readyz", readyz, "readyz", "Readiness: the store answers (503 when it does not).",
             {"status": {"type": "string", "enum": ["ready"]}}, public=True, errors=(400, 503)),
    Endpoint("GET", "/metrics", None, "metrics", "Prometheus metrics, text exposition format (an admin key).",
             admin=True, text=True, errors=(400, 403)),
    Endpoint("GET", "/openapi.json", openapi, "openapi", "This document (OpenAPI 3.1).",
             {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"},
              "components": {"type": "object"}, "security": {"type": "array"}}, errors=(400,)),
)

#: Each endpoint with the regex of its path, as Starlette compiles it for the app.
_PATH_PATTERNS = [(ep, compile_path(ep.path)[0]) for ep in ENDPOINTS]


def endpoints_on(path: str) -> list[Endpoint]:
    """The endpoints that serve a request path (``/v1/memories/abc`` is ``/v1/memories/{id}``'s),
    in the order the table lists them. A literal path (``/v1/memories/batch``) is its own route: where
    one matches, a template's ``{id}`` does not also claim the path."""
    path = path.rstrip("/") or "/"
    found = [ep for ep, regex in _PATH_PATTERNS if regex.match(path)]
    literal = [ep for ep in found if ep.path == path]
    return literal or found


def methods_of(path: str) -> list[str]:
    """The methods ENDPOINTS serve on a request path, HEAD included wherever GET is, in table order."""
    methods = [m for ep in endpoints_on(path) for m in [ep.method] + (["HEAD"] if ep.method == "GET" else [])]
    return list(dict.fromkeys(methods))


#: The literal paths a template also matches (``/v1/memories/batch`` and ``/v1/memories/{id}``):
#: another method on them is a 405, not a call by id.
SHADOWING_PATHS = tuple(dict.fromkeys(
    ep.path for ep in ENDPOINTS if "{" not in ep.path
    and any(other.path != ep.path and regex.fullmatch(ep.path) for other, regex in _PATH_PATTERNS)))


_STATUS_TEXT = {400: "bad input: malformed JSON, a wrong type, an unknown field, a bad scope id",
                401: "no API key, or one the keys file does not list", 403: "the key does not grant this scope",
                404: "no such id in this scope (another scope's id answers the same)",
                409: "a merge conflict (undone already, or a member changed since), or a request with this "
                     "Idempotency-Key is still running",
                422: "this Idempotency-Key was used for another request; make a new key for a new request",
                413: "the body is over the server's limit",
                408: "the request's head or body did not arrive within the server's --read-timeout",
                500: "the server failed (the log has the request id)",
                503: "the store does not answer, or the server is stopping"}


def _published_body(schema: dict[str, Any], *, router: bool, llm: bool) -> dict[str, Any]:
    """A body schema as the document shows it on this server: without ``mode: "auto"`` when it has
    no router and without ``infer: true`` when it has no LLM, which it refuses (the checked schema
    keeps both, and the call answers 400 with the fix)."""
    props = dict(schema["properties"])
    if not router and "mode" in props:
        props["mode"] = {**props["mode"], "enum": [m for m in props["mode"]["enum"] if m != "auto"],
                         "description": "hybrid (default), dense or keyword (auto needs `memsieve serve --router`)"}
    if not llm and "infer" in props:
        props["infer"] = {**props["infer"], "enum": [False],
                          "description": "false: this server has no LLM (`memsieve serve --llm-base-url`)"}
    return {**schema, "properties": props}


def _operation(ep: Endpoint, *, router: bool, llm: bool) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": ep.operation_id, "summary": ep.summary}
    params = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}] if "{id}" in ep.path else []
    if params:
        # Not expressible in the schema: what the key is decides whether a scope is needed.
        op["description"] = ("An admin key may leave the scope out (the id is found in whichever scope holds it); "
                             "any other key names the scope (user_id, agent_id, run_id), or the call is a 400.")
    if ep.writes:
        params.append(IDEMPOTENCY_HEADER)
    if params or ep.query:
        op["parameters"] = params + ep.query
    if ep.body is not None:
        # A body that must name a scope is required even when none of its fields is.
        op["requestBody"] = {"required": bool(ep.body.get("required") or "not" in ep.body), "content": {
            "application/json": {"schema": _published_body(ep.body, router=router, llm=llm)}}}
    if ep.text:
        ok = {"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}}
    else:
        ok = {"description": "OK", "content": {"application/json": {"schema": {
            "type": "object", "required": list(ep.returns), "properties": ep.returns}}}}
    statuses = list(ep.errors) + ([] if ep.public else [401]) + ([408, 413] if ep.body is not None else []) + [500] \
        + ([409, 422] if ep.writes else [])
    op["responses"] = {"200": ok, **{str(s): {"description": _STATUS_TEXT[s], "content": {
        "application/json": {"schema": ref("Error")}}} for s in sorted(set(statuses))}}
    if ep.public:
        op["security"] = []
    return op


def openapi_document(*, version: str, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                     router: bool = True, llm: bool = True) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ENDPOINTS, as a server with (or without) a router and an LLM serves them."""
    paths: dict[str, dict[str, Any]] = {}
    for ep in ENDPOINTS:
        paths.setdefault(ep.path, {})[ep.method.lower()] = _operation(ep, router=router, llm=llm)
    return {
        "openapi": "3.1.0",
        "info": {"title": "memsieve", "version": version,
                 "description": "Long-term memory for LLM agents over HTTP. Every route but /healthz and /readyz "
                                "needs 'Authorization: Bearer KEY'. The scope (user_id, agent_id, run_id) goes in "
                                "the JSON body of a POST or PATCH, and in the query string of a GET or DELETE. "
                                f"Request bodies are at most {max_body_bytes} bytes."},
        "paths": paths,
        "components": {"schemas": COMPONENTS,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                                      "description": "an API key from `memsieve serve keygen`"}}},
        "security": [{"bearer": []}],
    }

