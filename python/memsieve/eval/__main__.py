"""``python -m memsieve.eval locomo ...``: the evaluation without the main CLI."""

from __future__ import annotations

import argparse
import sys

from memsieve.cli import run
from memsieve.eval.runner import add_eval_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memsieve.eval")
    sub = parser.add_subparsers(dest="command", required=True)
    add_eval_arguments(sub)
    # Accept both "python -m memsieve.eval locomo ..." and "... eval locomo ...".
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ["eval"]:
        args = ["eval", *args]
    return run(parser.parse_args(args))


if __name__ == "__main__":
    raise SystemExit(main())
