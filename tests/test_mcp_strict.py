"""`memsieve mcp` arguments are strict, and its bearer scheme is case-insensitive.

Driven by the MCP SDK's own client (and httpx for raw 401s) against the real
server process, with the helpers of test_mcp.
"""

from __future__ import annotations

import anyio
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from test_mcp import TOKEN, call, fails, http_server, stdio_session

from memsieve import Memory
from memsieve.integrations.mcp import TOOLS

LOCKER = "My locker code is 7719."

#: Each tool's required arguments (valid enough that only the unknown one can be refused).
REQUIRED = {"add_memories": {"text": "planted by a typo"}, "search_memory": {"query": "locker"},
            "list_memories": {}, "delete_memories": {"memory_ids": ["no-such-id"]},
            "get_memory": {"memory_id": "no-such-id"}, "update_memory": {"memory_id": "no-such-id", "text": "t"},
            "memory_history": {"memory_id": "no-such-id"}, "list_rejections": {},
            "restore_rejection": {"rejection_id": "no-such-id"}, "forget": {"what": "forget my locker code"},
            "purge_memory": {"memory_id": "no-such-id"}}


def _active(db, embedder) -> list[tuple[str, bool]]:
    with Memory(db, embedder=embedder) as m:
        return [(it.text, it.is_active) for it in m.get_all(user_id="me", include_inactive=True)]


def test_every_tool_schema_forbids_additional_properties(tmp_path):
    async def main():
        async with stdio_session(tmp_path / "m.db", "--user", "me") as session:
            await session.initialize()
            schemas = {t.name: t.input_schema for t in (await session.list_tools()).tools}
            assert list(schemas) == list(TOOLS)
            assert {name: s.get("additionalProperties") for name, s in schemas.items()} == \
                {name: False for name in TOOLS}
            # still the same arguments, types and required ones
            assert list(schemas["search_memory"]["properties"]) == ["query", "limit", "user_id", "agent_id", "run_id",
                                                                    "reference_time"]
            assert schemas["search_memory"]["required"] == ["query"]
            assert schemas["forget"]["properties"]["dry_run"]["type"] == "boolean"

    anyio.run(main)


def test_unknown_arguments_are_tool_errors_naming_them(tmp_path, embedder):
    db = tmp_path / "m.db"

    async def main():
        async with stdio_session(db, "--user", "me") as session:
            await session.initialize()
            schemas = {t.name: t.input_schema for t in (await session.list_tools()).tools}
            assert list(REQUIRED) == list(TOOLS)
            kept = (await call(session, "add_memories", text=LOCKER))["decisions"][0]
            memory_id = kept["memory_id"]

            # the three from the report: a scope typo, flag typos on a destructive call, options it lacks
            message = await fails(session, "search_memory", query="locker", userid="bob")
            assert "'userid'" in message
            message = await fails(session, "forget", what="forget my locker code", dry_run=True, dryrun=False,
                                  purge_now=True)
            assert "'dryrun'" in message and "'purge_now'" in message
            message = await fails(session, "search_memory", query="x", mode="keyword", as_of="2000-01-01")
            assert "'as_of'" in message and "'mode'" in message
            # a typo on a write, and on a removal whose real flags would have done something
            assert "'infer_'" in await fails(session, "add_memories", text="I keep bees.", infer_=True)
            assert "'dryrun'" in await fails(session, "forget", what="forget my locker code", dryrun=True)
            assert "'reasons'" in await fails(session, "purge_memory", memory_id=memory_id, reasons="typo")
            assert "'userId'" in await fails(session, "delete_memories", memory_ids=[memory_id], userId="me")

            # every tool: the error names the unknown argument and every argument the tool takes
            for tool, args in REQUIRED.items():
                message = await fails(session, tool, **args, bogus_arg=1)
                assert "'bogus_arg'" in message, (tool, message)
                for accepted in schemas[tool]["properties"]:
                    assert f"'{accepted}'" in message, (tool, accepted, message)

            # nothing was written, deleted, forgotten or purged; the server still serves
            items = (await call(session, "list_memories"))["memories"]
            assert [(m["id"], m["text"], m["is_active"]) for m in items] == [(memory_id, LOCKER, True)]
            assert (await call(session, "list_rejections"))["rejections"] == []
            history = (await call(session, "memory_history", memory_id=memory_id))["history"]
            assert [h["event"] for h in history] == ["ADD"]
            assert (await call(session, "search_memory", query="locker code"))["results"]

    anyio.run(main)
    assert _active(db, embedder) == [(LOCKER, True)]


def test_the_bearer_scheme_is_case_insensitive(tmp_path):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}

    async def main(url, authorization):
        async with create_mcp_http_client(headers={"Authorization": authorization}) as client, \
                streamable_http_client(url, http_client=client) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            return (await call(session, "add_memories", text="I keep bees."))["decisions"][0]["event"]

    with http_server(tmp_path / "h.db", "--user", "me") as url:
        for scheme in ("Bearer", "bearer", "BEARER"):
            r = httpx.post(url, json=init, headers={**accept, "Authorization": f"{scheme} {TOKEN}"}, timeout=30)
            assert r.status_code == 200, scheme
            for wrong in (f"{TOKEN}x", TOKEN[:-1], TOKEN.upper(), "wrong-token-0123456789"):
                r = httpx.post(url, json=init, headers={**accept, "Authorization": f"{scheme} {wrong}"}, timeout=30)
                assert r.status_code == 401, (scheme, wrong)
                assert r.headers["www-authenticate"] == "Bearer" and r.json()["error"] == "unauthorized"
        for other in (f"Basic {TOKEN}", f"Bearerx {TOKEN}", f"Bearer{TOKEN}", TOKEN):
            r = httpx.post(url, json=init, headers={**accept, "Authorization": other}, timeout=30)
            assert r.status_code == 401, other
        # the SDK's own client, sending the scheme in lower case
        assert anyio.run(main, url, f"bearer {TOKEN}") == "ADD"
        assert anyio.run(main, url, f"bearer {TOKEN}") == "NOOP"  # the same server and store
