"""``python -m memsieve.server.worker CONFIG_JSON FD``: one worker process of ``memsieve serve --workers N``.

Started by memsieve.server.run.Supervisor with the listening socket inherited
as file descriptor FD; not meant to be run by hand.
"""

from __future__ import annotations

import sys

from memsieve.server.run import worker_main

if __name__ == "__main__":
    raise SystemExit(worker_main(sys.argv[1:]))
