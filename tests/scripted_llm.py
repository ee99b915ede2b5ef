"""A scripted OpenAI-compatible chat server for adversarial LLM tests.

Real model output is not reproducible enough to test decision logic against
specific failures (an in-range but wrong index, a forged instruction, a broken
JSON object), so this server replies with whatever a test queues. It speaks
just enough of ``POST /v1/chat/completions`` for the ``openai`` client, and
records every request body so tests can inspect the prompt that was sent.

Usage::

    with ScriptedLLM() as server:
        server.reply('{"event": "ADD", "index": null, "text": null, "reason": "new"}')
        client = LLMClient(LLMConfig(base_url=server.base_url, model="scripted"))
        ...
        assert server.requests[0]["messages"][1]["content"] ...
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class _Step:
    """One scripted response: a reply, an HTTP error, or a delayed reply."""

    status: int = 200
    content: str | None = ""
    delay: float = 0.0
    finish_reason: str = "stop"
    usage: tuple[int, int] = (11, 7)


class ScriptedLLM:
    """Threaded HTTP server on 127.0.0.1 (free port) replaying queued steps.

    Each incoming request consumes one queued step, in order. With nothing
    queued the server answers HTTP 500 and counts it in :attr:`unscripted`, so a
    test that makes more calls than it expects sees a failure, not a hang.

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1``, for LLMConfig.
        requests: JSON bodies of every chat request received, in order.
        reject_response_format: When True, any request carrying
            ``response_format`` gets HTTP 400 without consuming a step (like a
            server that does not support the field).
        unscripted: Requests that arrived with no step queued.
    """

    def __init__(self) -> None:
        self._steps: deque[_Step] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.requests: list[dict] = []
        self.reject_response_format = False
        self.unscripted = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        # A short poll interval keeps shutdown (once per test) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- scripting -------------------------------------------------------------
    def reply(self, content: str | None, *, finish_reason: str = "stop",
              usage: tuple[int, int] = (11, 7)) -> None:
        """Queue a 200 reply whose message content is ``content``."""
        with self._lock:
            self._steps.append(_Step(content=content, finish_reason=finish_reason, usage=usage))

    def reply_json(self, obj: dict) -> None:
        """Queue a 200 reply whose content is ``obj`` serialized as JSON."""
        self.reply(json.dumps(obj))

    def fail(self, status: int, message: str = "scripted failure") -> None:
        """Queue an HTTP error response with an OpenAI-style error body."""
        with self._lock:
            self._steps.append(_Step(status=status, content=message))

    def stall(self, seconds: float, content: str = "{}") -> None:
        """Queue a reply that arrives only after ``seconds`` (for timeouts)."""
        with self._lock:
            self._steps.append(_Step(content=content, delay=seconds))

    def pending(self) -> int:
        """Number of queued steps not consumed yet."""
        with self._lock:
            return len(self._steps)

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()  # wakes stalled handlers so shutdown does not wait
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- HTTP ------------------------------------------------------------------
    def _next_step(self, body: dict) -> _Step:
        with self._lock:
            self.requests.append(body)
            if self.reject_response_format and "response_format" in body:
                return _Step(status=400, content="response_format is not supported")
            if self._steps:
                return self._steps.popleft()
            self.unscripted += 1
            return _Step(status=500, content="no scripted step queued")

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to deliver

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                step = server._next_step(body)
                if step.delay and server._closing.wait(step.delay):
                    return
                if step.status != 200:
                    self._send(step.status, {"error": {"message": step.content, "type": "scripted",
                                                       "code": step.status}})
                    return
                prompt, completion = step.usage
                self._send(200, {
                    "id": f"chatcmpl-scripted-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": step.content},
                        "finish_reason": step.finish_reason,
                    }],
                    "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion},
                })

        return Handler
