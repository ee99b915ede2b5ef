"""The inspector page at ``/ui``: static HTML, JavaScript and CSS shipped in memsieve/server/ui/.

The page itself needs no key (it asks for one, keeps it in sessionStorage and
sends it as a bearer token on every API call, which the API checks as always).
Under ``memsieve ui`` the process holds one ephemeral admin key; the page is
then served with that key in a ``<meta name="memsieve-key">`` tag, so it works
without asking, and the front door answers only requests whose Host is a
loopback name (a page elsewhere cannot rebind a hostname to this port and read
the key).
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from typing import Any

#: path under /ui/ -> (file in the package, content type).
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "style.css": ("style.css", "text/css; charset=utf-8"),
}
_KEY_TAG = '<meta name="memsieve-key" content="">'
_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def is_ui_path(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


@cache
def _read(name: str) -> bytes:
    return resources.files("memsieve.server").joinpath("ui", name).read_bytes()


def host_is_loopback(host_header: str | None) -> bool:
    """Whether a Host header names this machine by a loopback name (any port)."""
    if not host_header:
        return False
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[: host.find("]") + 1] if "]" in host else host
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host in LOOPBACK_HOSTS


def response(path: str, *, ui_key: str | None) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
    """(status, headers, body) of a GET of ``path`` (under /ui), or None for no such file."""
    rest = path[len("/ui"):].lstrip("/")
    found = FILES.get(rest)
    if found is None:
        return None
    name, content_type = found
    body = _read(name)
    if name == "index.html" and ui_key is not None:
        tag = f'<meta name="memsieve-key" content="{html.escape(ui_key, quote=True)}">'
        body = body.replace(_KEY_TAG.encode(), tag.encode(), 1)
    return 200, [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode()),
                 *_HEADERS], body


async def send(send_fn: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes, *, head: bool) -> None:
    await send_fn({"type": "http.response.start", "status": status, "headers": headers})
    await send_fn({"type": "http.response.body", "body": b"" if head else body})
