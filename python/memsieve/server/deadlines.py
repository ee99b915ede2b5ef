"""How long a client may take to send a request: its head, then its body; and the answer to bytes
that are not HTTP.

A connection costs the service a file descriptor and a little memory for as
long as it stays open. uvicorn closes a kept-alive connection that idles
between requests, but waits without end for a connection that sends nothing,
or sends a request's head or body a byte at a time: a few hundred such clients
("slowloris") hold the service's descriptors. Two deadlines bound them:

- the **head** of every request (method, path, headers) must arrive within
  ``read_timeout`` seconds of the connection opening, or of the request's first
  byte on a kept-alive connection. Past it the service answers 408 and closes.
  The app never sees such a request, so this is the protocol's work:
  ``HeadDeadlineProtocol`` is uvicorn's httptools protocol (the ``[server]``
  extra installs httptools) with a timer armed and cleared by its own parser
  callbacks;
- the **body** must arrive within ``read_timeout`` seconds of its head
  (``body_deadline``, used by the app while it reads): else a 408, and nothing
  of the request is done.

Bytes the parser cannot read as HTTP get a 400 in the service's JSON error
format (``MalformedRequestError``), not uvicorn's plain text; a head over
``MAX_HEAD_BYTES`` a 431. Bytes that arrive while no request is served and
that begin none (a bare CRLF, the rest of a body answered unread) start the
head's clock too, and a pipelined request's clock waits until the answer
before it is sent. A client that half-closes after its request gets its answer;
one that stops reading its answers for ``read_timeout`` seconds while they fill
the socket is dropped, so that a graceful stop does not wait for it without end.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from memsieve.server.errors import HeadTooLargeError, MalformedRequestError, RequestTimeoutError, error_body

#: Default seconds a client has for a request's head, and again for its body (1 MiB, the default
#: body limit, at 35 kB/s).
DEFAULT_READ_TIMEOUT = 30.0


def _closing_response(status: bytes, error: Exception) -> bytes:
    """A whole HTTP response carrying ``error`` as the service's JSON error, closing the connection."""
    body = json.dumps(error_body(error)).encode()
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


#: Most bytes a request's head (request line and headers) may take: more is a 431 and the
#: connection closes (httptools itself sets no bound; a 42 MB header was read whole).
MAX_HEAD_BYTES = 64 * 1024

#: What a head over MAX_HEAD_BYTES gets.
TOO_LARGE_HEAD = _closing_response(b"431 Request Header Fields Too Large", HeadTooLargeError(
    f"the request's head is over {MAX_HEAD_BYTES:,} bytes; send fewer or shorter headers"))

#: What a request that is not HTTP gets: the service's JSON error, not uvicorn's plain text.
NOT_HTTP = _closing_response(b"400 Bad Request", MalformedRequestError(
    "the request is not valid HTTP/1.1 (a malformed request line, header or chunk); send a well-formed request"))


def head_deadline_protocol(read_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol that answers 408 and closes when a request's head is late."""
    late = _closing_response(b"408 Request Timeout", RequestTimeoutError(
        f"the request's head did not arrive within {read_timeout:g} s; send it whole and promptly, or ask the "
        "operator for a larger --read-timeout"))

    class HeadDeadlineProtocol(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _write_timer: asyncio.TimerHandle | None = None
        _head_bytes = 0
        _eof = False

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.is_closing():
                return
            if self._head_timer is None and not self._serving():
                # Bytes that arrive while no request is served and that began none: a bare CRLF
                # between requests, or the rest of a body that was answered unread (a 401).
                # uvicorn's keep-alive timer stopped at them; this deadline takes its place.
                self._arm()
            if self._head_timer is not None:  # still waiting for a head: count what it costs
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD_BYTES:
                    self._close_with(TOO_LARGE_HEAD)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._head_timer is None:  # the next request on a kept-alive connection
                self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def eof_received(self) -> bool | None:
            # A client that half-closes after its whole request still reads the answer: keep the
            # transport open until it is sent (on_response_complete closes it). One that stops
            # inside its body sends no more: closing tells the app, which then does nothing.
            self._eof = True
            return True if self._serving() and not self.cycle.more_body else None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # after the last answer: a request pipelined before the half-close is answered too
            if self._eof and not self._serving() and not self.transport.is_closing():
                self.transport.close()

        def pause_writing(self) -> None:
            # The client stopped reading and the answer fills the socket: it has read_timeout to
            # take some of it, or the connection is dropped (a graceful stop would wait for it).
            super().pause_writing()
            if self._write_timer is None:
                self._write_timer = self.loop.call_later(read_timeout, self._not_reading)

        def resume_writing(self) -> None:
            super().resume_writing()
            self._stop_write_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._stop_write_timer()
            super().connection_lost(exc)

        def _not_reading(self) -> None:
            self._write_timer = None
            if self.cycle is not None:
                # as connection_lost will say, at once: the app's next send is dropped, not
                # written to a transport that is closing
                self.cycle.disconnected = True
            self.transport.abort()

        def _stop_write_timer(self) -> None:
            if self._write_timer is not None:
                self._write_timer.cancel()
                self._write_timer = None

        def send_400_response(self, msg: str) -> None:
            # uvicorn's own answer to bytes that are not HTTP is plain text; every answer here is JSON.
            self._close_with(NOT_HTTP)

        def _serving(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(read_timeout, self._head_is_late)

        def _disarm(self) -> None:
            self._head_bytes = 0
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_is_late(self) -> None:
            self._head_timer = None
            if self._serving():
                # A pipelined request's head waits behind the answer to the one before it: the
                # clock runs from when the server is free to read it.
                self._arm()
                return
            self._close_with(late)

        def _close_with(self, response: bytes) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self.transport.write(response)
                self.transport.close()

    return HeadDeadlineProtocol


async def body_deadline(receive: Any, deadline: float, *, read_timeout: float) -> Any:
    """The next ASGI message of a request whose body must be read by the loop time ``deadline``.

    Raises:
        RequestTimeoutError: the deadline passed first.
    """
    left = deadline - asyncio.get_running_loop().time()
    try:
        return await asyncio.wait_for(receive(), timeout=max(left, 0.0))
    except asyncio.TimeoutError:
        raise RequestTimeoutError(f"the request's body did not arrive within {read_timeout:g} s; send it whole "
                                  "and promptly, or ask the operator for a larger --read-timeout") from None
