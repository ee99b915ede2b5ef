"""Prometheus metrics of the REST service, in the text exposition format, written by hand.

Nothing is sent anywhere: ``GET /metrics`` (an admin key) is the only way out.
A scrape answers for the whole service, whichever worker it reaches: with
``--workers N`` each worker counts its own requests and writes them, about
once a second (``FLUSH_SECONDS``) and when it stops, to a file of its own in a
directory the supervisor made (``ServeConfig.metrics_dir``); the worker that
answers a scrape adds its live counters to every other worker's file. A worker
that died still counts with what it last wrote, so a restart does not make a
counter go backwards, except for the last second of a worker killed with
SIGKILL, which it never wrote (Prometheus reads that as a counter reset).

Series:
    memsieve_http_requests_total{method, route, status}
    memsieve_http_request_duration_seconds{method, route} (histogram)
    memsieve_decisions_total{event}            write-gate decisions (ADD/UPDATE/DELETE/NOOP)
    memsieve_keys                              keys loaded from the keys file (the answering worker's)
    memsieve_keys_reloads_total{result}        SIGHUP rereads: ok or failed
    memsieve_workers                           worker processes counted (live, and dead ones' last counts)
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

#: Upper bounds (seconds) of the latency histogram's buckets; +Inf is added.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: How often a worker of several writes its counters for the others' scrapes.
FLUSH_SECONDS = 1.0

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def _num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


class Metrics:
    """The counters of one process; safe to update from any thread.

    Args:
        shared_dir: the directory the workers of one service write their
            counters to (None: this process is the whole service).
    """

    def __init__(self, shared_dir: str | None = None) -> None:
        self._lock = threading.Lock()
        self.pid = os.getpid()
        self.shared_dir = None if shared_dir is None else Path(shared_dir)
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.latency: dict[tuple[str, str], list[int]] = {}
        self.latency_sum: dict[tuple[str, str], float] = defaultdict(float)
        self.decisions: dict[str, int] = defaultdict(int)
        self.reloads: dict[str, int] = defaultdict(int)
        self.keys = 0
        self._changes = 0  # bumped by every update, so an idle worker writes nothing
        self._written = -1
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None

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
            self._changes += 1

    def decided(self, events: list[str]) -> None:
        with self._lock:
            for event in events:
                self.decisions[event] += 1
            self._changes += 1

    def reloaded(self, ok: bool, keys: int) -> None:
        with self._lock:
            self.reloads["ok" if ok else "failed"] += 1
            self.keys = keys
            self._changes += 1

    # ---- sharing among the workers of one service ---------------------------

    def _snapshot(self) -> dict[str, Any]:
        # This process's counters as a JSON-able dict (what it writes for the other workers); under the lock.
        return {"pid": self.pid,
                "requests": [[m, r, s, n] for (m, r, s), n in self.requests.items()],
                "latency": [[m, r, list(c), self.latency_sum[(m, r)]] for (m, r), c in self.latency.items()],
                "decisions": dict(self.decisions), "reloads": dict(self.reloads), "keys": self.keys}

    def start_sharing(self) -> None:
        """Write this worker's counters now and then every ``FLUSH_SECONDS`` (a daemon thread)."""
        if self.shared_dir is None or self._flusher is not None:
            return
        self.flush()

        def loop() -> None:
            while not self._stop.wait(FLUSH_SECONDS):
                self.flush()

        self._flusher = threading.Thread(target=loop, name="memsieve-metrics", daemon=True)
        self._flusher.start()

    def stop_sharing(self) -> None:
        """Write the counters one last time (a graceful stop loses none) and stop the thread."""
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join(timeout=5)
            self._flusher = None
        self.flush(force=True)

    def flush(self, *, force: bool = False) -> None:
        """Write the counters to ``<shared_dir>/<pid>.json`` if they changed since the last write."""
        if self.shared_dir is None:
            return
        with self._lock:
            if self._changes == self._written and not force:
                return
            changes, snap = self._changes, self._snapshot()
        path = self.shared_dir / f"{self.pid}.json"
        tmp = path.with_suffix(".tmp")
        # A failed write (a full disk) costs a scrape a second of counts, never a request.
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(snap))
            os.replace(tmp, path)  # atomic: a scrape reads the old file or the new one, never half
            with self._lock:
                self._written = max(self._written, changes)

    def _others(self) -> list[dict[str, Any]]:
        """The last written counters of every other worker of the service (dead ones included)."""
        if self.shared_dir is None:
            return []
        out = []
        for path in sorted(self.shared_dir.glob("*.json")):
            if path.stem == str(self.pid):
                continue
            with contextlib.suppress(OSError, ValueError):
                snap = json.loads(path.read_text())
                if isinstance(snap, dict):
                    out.append(snap)
        return out

    def render(self) -> str:
        """Every series, summed over the service's workers, in the text exposition format (version 0.0.4)."""
        with self._lock:
            mine = self._snapshot()
        return render(merge([mine, *self._others()]), keys=mine["keys"])


