"""Running ``memsieve serve``: the listening socket, the worker processes, and the signals.

One process binds the socket. With ``--workers 1`` it serves on it itself;
with N > 1 it becomes a small supervisor that starts N worker processes
(``python -m memsieve.server.worker``), each inheriting the socket, so the
kernel spreads connections among them (no sticky sessions: every worker has its
own ``Memory`` on the same store, and PostgreSQL's per-scope advisory locks and
revision counters keep them consistent; SQLite's WAL and locks do on one host).

Signals:
    SIGHUP: every worker rereads the keys file (a bad file keeps the keys in force).
    SIGTERM, SIGINT: stop accepting, finish the requests in flight (writes included),
        close the store, exit 0. The supervisor forwards the signal and waits.

A worker that dies is restarted after a second; one that fails to start
(exit 2: a bad database or keys file) stops the service with exit 2.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import socket
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from typing import Any

from memsieve.errors import ConfigError, MemsieveError
from memsieve.server.app import DEFAULT_CONSOLIDATE_SECONDS, ServeConfig, build_app, log
from memsieve.server.deadlines import DEFAULT_READ_TIMEOUT, head_deadline_protocol
from memsieve.server.keys import KeyRing

#: Exit code of a process that reported a MemsieveError (as the CLI's).
REPORTED = 2
MAX_WORKERS = 64


def check_options(*, host: Any, port: Any, workers: Any, max_body_bytes: Any,
                  read_timeout: Any = DEFAULT_READ_TIMEOUT,
                  consolidate_seconds: Any = DEFAULT_CONSOLIDATE_SECONDS) -> None:
    """Refuse malformed serve options before anything is opened.

    Raises:
        ConfigError: naming the option and what it takes.
    """
    if not isinstance(host, str) or not host:
        raise ConfigError(f"--host takes an address such as 127.0.0.1, got {host!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"--port takes a TCP port in 0..65535 (0: any free one), got {port!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(f"--workers takes a number of processes in 1..{MAX_WORKERS}, got {workers!r}")
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes < 1024:
        raise ConfigError(f"--max-body-bytes takes a number of bytes >= 1024, got {max_body_bytes!r}")
    if (isinstance(read_timeout, bool) or not isinstance(read_timeout, (int, float))
            or not 0.1 <= read_timeout <= 3600):
        raise ConfigError(f"--read-timeout takes seconds in 0.1..3600, got {read_timeout!r}")
    if (isinstance(consolidate_seconds, bool) or not isinstance(consolidate_seconds, (int, float))
            or not 0.1 <= consolidate_seconds <= 86400):
        raise ConfigError(f"--consolidate-seconds takes seconds in 0.1..86400, got {consolidate_seconds!r}")


def check_llm_options(*, base_url: Any, model: Any, api_key_env: Any) -> None:
    """Refuse malformed LLM options before anything is opened.

    Raises:
        ConfigError: naming the option and what it takes.
    """
    if base_url is not None and (not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))):
        raise ConfigError(f"--llm-base-url takes an http(s) URL of an OpenAI-compatible API, got {base_url!r}; "
                          "e.g. --llm-base-url http://127.0.0.1:8080/v1")
    if not isinstance(model, str) or not model:
        raise ConfigError(f"--llm-model takes a model name, got {model!r}")
    if not isinstance(api_key_env, str) or not api_key_env.replace("_", "").isalnum():
        raise ConfigError(f"--llm-api-key-env takes the name of an environment variable, got {api_key_env!r}; "
                          "e.g. OPENAI_API_KEY")


def check_cache_mb(mb: Any) -> int | None:
    """``--max-cache-mb`` as bytes (None: the default bound).

    Raises:
        ConfigError: not a positive number of MiB.
    """
    if mb is None:
        return None
    if isinstance(mb, bool) or not isinstance(mb, (int, float)) or not math.isfinite(mb) or mb <= 0:
        raise ConfigError(f"--max-cache-mb takes a positive number of MiB, got {mb!r}; e.g. --max-cache-mb 64")
    return max(1, int(mb * 1024 * 1024))


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port, inheritable by worker processes.

    Raises:
        ConfigError: the address cannot be bound (in use, or not local).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say
    # they are TCP, and without it a kept-alive connection waits ~40 ms per
    # response (Nagle holding the body behind the headers, the client's delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port, or "
                          "stop what holds it") from None
    sock.set_inheritable(True)
    return sock


def _open_memory(config: ServeConfig) -> Any:
    from memsieve import Memory
    from memsieve.errors import StoreError

    target = config.db
    if not config.create and target != ":memory:" and not target.startswith(("postgresql://", "postgres://")) \
            and not os.path.exists(target):
        raise StoreError(f"no database at {target!r}; pass --db with the path of an existing database, or --create "
                         "to start a new one")
    options: dict[str, Any] = {}
    if config.max_cache_bytes is not None:
        options["max_cache_bytes"] = config.max_cache_bytes
    if config.llm_base_url is not None:
        from memsieve.llm import LLMConfig

        options["llm"] = LLMConfig(base_url=config.llm_base_url, model=config.llm_model,
                                   api_key=os.environ.get(config.llm_api_key_env) or "not-needed")
    if config.router_path is not None:
        options["router"] = load_router(config.router_path)
    return Memory(target, **options)


def load_router(path: str) -> Any:
    """The saved ``QueryRouter`` at ``path``.

    Raises:
        ConfigError: no such file, or not what ``QueryRouter.save()`` wrote.
    """
    from memsieve.router import QueryRouter

    if not os.path.isfile(path):
        raise ConfigError(f"no router file at {path!r}; pass --router with what QueryRouter.save() wrote")
    return QueryRouter.load(path)


def run_worker(config: ServeConfig, sock: socket.socket, *, keyring: KeyRing | None = None,
               ui_key: str | None = None) -> int:
    """Serve ``config`` on ``sock`` in this process until SIGTERM or SIGINT; 0 after a clean stop.

    The store is opened and the embedder loaded before the first connection is
    accepted, so a bad database is one line on stderr (exit 2), and the first
    add is not slow. ``keyring`` and ``ui_key``: those of ``memsieve ui`` (see serve_ui).
    """
    import uvicorn

    keyring = keyring if keyring is not None else KeyRing(config.keys_path)
    holder: dict[str, Any] = {}

    def on_hup(signum: int, frame: Any) -> None:
        front = holder.get("app")
        if front is not None:
            front.state.reload_keys()
        else:  # still starting: reread now; the app is built on this keyring
            keyring.reload()

    signal.signal(signal.SIGHUP, on_hup)
    memory = _open_memory(config)
    try:
        memory.embed(["warm up"])  # load the embedder now, not on the first request
        front = build_app(config, memory, keyring=keyring, ui_key=ui_key)
    except BaseException:
        memory.close()
        raise
    holder["app"] = front
    front.state.metrics.start_sharing()
    # The head of every request has a deadline (memsieve.server.deadlines); the app bounds the body's.
    server = uvicorn.Server(uvicorn.Config(front, lifespan="on", log_level="warning", access_log=False,
                                           server_header=False, proxy_headers=False,
                                           http=head_deadline_protocol(config.read_timeout),
                                           # no WebSocket route: an upgrade request is an HTTP request
                                           # like any other (JSON answers), not uvicorn's plain text
                                           ws="none",
                                           timeout_graceful_shutdown=None))

    # uvicorn stops gracefully on SIGTERM/SIGINT, then raises the signal again through the handler it found
    # installed; a quiet one lets the process end with 0 after the store is closed.
    quiet = {sig: signal.signal(sig, lambda signum, frame: None) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        # Server.run, not asyncio.run: it takes uvicorn's loop factory, uvloop when
        # installed (the [server] extra), and with httptools for parsing that cut the
        # service's own time on a kept-alive request (benches/bench_serve_overhead.py).
        server.run(sockets=[sock])
    finally:
        for sig, handler in quiet.items():
            signal.signal(sig, handler)
        front.state.metrics.stop_sharing()
    log(f"memsieve serve: worker {os.getpid()} stopped")
    return 0 if server.started else 1


class Supervisor:
    """Start ``workers`` worker processes on one socket, forward signals, restart the dead."""

    def __init__(self, config: ServeConfig, sock: socket.socket, workers: int) -> None:
        # The workers share their metrics through files in a directory of this run's own.
        self.metrics_dir = tempfile.mkdtemp(prefix="memsieve-metrics-")
        self.config = dataclasses.replace(config, metrics_dir=self.metrics_dir)
        self.sock = sock
        self.workers = workers
        self.procs: list[subprocess.Popen[bytes]] = []
        self.stopping = False
        self.hup = False

    def _spawn(self) -> subprocess.Popen[bytes]:
        fd = self.sock.fileno()
        return subprocess.Popen([sys.executable, "-m", "memsieve.server.worker", json.dumps(asdict(self.config)),
                                 str(fd)], pass_fds=(fd,), stdin=subprocess.DEVNULL)

    def run(self) -> int:
        def stop(signum: int, frame: Any) -> None:
            self.stopping = True

        def hup(signum: int, frame: Any) -> None:
            self.hup = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, hup)
        self.procs = [self._spawn() for _ in range(self.workers)]
        code = 0
        while not self.stopping:
            if self.hup:
                self.hup = False
                self._signal(signal.SIGHUP)
            for i, proc in enumerate(self.procs):
                rc = proc.poll()
                if rc is None or self.stopping:
                    continue
                if rc == REPORTED:
                    log(f"memsieve serve: worker {proc.pid} could not start (exit {rc}); stopping")
                    self.stopping, code = True, REPORTED
                    break
                log(f"memsieve serve: worker {proc.pid} exited with {rc}; starting another")
                time.sleep(1.0)
                self.procs[i] = self._spawn()
            time.sleep(0.05)
        self.sock.close()  # no new connections; the workers finish what they accepted
        self._signal(signal.SIGTERM)
        for proc in self.procs:
            proc.wait()
        shutil.rmtree(self.metrics_dir, ignore_errors=True)
        log("memsieve serve: stopped")
        return code

    def _signal(self, sig: int) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(sig)


def serve(db: str, *, keys_path: str, host: str = "127.0.0.1", port: int = 8420, workers: int = 1,
          max_body_bytes: int | None = None, create: bool = False, max_cache_mb: float | None = None,
          llm_base_url: str | None = None, llm_model: str = "local", llm_api_key_env: str = "OPENAI_API_KEY",
          router_path: str | None = None, read_timeout: float = DEFAULT_READ_TIMEOUT,
          consolidate_seconds: float = DEFAULT_CONSOLIDATE_SECONDS) -> int:
    """Run ``memsieve serve`` until SIGTERM or SIGINT; returns the exit code.

    Raises:
        ConfigError: a malformed option, a bad keys file, or an address that cannot be bound.
        StoreError: (one worker) the database cannot be opened.
    """
    from memsieve.server.api import DEFAULT_MAX_BODY_BYTES

    limit = DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes
    check_options(host=host, port=port, workers=workers, max_body_bytes=limit, read_timeout=read_timeout,
                  consolidate_seconds=consolidate_seconds)
    cache = check_cache_mb(max_cache_mb)
    check_llm_options(base_url=llm_base_url, model=llm_model, api_key_env=llm_api_key_env)
    if router_path is not None:
        load_router(router_path)  # a missing or malformed file stops the start here, before any socket
    keys = KeyRing(keys_path)  # a bad keys file stops the start here, before any socket
    config = ServeConfig(db=str(db), keys_path=str(keys_path), max_body_bytes=limit, create=create,
                         read_timeout=float(read_timeout), consolidate_seconds=float(consolidate_seconds),
                         max_cache_bytes=cache, llm_base_url=llm_base_url, llm_model=llm_model,
                         llm_api_key_env=llm_api_key_env, router_path=router_path)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    log(f"memsieve serve: listening on http://{shown}:{bound} ({workers} worker(s), {len(keys)} key(s) from "
        f"{keys_path})")
    if workers == 1:
        try:
            return run_worker(config, sock)
        finally:
            sock.close()
    return Supervisor(config, sock, workers).run()


def serve_ui(db: str, *, port: int = 8421, create: bool = False) -> int:
    """Run ``memsieve ui``: the inspector page and the API on 127.0.0.1 only, for this machine's user.

    No keys file: the process makes one admin key, holds it in memory only,
    and serves the page with it (memsieve.server.ui); the app answers only
    requests whose Host is a loopback name. The URL is printed on stdout.

    Raises:
        ConfigError: a malformed port, or one that cannot be bound.
        StoreError: the database cannot be opened.
    """
    import secrets

    check_options(host="127.0.0.1", port=port, workers=1, max_body_bytes=1 << 20)
    key = "msk_ui_" + secrets.token_urlsafe(32)
    keyring = KeyRing.ephemeral("memsieve-ui", key)
    config = ServeConfig(db=str(db), keys_path="", create=create)
    sock = bind("127.0.0.1", port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    log(f"memsieve ui: listening on {url} (loopback only, an admin key held by this process)")
    print(f"{url}/ui", flush=True)
    try:
        return run_worker(config, sock, keyring=keyring, ui_key=key)
    finally:
        sock.close()


def worker_main(argv: list[str]) -> int:
    """``python -m memsieve.server.worker CONFIG_JSON FD``: one worker of a supervisor."""
    config = ServeConfig(**json.loads(argv[0]))
    sock = socket.socket(fileno=int(argv[1]))
    try:
        return run_worker(config, sock)
    except MemsieveError as exc:
        log("memsieve serve: error: " + " ".join(str(exc).split()))
        return REPORTED
    except KeyboardInterrupt:
        return 130
