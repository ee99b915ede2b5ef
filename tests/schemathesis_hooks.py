"""Schemathesis hooks for tests/test_server_schema.py (loaded through SCHEMATHESIS_HOOKS).

Two rules of the service that an OpenAPI document cannot state are given to
each generated request, so that every other rule is checked as published:

- an Idempotency-Key names one request; the generator reuses short values
  ("0") across different requests, which the service rightly answers 422, so
  each request gets a fresh key;
- a GET of a scope's lists needs one of user_id, agent_id, run_id (a query
  string cannot say "at least one of"), so a query that names none gets one.
"""

from __future__ import annotations

import uuid
from typing import Any

import schemathesis

SCOPED_GETS = {"/v1/memories", "/v1/faults", "/v1/merges", "/v1/rejections", "/v1/stats"}


@schemathesis.hook
def before_call(context: Any, case: Any, **kwargs: Any) -> None:
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = uuid.uuid4().hex
    if case.method.upper() == "GET" and case.path in SCOPED_GETS:
        query = dict(case.query or {})
        if all(query.get(k) is None for k in ("user_id", "agent_id", "run_id")):
            query["user_id"] = "schemathesis"
            case.query = query
