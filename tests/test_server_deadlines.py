"""``memsieve serve --read-timeout``: a client that sends a request's head or body too slowly (or not at
all) gets a 408 and loses its connection, a body cut short is never acted on, and the server keeps
answering everyone else while hundreds of such connections are open (memsieve.server.deadlines)."""

from __future__ import annotations

import json
import signal
import socket

import httpx
import pytest

from serve_helper import ServeProcess, cli, make_keys, wait_for

READ_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("deadlines")
    keys = make_keys(root / "keys.json", ana={"user_id": "ana"})
    srv = ServeProcess(root / "mem.db", root / "keys.json", extra=("--read-timeout", str(READ_TIMEOUT))).start()
    yield srv, keys["ana"]
    assert srv.stop() == 0, srv.log()


def _connect(srv: ServeProcess) -> socket.socket:
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
    s.settimeout(30.0)  # far past the read timeout: the server must act first
    return s


def _until_closed(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


def _error(reply: bytes) -> tuple[int, dict]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _memories(srv: ServeProcess, key: str) -> list:
    with srv.client(key) as c:
        return c.get("/v1/memories", params={"user_id": "ana"}).json()["memories"]


def test_a_connection_that_sends_nothing_gets_408_and_is_closed(served):
    srv, _ = served
    with _connect(srv) as s:
        status, body = _error(_until_closed(s))
    assert status == 408 and body["error"]["type"] == "RequestTimeoutError"
    assert "head" in body["error"]["message"] and "--read-timeout" in body["error"]["message"]


def test_a_head_sent_a_line_at_a_time_past_the_deadline_is_cut_off(served):
    srv, _ = served
    with _connect(srv) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never the blank line that ends the head
        status, _ = _error(_until_closed(s))
    assert status == 408


def test_the_next_request_on_a_kept_alive_connection_has_its_own_deadline(served):
    srv, _ = served
    with _connect(srv) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = s.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
        status, _ = _error(_until_closed(s))
    assert status == 408


def _post_head(key: str, body: bytes, path: bytes = b"/v1/memories") -> bytes:
    return (b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer "
            + key.encode() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")


def test_a_body_that_stops_arriving_is_408_and_nothing_is_written(served):
    srv, key = served
    body = json.dumps({"text": "I keep bees on the roof.", "user_id": "ana"}).encode()
    with _connect(srv) as s:
        s.sendall(_post_head(key, body) + body[:10])
        reply = _until_closed(s)  # the connection is closed after the answer
    status, err = _error(reply)
    assert status == 408 and err["error"]["type"] == "RequestTimeoutError" and "body" in err["error"]["message"]
    assert b"connection: close" in reply.lower()
    assert _memories(srv, key) == []


def test_a_body_cut_short_by_the_client_is_never_acted_on(served):
    srv, key = served
    # Cut where what arrived is still a whole JSON object: only the declared length tells it is not all.
    body = json.dumps({"text": "I keep wasps on the roof.", "user_id": "ana"}).encode() + b" " * 50
    with _connect(srv) as s:
        s.sendall(_post_head(key, body) + body[:-20])
    assert wait_for(lambda: "status=400" in srv.log() and "path=/v1/memories" in srv.log())
    assert all("wasps" not in m["text"] for m in _memories(srv, key))


def test_hundreds_of_stalled_connections_neither_stay_nor_block_others(served):
    srv, key = served
    stalled = [_connect(srv) for _ in range(300)]
    try:
        for s in stalled[::2]:
            s.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\n")
        with srv.client(key) as c:  # served while all 300 are open
            assert c.post("/v1/search", json={"query": "bees", "user_id": "ana"}).status_code == 200
        for s in stalled:
            status, _ = _error(_until_closed(s))
            assert status == 408
    finally:
        for s in stalled:
            s.close()
    assert httpx.get(srv.url + "/healthz").status_code == 200


@pytest.mark.parametrize("value", ["0", "-1", "nan", "100000"])
def test_a_read_timeout_out_of_range_is_refused_at_start(tmp_path, value):
    make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    done = cli("serve", "--db", str(tmp_path / "m.db"), "--create", "--keys", str(tmp_path / "keys.json"),
               "--port", "0", "--read-timeout", value)
    assert done.returncode == 2 and "--read-timeout takes seconds in 0.1..3600" in done.stderr, done.stderr


@pytest.mark.parametrize("garbage", [b"\x00\x01\x02 nonsense\r\n\r\n", b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
                                     b"POST /v1/search HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"])
def test_bytes_that_are_not_http_get_the_json_error_and_a_closed_connection(served, garbage):
    srv, _ = served
    with _connect(srv) as s:
        s.sendall(garbage)
        reply = _until_closed(s)
    status, body = _error(reply)
    assert status == 400 and body["error"]["type"] == "MalformedRequestError", reply
    assert b"content-type: application/json" in reply.lower()


def test_a_bare_line_break_between_requests_starts_the_clock(served):
    srv, _ = served
    with _connect(srv) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        s.sendall(b"\r\n")  # begins no request, but stops uvicorn's keep-alive timer
        status, _ = _error(_until_closed(s))
    assert status == 408


def test_an_answer_given_before_the_body_is_read_closes_the_connection(served):
    srv, _ = served
    with _connect(srv) as s:
        # no key, and one byte of a body the 401 does not wait for (sent with the head: a byte sent
        # after the close would make the close a reset, which may lose the answer)
        s.sendall(b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx")
        reply = _until_closed(s)
    status, body = _error(reply)
    assert status == 401 and b"connection: close" in reply.lower(), reply


def test_a_pipelined_request_waits_for_the_answer_before_it_and_both_are_answered(served):
    srv, key = served
    items = [f"Pipelined fact {i}: the kiln fires at {i} degrees." for i in range(300)]
    body = json.dumps({"user_id": "ana", "items": items, "batch_size": 1}).encode()
    head = _post_head(key, body, path=b"/v1/memories/batch")
    with _connect(srv) as s:
        s.sendall(head + body + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while reply.count(b"HTTP/1.1 ") < 2:
            chunk = s.recv(65536)
            assert chunk, reply[-300:]
            reply += chunk
    first, second = reply.split(b"HTTP/1.1 ")[1:3]
    assert first.startswith(b"200") and second.startswith(b"200"), reply[:300]


@pytest.mark.parametrize("requests", [1, 3])
def test_a_client_that_half_closes_after_its_requests_gets_every_answer(served, requests):
    srv, _ = served
    with _connect(srv) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * requests)  # pipelined when 3
        s.shutdown(socket.SHUT_WR)
        reply = _until_closed(s)
    assert reply.startswith(b"HTTP/1.1 200") and reply.count(b"HTTP/1.1 200") == requests, reply


def test_a_head_over_its_bound_is_431_and_closed(served):
    srv, _ = served
    refused = False
    with _connect(srv) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        try:
            for _ in range(2000):  # 8 MB, sent at once: far past the 64 kB bound, which closes it
                s.sendall(b"a" * 4096)
        except OSError:
            refused = True  # the server closed the connection while the head was still coming
        try:
            reply = _until_closed(s)
        except ConnectionResetError:
            reply = b""  # the close reset the connection: the answer may be lost with it
    # Unbounded, the whole 8 MB would be read and the head, never finished, answered 408 only later.
    assert refused or reply.startswith(b"HTTP/1.1 431"), reply[:200]
    if reply:
        status, body = _error(reply)
        assert status == 431 and body["error"]["type"] == "HeadTooLargeError"
    assert httpx.get(srv.url + "/healthz").status_code == 200


def test_a_websocket_upgrade_is_answered_as_http_in_json(served):
    srv, _ = served
    with _connect(srv) as s:
        s.sendall(b"GET /v1/memories HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                  b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        head = s.recv(65536)
    assert head.startswith(b"HTTP/1.1 401") and b"application/json" in head.lower(), head


def test_a_client_that_stops_reading_is_dropped_and_a_graceful_stop_ends(tmp_path):
    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"})
    srv = ServeProcess(tmp_path / "m.db", tmp_path / "keys.json", extra=("--read-timeout", str(READ_TIMEOUT))).start()
    stopped = None
    try:
        with srv.client(keys["ana"]) as c:
            items = [f"Fact {i} about the allotment: " + "beans and marrows " * 40 for i in range(200)]
            assert c.post("/v1/memories/batch", json={"user_id": "ana", "items": items}).status_code == 200
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        host, port = srv.url.removeprefix("http://").rsplit(":", 1)
        s.connect((host, int(port)))
        get = (b"GET /v1/memories?user_id=ana&limit=1000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
               + keys["ana"].encode() + b"\r\n\r\n")
        s.sendall(get * 10)  # ten answers of ~150 kB each, none of them read
        # SIGTERM waits for the answers being sent; the client that reads none is dropped after
        # the read timeout, so the stop ends (before, it waited until the client went away).
        srv.send(signal.SIGTERM)
        assert wait_for(lambda: srv.proc.poll() is not None, timeout=30.0), "the graceful stop did not end"
        stopped = srv.proc.returncode
        s.close()
    finally:
        code = srv.stop()
    assert stopped == 0 == code, srv.log()
