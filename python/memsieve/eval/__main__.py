"""``python -m memsieve.eval locomo ...``: the evaluation without the main CLI."""

from __future__ import annotations

import sys

from memsieve.errors import guarded
from memsieve.eval.commands import run


def main(argv: list[str] | None = None) -> int:
    # Accept both "python -m memsieve.eval locomo ..." and "... eval locomo ...".
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["eval"]:
        args = args[1:]
    return guarded(lambda: run(args, prog="python -m memsieve.eval"))


if __name__ == "__main__":
    raise SystemExit(main())
