"""`memsieve mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP.

Every test spawns the real console script as a subprocess (real SQLite, the
packaged ONNX embedder) and talks to it with ``mcp.ClientSession``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memsieve import Memory
from memsieve.integrations.mcp import TOOLS

SCRIPT = str(Path(sys.executable).with_name("memsieve"))
LISBON = "Ana moved to Lisbon in March 2024."
NURSE = "Her job: nurse at the children's hospital."


#: The bearer token every HTTP server of these tests is started with (from the environment).
TOKEN = "test-token-0123456789abcdef"


def _server_args(db: Path | str, *extra: str) -> list[str]:
    create = [] if str(db).startswith("postgresql://") else ["--create"]
    return ["mcp", "--db", str(db), *create, *extra]


@contextlib.asynccontextmanager
async def stdio_session(db: Path | str, *extra: str, errlog=None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=SCRIPT, args=_server_args(db, *extra), env={"PYTHONUNBUFFERED": "1"})
    with open(os.devnull, "w") if errlog is None else contextlib.nullcontext(errlog) as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            yield session


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(db: Path, *extra: str):
    """`memsieve mcp --http PORT` as a subprocess; yields its URL once it accepts connections."""
    port = _free_port()
    proc = subprocess.Popen([SCRIPT, *_server_args(db, "--http", str(port), *extra)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MEMSIEVE_MCP_TOKEN": TOKEN})
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"memsieve mcp --http exited with {proc.returncode}: {proc.stderr.read()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            if time.monotonic() > deadline:
                pytest.fail("memsieve mcp --http did not listen within 60 s")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
        assert proc.poll() is None, "the HTTP server died while serving"
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
    assert code == 0, f"SIGTERM should stop the server cleanly, got exit code {code}"


@contextlib.asynccontextmanager
async def http_session(url: str, *, token: str | None = TOKEN) -> AsyncIterator[ClientSession]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as client, \
            streamable_http_client(url, http_client=client) as (read, write), ClientSession(read, write) as session:
        yield session


async def call(session: ClientSession, tool: str, **arguments) -> dict:
    """A successful tool call's JSON result (the structured content, checked against its text twin)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {result.content}"
    text = result.content[0].text
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"{tool} sent {c}, not strict JSON")) == \
        result.structured_content
    return result.structured_content


async def add(session: ClientSession, text: str) -> list[dict]:
    return (await call(session, "add_memories", text=text))["decisions"]


