"""``memsieve serve``: one memory service over HTTP for many agents and tenants.

A JSON REST API under ``/v1`` (Starlette + uvicorn, the ``memsieve[server]``
extra) over one store, SQLite or PostgreSQL, with API keys that each grant some
scopes (memsieve.server.keys), an OpenAPI 3.1 document at ``/openapi.json``
built from the route table itself (memsieve.server.api), Prometheus metrics at
``/metrics`` (memsieve.server.metrics) and ``/healthz``/``/readyz``. Running,
workers and signals: memsieve.server.run.
"""

from __future__ import annotations

from memsieve.integrations import require_extra

require_extra("starlette", extra="server")
require_extra("uvicorn", extra="server")
