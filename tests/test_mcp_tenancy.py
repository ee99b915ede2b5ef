"""`memsieve mcp` holds tenants apart: a pinned scope, strict arguments, a bearer token over HTTP.

Driven by the MCP SDK's own client and a real HTTP client (httpx) against the
real server process, as a hostile client would call it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
import httpx
import pytest

from memsieve import Memory
from test_mcp import SCRIPT, TOKEN, call, fails, http_server, http_session, stdio_session

pytest.importorskip("mcp")

SECRET = "Victim's bank account is 4402-8812-XQ."


def _seed_victim(db, embedder) -> str:
    with Memory(db, embedder=embedder) as m:
        return m.add(SECRET, user_id="victim")[0].memory_id


def _victim_memories(db, embedder) -> list[tuple[str, bool]]:
    with Memory(db, embedder=embedder) as m:
        return [(it.text, it.is_active) for it in m.get_all(user_id="victim", include_inactive=True)]


def test_a_pinned_server_refuses_every_other_scope(tmp_path, embedder):
    db = tmp_path / "m.db"
    victim_id = _seed_victim(db, embedder)

    async def main():
        async with stdio_session(db, "--user", "me") as session:
            await session.initialize()
            mine = (await call(session, "add_memories", text="I like green tea."))["decisions"][0]
            assert mine["event"] == "ADD"
            # naming its own scope is allowed
            assert [m["text"] for m in (await call(session, "list_memories", user_id="me"))["memories"]] == \
                ["I like green tea."]
            for tool, args in (("list_memories", {}), ("search_memory", {"query": "bank account"}),
                               ("forget", {"what": "forget the bank account", "purge": True}),
                               ("get_memory", {"memory_id": victim_id}),
                               ("memory_history", {"memory_id": victim_id}),
                               ("delete_memories", {"memory_ids": [victim_id]}),
                               ("update_memory", {"memory_id": victim_id, "text": "overwritten"}),
                               ("add_memories", {"text": "planted"}), ("list_rejections", {})):
                message = await fails(session, tool, user_id="victim", **args)
                assert "serves only the scope (user_id='me')" in message and "--unsafe-any-scope" in message
                assert SECRET not in message
            # a partial triple naming another agent of the same user is another scope too
            assert "serves only" in await fails(session, "list_memories", user_id="me", agent_id="other")

    anyio.run(main)
    assert _victim_memories(db, embedder) == [(SECRET, True)]


def test_the_opt_in_lets_a_call_name_any_scope(tmp_path, embedder):
    db = tmp_path / "m.db"
    _seed_victim(db, embedder)

    async def main():
        async with stdio_session(db, "--unsafe-any-scope") as session:
            await session.initialize()
            found = (await call(session, "list_memories", user_id="victim"))["memories"]
            assert [m["text"] for m in found] == [SECRET]
            # with no scope of its own, a call must name one
            assert "scope" in await fails(session, "list_memories")

    anyio.run(main)


def test_a_server_with_no_scope_and_no_opt_in_does_not_start(tmp_path):
    db = tmp_path / "n.db"
    proc = subprocess.run([SCRIPT, "mcp", "--db", str(db), "--create"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "needs the scope it serves" in proc.stderr and "--unsafe-any-scope" in proc.stderr
    assert not db.exists()


def test_flags_are_strict_booleans(tmp_path, embedder):
    db = tmp_path / "m.db"

    async def main():
        async with stdio_session(db, "--user", "me") as session:
            await session.initialize()
            kept = (await call(session, "add_memories", text="My locker code is 7719."))["decisions"][0]
            for value in ("yes", "no", "true", 1, 0):
                assert "purge" in await fails(session, "forget", what="forget my locker code", purge=value)
                assert "dry_run" in await fails(session, "forget", what="forget my locker code", dry_run=value)
            assert "infer" in await fails(session, "add_memories", text="x y z", infer="yes")
            assert "limit" in await fails(session, "search_memory", query="locker", limit="5")
            items = (await call(session, "list_memories"))["memories"]
            assert [(m["id"], m["is_active"], m["text"]) for m in items] == \
                [(kept["memory_id"], True, "My locker code is 7719.")]

    anyio.run(main)


def test_http_needs_a_token_to_start(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MEMSIEVE_MCP_TOKEN"}
    base = [SCRIPT, "mcp", "--db", str(tmp_path / "h.db"), "--create", "--user", "me", "--http", "8"]
    proc = subprocess.run(base, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "--http needs a bearer token" in proc.stderr
    short = tmp_path / "short.txt"
    short.write_text("abc\n")
    proc = subprocess.run(base + ["--token-file", str(short)], capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "3 characters" in proc.stderr
    proc = subprocess.run(base + ["--token-file", str(tmp_path / "missing.txt")], capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "cannot read the token file" in proc.stderr
    assert not (tmp_path / "h.db").exists()


def test_http_refuses_requests_without_the_token(tmp_path):
    with http_server(tmp_path / "h.db", "--user", "me") as url:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "probe", "version": "1"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": TOKEN},
                        {"Authorization": f"Basic {TOKEN}"}, {"Authorization": f"Bearer {TOKEN}x"}):
            r = httpx.post(url, json=init, headers={**accept, **headers}, timeout=30)
            assert r.status_code == 401, headers
            assert r.headers["www-authenticate"] == "Bearer" and r.json()["error"] == "unauthorized"
        ok = httpx.post(url, json=init, headers={**accept, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert ok.status_code == 200

        async def main():
            async with http_session(url) as session:
                await session.initialize()
                assert (await call(session, "add_memories", text="I keep bees."))["decisions"][0]["event"] == "ADD"

        anyio.run(main)


def test_the_token_can_come_from_a_file(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("file-token-abcdefghijklmnop\n")
    with http_server(tmp_path / "h.db", "--user", "me", "--token-file", str(token_file)) as url:
        r = httpx.post(url, json={}, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert r.status_code == 401  # the file's token wins over the environment's

        async def main():
            async with http_session(url, token="file-token-abcdefghijklmnop") as session:
                await session.initialize()
                assert (await call(session, "list_memories"))["memories"] == []

        anyio.run(main)


@pytest.mark.parametrize("argv", [
    ["restore", "no-such-rejection"],
    ["forget", "my address", "--user", "u"],
    ["forget", "my address", "--user", "u", "--dry-run"],
    ["forget", "my address", "--user", "u", "--purge"],
    ["consolidate", "--user", "u"],
    ["consolidate", "--user", "u", "--dry-run"],
    ["consolidate", "--all-scopes"],
    ["unconsolidate", "no-such-merge"],
    ["mcp", "--user", "u"],
    ["search", "q", "--user", "u"],
], ids=lambda a: " ".join(a[:2]) + ("".join(x for x in a if x.startswith("--") and x != "--user")))
def test_a_typo_in_db_creates_nothing(tmp_path, argv):
    db = tmp_path / "typo" / "memsieve.db"
    db.parent.mkdir()
    proc = subprocess.run([sys.executable, "-m", "memsieve.cli", *argv, "--db", str(db)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"memsieve: error: no database at {str(db)!r}")
    assert list(db.parent.iterdir()) == []


def test_the_served_scope_is_named_as_the_library_spells_it(tmp_path, embedder):
    """Review finding: a server started for a decomposed "José" refused the composed spelling its own
    results report, and a "--user me" server refused "me "; the library reads each as the one scope.
    Another scope stays refused, however it is spelled."""
    db = tmp_path / "n.db"
    decomposed = "Jose\u0301"

    async def main():
        async with stdio_session(db, "--user", decomposed) as session:
            await session.initialize()
            await call(session, "add_memories", text="I like green tea.")
            for spelling in ("Jos\u00e9", decomposed, " Jos\u00e9 ", "Jos\u00e9\u200b"):
                listed = await call(session, "list_memories", user_id=spelling)
                assert [m["text"] for m in listed["memories"]] == ["I like green tea."]
            for other in ("jos\u00e9", "Jose", "Jos\u00e9 2"):
                assert "serves only" in await fails(session, "list_memories", user_id=other)

    anyio.run(main)