async def fails(session: ClientSession, tool: str, **arguments) -> str:
    """A failing tool call's error text."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    return result.content[0].text


async def round_trip(session: ClientSession) -> None:
    """initialize, list tools, add, search, list, rejections, restore, delete, get, update, history, forget."""
    init = await session.initialize()
    assert init.server_info.name == "memsieve"
    listed = {t.name: t for t in (await session.list_tools()).tools}
    assert list(listed) == list(TOOLS)
    assert listed["search_memory"].input_schema["required"] == ["query"]
    assert listed["search_memory"].input_schema["properties"]["limit"]["type"] == "integer"
    assert listed["search_memory"].output_schema["required"] == ["results", "context"]
    assert listed["add_memories"].output_schema["properties"]["decisions"]["type"] == "array"
    assert listed["delete_memories"].annotations.destructive_hint is True
    assert listed["search_memory"].annotations.read_only_hint is True

    first = (await call(session, "add_memories", text=LISBON, valid_from="2024-03-10T09:00:00+00:00"))["decisions"]
    assert [(d["event"], d["text"]) for d in first] == [("ADD", LISBON)] and first[0]["reason"]
    assert first[0]["nearest_cos"] is None and first[0]["nearest_id"] is None  # NaN: no memory to be near
    nurse = (await call(session, "add_memories", text=NURSE))["decisions"][0]
    assert nurse["event"] == "ADD"
    again = (await call(session, "add_memories", text=LISBON))["decisions"][0]
    assert (again["event"], again["layer"], again["memory_id"]) == ("NOOP", "exact", first[0]["memory_id"])
    assert again["rejection_id"] and again["reason"]

    found = await call(session, "search_memory", query="the city Ana moved to", limit=1)
    assert [r["text"] for r in found["results"]] == [LISBON]
    assert found["results"][0]["date"] == "10 March 2024"
    assert found["context"] == f"[10 March 2024] {LISBON}"
    # the question's now: "yesterday" read against 11 March 2024 is Ana's move; read against the
    # call's time, it is today's memory of her job
    then = await call(session, "search_memory", query="What happened yesterday?", limit=1,
                      reference_time="2024-03-11T08:00:00+00:00")
    assert [r["text"] for r in then["results"]] == [LISBON]
    now = await call(session, "search_memory", query="What happened yesterday?", limit=1)
    assert [r["text"] for r in now["results"]] == [NURSE]

    listed_items = (await call(session, "list_memories"))["memories"]
    assert sorted(m["text"] for m in listed_items) == sorted([LISBON, NURSE])
    assert all(m["user_id"] == "ana" for m in listed_items)

    rejections = (await call(session, "list_rejections"))["rejections"]
    assert [(r["id"], r["text"], r["layer"]) for r in rejections] == [(again["rejection_id"], LISBON, "exact")]
    restored = (await call(session, "restore_rejection", rejection_id=again["rejection_id"]))["memory"]
    assert restored["text"] == LISBON and restored["is_active"] and restored["id"] != first[0]["memory_id"]
    assert len((await call(session, "list_memories"))["memories"]) == 3

    deleted = (await call(session, "delete_memories", memory_ids=[restored["id"]]))["deleted"]
    assert [(d["id"], d["is_active"]) for d in deleted] == [(restored["id"], False)]
    assert len((await call(session, "list_memories"))["memories"]) == 2
    assert (await call(session, "get_memory", memory_id=restored["id"]))["memory"]["is_active"] is False
    events = [h["event"] for h in (await call(session, "memory_history", memory_id=restored["id"]))["history"]]
    assert events == ["RESTORE", "DELETE"]

    updated = (await call(session, "update_memory", memory_id=nurse["memory_id"],
                          text="Her job: surgeon at the children's hospital."))["memory"]
    assert updated["text"] == "Her job: surgeon at the children's hospital."
    history = (await call(session, "memory_history", memory_id=nurse["memory_id"]))["history"]
    assert [h["event"] for h in history] == ["ADD", "UPDATE"] and history[-1]["old_text"] == NURSE

    gone = await call(session, "forget", what="please forget her job at the hospital")
    assert [m["id"] for m in gone["removed"]] == [nurse["memory_id"]] and gone["purged"] is False
    assert gone["folds"] == []  # nothing was folded into a memory of hers
    assert [m["text"] for m in (await call(session, "list_memories"))["memories"]] == [LISBON]


@pytest.mark.slow
def test_round_trip_over_stdio(tmp_path):
    async def main():
        async with stdio_session(tmp_path / "m.db", "--user", "ana") as session:
            await round_trip(session)

    anyio.run(main)
    with Memory(tmp_path / "m.db") as mem:  # what the client was told is what the file holds
        assert [m.text for m in mem.get_all(user_id="ana")] == [LISBON]


@pytest.mark.slow
def test_round_trip_over_http(tmp_path):
    async def main(url):
        async with http_session(url) as session:
            await round_trip(session)

    with http_server(tmp_path / "m.db", "--user", "ana") as url:
        anyio.run(main, url)
    # stopped by SIGTERM, the server still closed its store: SQLite removes the WAL at the last close
    assert not (tmp_path / "m.db-wal").exists()
    with Memory(tmp_path / "m.db") as mem:
        assert [m.text for m in mem.get_all(user_id="ana")] == [LISBON]


@pytest.mark.slow
def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(tmp_path, embedder):
    with Memory(tmp_path / "probe.db", embedder=embedder) as probe:  # memsieve's own messages, to compare
        messages = {}
        for key, action in (("empty", lambda: probe.add("   ", user_id="u")), ("scope", lambda: probe.add("x")),
                            ("id", lambda: probe.get("no-such-id")),
                            ("limit", lambda: probe.search("q", user_id="u", limit=0))):
            with pytest.raises(Exception) as info:
                action()
            messages[key] = " ".join(str(info.value).split())

    async def main():
        async with stdio_session(tmp_path / "m.db", "--unsafe-any-scope") as session:  # no default scope
            await session.initialize()
            kept = (await call(session, "add_memories", text=LISBON, user_id="ana"))["decisions"][0]["memory_id"]
            assert messages["scope"] in await fails(session, "add_memories", text="a fact with no scope")
            assert messages["empty"] in await fails(session, "add_memories", text="   ", user_id="ana")
            assert messages["id"] in await fails(session, "get_memory", memory_id="no-such-id", user_id="ana")
            assert messages["limit"] in await fails(session, "search_memory", query="q", limit=0, user_id="ana")
            assert "limit" in await fails(session, "search_memory", query="q", limit="many", user_id="ana")
            assert "reference_time" in await fails(session, "search_memory", query="q", reference_time="soon",
                                                   user_id="ana")
            assert "text" in await fails(session, "add_memories", user_id="ana")  # a missing argument
            assert "no_such_tool" in await fails(session, "no_such_tool")
            assert "since" in await fails(session, "list_rejections", since="yesterday-ish", user_id="ana")
            # one unknown id among the ids: nothing is deleted
            assert messages["id"] in await fails(session, "delete_memories", memory_ids=[kept, "no-such-id"],
                                                 user_id="ana")
            # another scope's memory is reported as missing, with the same message
            assert "no memory with id" in await fails(session, "get_memory", memory_id=kept, user_id="bob")
            # still serving, and nothing half-written
            items = (await call(session, "list_memories", user_id="ana"))["memories"]
            assert [(m["id"], m["is_active"]) for m in items] == [(kept, True)]
            assert (await call(session, "search_memory", query="Lisbon", user_id="ana"))["results"]

    anyio.run(main)


@pytest.mark.slow
def test_two_stdio_servers_share_one_database(tmp_path):
    db = tmp_path / "shared.db"

    async def main():
        async with stdio_session(db, "--user", "team") as a, stdio_session(db, "--user", "team") as b:
            await a.initialize()
            await b.initialize()
            assert (await call(a, "add_memories", text=LISBON))["decisions"][0]["event"] == "ADD"
            # b's gate sees a's write: the same text is an exact duplicate there
            dup = (await call(b, "add_memories", text=LISBON))["decisions"][0]
            assert (dup["event"], dup["layer"]) == ("NOOP", "exact")
            assert [r["id"] for r in (await call(a, "list_rejections"))["rejections"]] == [dup["rejection_id"]]
            # concurrent writes from both clients all land
            facts = ["The staging database is backed up every night at two.",
                     "Marta reviews every pull request that touches billing.",
                     "Our office plants get watered on Mondays.",
                     "The quarterly offsite will be in Sintra this year.",
                     "Invoices above ten thousand euros need two signatures.",
                     "The coffee machine on floor three is broken again."]
            async with anyio.create_task_group() as tg:
                for i, fact in enumerate(facts):
                    tg.start_soon(add, a if i % 2 else b, fact)
            for session in (a, b):
                texts = {m["text"] for m in (await call(session, "list_memories"))["memories"]}
                assert texts == {LISBON, *facts}

    anyio.run(main)


@pytest.mark.slow
def test_two_http_clients_on_one_server(tmp_path):
    async def main(url):
        async with http_session(url) as a, http_session(url) as b:
            await a.initialize()
            await b.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(add, a, LISBON)
                tg.start_soon(add, b, NURSE)
            for session in (a, b):
                assert {m["text"] for m in (await call(session, "list_memories"))["memories"]} == {LISBON, NURSE}
            hit = (await call(b, "search_memory", query="the city Ana moved to", limit=1))["results"][0]
            assert hit["text"] == LISBON

    with http_server(tmp_path / "h.db", "--user", "ana") as url:
        anyio.run(main, url)


@pytest.mark.slow
def test_the_sdk_is_imported_only_by_the_mcp_command(tmp_path):
    code = ("import sys, memsieve, memsieve.cli\n"
            "from memsieve.cli import main\n"
            f"main(['add', 'a fact', '--user', 'u', '--db', {str(tmp_path / 'x.db')!r}])\n"
            "leaked = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'memsieve.integrations')))\n"
            "print(leaked)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
@pytest.mark.parametrize("port", ["0", "70000"])
def test_a_bad_port_is_one_error_line(tmp_path, port):
    proc = subprocess.run([SCRIPT, "mcp", "--http", port, "--db", str(tmp_path / "p.db")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"memsieve: error: --http takes a TCP port in 1..65535, got {port}"
    assert not (tmp_path / "p.db").exists()  # refused before the store was opened


def test_without_the_extra_the_command_names_the_install(tmp_path):
    code = ("import sys\nsys.modules['mcp'] = None  # as if the SDK were not installed\n"
            "from memsieve.cli import main\n"
            f"sys.exit(main(['mcp', '--db', {str(tmp_path / 'n.db')!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("memsieve: error: the mcp integration needs 'mcp'")
    assert 'pip install "memsieve[mcp]"' in proc.stderr


def test_a_stdio_server_on_postgres(pg_url):
    async def main():
        async with stdio_session(pg_url, "--user", "ana") as session:
            await session.initialize()
            assert (await add(session, LISBON))[0]["event"] == "ADD"
            assert (await add(session, LISBON))[0]["layer"] == "exact"
            found = await call(session, "search_memory", query="the city Ana moved to", limit=1)
            assert [r["text"] for r in found["results"]] == [LISBON]

    anyio.run(main)


def test_deleting_a_merge_retired_id_among_others_deletes_nothing(tmp_path, embedder):
    """The tool checks every id first, the merge in force too: a member a merge retired would fail
    its own delete after the ids before it were deleted."""
    db = tmp_path / "m.db"
    with Memory(db, embedder=embedder) as mem:
        mem.add("My dentist Dr Vantrello is on Birch Street.", user_id="ana")
        keep = mem.add("I like jazz music a lot.", user_id="ana")[0].memory_id
        (d,) = mem.add("My dentist, Dr Vantrello, is on Birch Street.", user_id="ana")
        if d.event == "NOOP":
            mem.restore(d.rejection_id, user_id="ana")
        merge = mem.consolidate(user_id="ana").merges[0]
        retired = next(i for i in merge.member_ids if i != merge.kept_id)

    async def main():
        async with stdio_session(db, "--user", "ana") as session:
            await session.initialize()
            error = await fails(session, "delete_memories", memory_ids=[keep, retired])
            assert "was merged into" in error and "unconsolidate" in error
            items = {m["id"]: m["is_active"] for m in (await call(session, "list_memories"))["memories"]}
            assert items[keep] is True

    anyio.run(main)


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_blank_scope_is_refused_at_start(tmp_path, blank):
    proc = subprocess.run([SCRIPT, *_server_args(tmp_path / "b.db", "--user", blank)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("memsieve: error: ") and "user_id" in proc.stderr and "Traceback" not in proc.stderr


def test_infer_without_an_llm_names_the_servers_fix(tmp_path):
    async def main():
        async with stdio_session(tmp_path / "i.db", "--user", "ana") as session:
            await session.initialize()
            error = await fails(session, "add_memories", text=LISBON, infer=True)
            assert "infer=false" in error and "Memory(llm" not in error
            assert (await add(session, LISBON))[0]["event"] == "ADD"

    anyio.run(main)
