"""A real ``memsieve serve`` process for the tests, and API keys for it.

    keys = make_keys(tmp_path / "keys.json", ana={"user_id": "ana"}, ops={"admin": True})
    with ServeProcess(db, keys_path) as srv:
        httpx.get(srv.url + "/healthz")

The process is ``python -m memsieve.cli serve ...`` with PYTHONPATH set to
this worktree's python/ (the installed ``memsieve`` script may point at
another checkout). It listens on a free port (``--port 0``) that its first
stderr line names; stderr goes to a file the tests read (the request log).
"""

from __future__ import annotations

import os
import re
import signal as signals
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

PYTHON_DIR = str(Path(__file__).resolve().parent.parent / "python")
START_TIMEOUT = 120.0


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = PYTHON_DIR + (os.pathsep + out["PYTHONPATH"] if out.get("PYTHONPATH") else "")
    return out


def make_keys(path: Path, **grants: dict[str, Any]) -> dict[str, str]:
    """Add one key per name to the keys file at ``path``; returns name -> key (in clear, for the test)."""
    from memsieve.server.keys import add_key

    return {name: add_key(str(path), name=name, **grant)[0] for name, grant in grants.items()}


def wait_for(predicate: Any, timeout: float = 20.0) -> bool:
    """Poll ``predicate`` every 0.1 s until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memsieve.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env(), stdin=subprocess.DEVNULL)


class ServeProcess:
    """``memsieve serve`` in a child process, ready (``/readyz`` 200) when ``start()`` returns."""

    def __init__(self, db: str | Path, keys_path: str | Path, *, workers: int = 1, extra: tuple[str, ...] = (),
                 log_path: Path | None = None) -> None:
        self.args = ["serve", "--db", str(db), "--keys", str(keys_path), "--port", "0", "--workers", str(workers),
                     *extra]
        if not str(db).startswith("postgresql://"):
            self.args.append("--create")
        self.log_path = log_path or Path(str(keys_path) + f".{os.getpid()}.{time.monotonic_ns()}.log")
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> "ServeProcess":
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "memsieve.cli", *self.args], stdout=subprocess.DEVNULL,
                                     stderr=self._log, stdin=subprocess.DEVNULL, env=env())
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"memsieve serve exited with {self.proc.returncode}:\n{self.log()}")
            if not self.url:
                found = re.search(r"listening on (http://[^ ]+)", self.log())
                if found:
                    self.url = found.group(1)
            if self.url:
                try:
                    if httpx.get(self.url + "/readyz", timeout=2.0).status_code == 200:
                        return self
                except httpx.HTTPError:
                    pass
            time.sleep(0.2)
        self.stop(signals.SIGKILL)
        raise RuntimeError(f"memsieve serve was not ready in {START_TIMEOUT} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def send(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self, sig: int = signals.SIGTERM, timeout: float = 60.0) -> int:
        """Send ``sig`` and wait; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def client(self, key: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=kwargs.pop("timeout", 60.0), **kwargs)

    def __enter__(self) -> "ServeProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
