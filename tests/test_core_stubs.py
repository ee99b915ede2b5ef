"""The hand-written stub matches the built extension."""

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_stubtest_passes():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "memsieve._core"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