def merge(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    """The sum of several workers' counters (as ``Metrics`` writes them), counter by counter."""
    requests: dict[tuple[str, str, int], int] = defaultdict(int)
    latency: dict[tuple[str, str], list[int]] = {}
    latency_sum: dict[tuple[str, str], float] = defaultdict(float)
    decisions: dict[str, int] = defaultdict(int)
    reloads: dict[str, int] = defaultdict(int)
    for snap in snapshots:
        for m, r, st, n in snap.get("requests", ()):
            requests[(str(m), str(r), int(st))] += int(n)
        for m, r, counts, total in snap.get("latency", ()):
            have = latency.setdefault((str(m), str(r)), [0] * (len(BUCKETS) + 1))
            for i, n in enumerate(counts[:len(have)]):
                have[i] += int(n)
            latency_sum[(str(m), str(r))] += float(total)
        for event, n in snap.get("decisions", {}).items():
            decisions[str(event)] += int(n)
        for result, n in snap.get("reloads", {}).items():
            reloads[str(result)] += int(n)
    return {"requests": requests, "latency": latency, "latency_sum": latency_sum, "decisions": decisions,
            "reloads": reloads, "workers": len(snapshots)}


def render(total: dict[str, Any], *, keys: int) -> str:
    """The exposition text of merged counters (``merge``)."""
    out = ["# HELP memsieve_http_requests_total HTTP requests answered, by method, route and status.",
           "# TYPE memsieve_http_requests_total counter"]
    for (method, route, status), n in sorted(total["requests"].items()):
        out.append(f"memsieve_http_requests_total{_labels(method=method, route=route, status=status)} {n}")
    out += ["# HELP memsieve_http_request_duration_seconds Time to answer a request, by method and route.",
            "# TYPE memsieve_http_request_duration_seconds histogram"]
    for (method, route), counts in sorted(total["latency"].items()):
        for bound, n in zip([*map(_num, BUCKETS), "+Inf"], counts):
            out.append("memsieve_http_request_duration_seconds_bucket"
                       f"{_labels(method=method, route=route, le=bound)} {n}")
        out.append(f"memsieve_http_request_duration_seconds_sum{_labels(method=method, route=route)}"
                   f" {total['latency_sum'][(method, route)]!r}")
        out.append(f"memsieve_http_request_duration_seconds_count{_labels(method=method, route=route)} {counts[-1]}")
    out += ["# HELP memsieve_decisions_total Write-gate decisions made through this service, by event.",
            "# TYPE memsieve_decisions_total counter"]
    for event in ("ADD", "UPDATE", "DELETE", "NOOP"):
        out.append(f"memsieve_decisions_total{_labels(event=event)} {total['decisions'].get(event, 0)}")
    out += ["# HELP memsieve_keys API keys loaded from the keys file.", "# TYPE memsieve_keys gauge",
            f"memsieve_keys {keys}",
            "# HELP memsieve_keys_reloads_total Rereads of the keys file on SIGHUP, by result.",
            "# TYPE memsieve_keys_reloads_total counter"]
    for result in ("ok", "failed"):
        out.append(f"memsieve_keys_reloads_total{_labels(result=result)} {total['reloads'].get(result, 0)}")
    out += ["# HELP memsieve_workers Worker processes whose counters this scrape sums (a dead one's last counts).",
            "# TYPE memsieve_workers gauge", f"memsieve_workers {total['workers']}"]
    return "\n".join(out) + "\n"
