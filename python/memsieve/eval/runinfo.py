"""Where a result came from: the commit and the state of the work tree it ran from."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def code_version() -> dict[str, Any]:
    """The commit the run came from, and the tracked files that differed from it.

    Returns:
        {"commit": sha or None, "dirty_files": up to 20 ``git status --porcelain``
        lines ([] for a clean tree)}; both None when git cannot be asked.
    """
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=10).stdout.rstrip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty_files": None}
    return {"commit": head or None, "dirty_files": dirty.splitlines()[:20] if dirty else []}


def check_out(path: object, *, folder: bool = True) -> None:
    """Refuse an ``--out`` the run could not write, before any work: a file where a folder goes (a
    missing folder is made), or, for a file, a folder or a file in a folder that does not exist.

    Raises:
        ConfigError: naming the path and what to pass instead.
    """
    from pathlib import Path

    from memsieve.errors import ConfigError

    if path is None:
        return
    out = Path(str(path))
    if folder:
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {str(out)!r} is a file; pass a folder (it is made if missing)")
        return
    if out.is_dir():
        raise ConfigError(f"--out {str(out)!r} is a folder; pass the path of the JSON file to write")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {str(out)!r} is in a folder that does not exist; make {str(out.parent)!r} first")
