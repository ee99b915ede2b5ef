"""How the PostgreSQL store moves embeddings across the wire, and shows its URL without the password.

Embeddings travel in pgvector's binary format (a big-endian uint16 width, a
uint16 reserved word, then big-endian float32 values), so a scope's matrix is
read with one ``frombuffer`` per row instead of parsing decimal text. The
``pgvector`` PyPI package is not needed for this.
"""

from __future__ import annotations

import re
import struct
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

_HEADER = struct.Struct(">HH")
_BE_F32 = np.dtype(">f4")
_QUERY_PASSWORD = re.compile(r"(^|[?&])password=[^&]*", re.IGNORECASE)


def register_vector(conn: Any) -> None:
    """Teach a psycopg connection to send (d,) float32 arrays as ``vector`` and read ``vector`` as float32.

    Call after the ``vector`` extension exists in the database.
    """
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format

    row = conn.execute("SELECT 'vector'::regtype::oid").fetchone()
    oid = int(row[0])

    class VectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            v = np.ascontiguousarray(obj, dtype=_BE_F32).reshape(-1)
            return _HEADER.pack(v.shape[0], 0) + v.tobytes()

    VectorDumper.oid = oid

    class VectorBinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            dim, _ = _HEADER.unpack_from(data)
            return np.frombuffer(data, dtype=_BE_F32, count=dim, offset=_HEADER.size).astype(np.float32)

    class VectorTextLoader(Loader):
        format = Format.TEXT

        def load(self, data: Any) -> np.ndarray:
            body = bytes(data).strip()[1:-1]
            if not body:
                return np.empty(0, dtype=np.float32)
            return np.array(body.split(b","), dtype=np.float32)

    conn.adapters.register_dumper(np.ndarray, VectorDumper)
    conn.adapters.register_loader(oid, VectorBinaryLoader)
    conn.adapters.register_loader(oid, VectorTextLoader)


def mask_password(url: str) -> str:
    """The URL with any password (in the authority or the query) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user, _ = userinfo.split(":", 1)
            netloc = f"{user}:***@{host}"
    # A regex, not a query parser: a malformed query must not let a password through.
    query = _QUERY_PASSWORD.sub(r"\1password=***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
