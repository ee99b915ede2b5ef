"""Prometheus metrics of the REST service, in the text exposition format, written by hand.

Nothing is sent anywhere: ``GET /metrics`` (an admin key) is the only way out.
Each worker process counts its own requests, so with ``--workers N`` a scrape
sees the worker that answered it; every series carries that worker's ``pid``
so two scrapes are never confused for one counter going backwards.

Series:
    memsieve_http_requests_total{method, route, status}
    memsieve_http_request_duration_seconds{method, route} (histogram)
    memsieve_decisions_total{event}            write-gate decisions (ADD/UPDATE/DELETE/NOOP)
    memsieve_keys                              keys loaded from the keys file
    memsieve_keys_reloads_total{result}        SIGHUP rereads: ok or failed
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict

#: Upper bounds (seconds) of the latency histogram's buckets; +Inf is added.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def _num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


class Metrics:
    """The counters of one process; safe to update from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pid = os.getpid()
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.latency: dict[tuple[str, str], list[int]] = {}
        self.latency_sum: dict[tuple[str, str], float] = defaultdict(float)
        self.decisions: dict[str, int] = defaultdict(int)
        self.reloads: dict[str, int] = defaultdict(int)
        self.keys = 0

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request and its latency."""
        with self._lock:
            self.requests[(method, route, status)] += 1
            counts = self.latency.setdefault((method, route), [0] * (len(BUCKETS) + 1))
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    counts[i] += 1
            counts[-1] += 1  # +Inf: every observation
            self.latency_sum[(method, route)] += seconds

    def decided(self, events: list[str]) -> None:
        with self._lock:
            for event in events:
                self.decisions[event] += 1

    def reloaded(self, ok: bool, keys: int) -> None:
        with self._lock:
            self.reloads["ok" if ok else "failed"] += 1
            self.keys = keys

    def render(self) -> str:
        """Every series in the text exposition format (version 0.0.4)."""
        pid = self.pid
        out: list[str] = []
        with self._lock:
            out += ["# HELP memsieve_http_requests_total HTTP requests answered, by method, route and status.",
                    "# TYPE memsieve_http_requests_total counter"]
            for (method, route, status), n in sorted(self.requests.items()):
                out.append(f"memsieve_http_requests_total{_labels(method=method, route=route, status=status, pid=pid)}"
                           f" {n}")
            out += ["# HELP memsieve_http_request_duration_seconds Time to answer a request, by method and route.",
                    "# TYPE memsieve_http_request_duration_seconds histogram"]
            for (method, route), counts in sorted(self.latency.items()):
                for bound, n in zip([*map(_num, BUCKETS), "+Inf"], counts):
                    out.append("memsieve_http_request_duration_seconds_bucket"
                               f"{_labels(method=method, route=route, le=bound, pid=pid)} {n}")
                out.append(f"memsieve_http_request_duration_seconds_sum{_labels(method=method, route=route, pid=pid)}"
                           f" {self.latency_sum[(method, route)]!r}")
                out.append("memsieve_http_request_duration_seconds_count"
                           f"{_labels(method=method, route=route, pid=pid)} {counts[-1]}")
            out += ["# HELP memsieve_decisions_total Write-gate decisions made through this server, by event.",
                    "# TYPE memsieve_decisions_total counter"]
            for event in ("ADD", "UPDATE", "DELETE", "NOOP"):
                out.append(f"memsieve_decisions_total{_labels(event=event, pid=pid)} {self.decisions.get(event, 0)}")
            out += ["# HELP memsieve_keys API keys loaded from the keys file.", "# TYPE memsieve_keys gauge",
                    f"memsieve_keys{_labels(pid=pid)} {self.keys}",
                    "# HELP memsieve_keys_reloads_total Rereads of the keys file on SIGHUP, by result.",
                    "# TYPE memsieve_keys_reloads_total counter"]
            for result in ("ok", "failed"):
                out.append(f"memsieve_keys_reloads_total{_labels(result=result, pid=pid)} {self.reloads.get(result, 0)}")
        return "\n".join(out) + "\n"
