"""``memsieve eval``: one subcommand per benchmark, registered by module name.

The main CLI imports this module only when ``memsieve eval ...`` is run, so the
runtime never loads the harness. A benchmark is a module with
``add_arguments(subparsers) -> None``, which adds its subcommand and sets
``func`` (called with the parsed namespace, returns an exit code). Adding a
benchmark is one line in :data:`BENCHMARKS`.
"""

from __future__ import annotations

import argparse
import importlib

from memsieve.errors import ConfigError, OneLineParser

# subcommand -> module with add_arguments(subparsers). Order is the help's order.
BENCHMARKS: dict[str, str] = {
    "locomo": "memsieve.eval.runner",
    "updates": "memsieve.eval.updates",
    "longmemeval": "memsieve.eval.longmemeval",
    "forget": "memsieve.eval.forget",
}

# The third-party modules of the ``eval`` extra (pyproject.toml), by import name.
EXTRA_MODULES = ("matplotlib",)


def require_extra() -> None:
    """Fail with one clear line when the ``memsieve[eval]`` extra is missing.

    Raises:
        ConfigError: a module of the extra cannot be imported.
    """
    for name in EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            raise ConfigError(f"`memsieve eval` needs {name}, which is not installed; "
                              f'install the evaluation extra: pip install "memsieve[eval]"') from None


def add_eval_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``eval`` with every registered benchmark to a CLI's subparsers; returns the ``eval`` parser."""
    ev = subparsers.add_parser("eval", help="evaluate on a benchmark")
    _add_benchmarks(ev)
    return ev


def build_parser(*, prog: str = "memsieve eval") -> argparse.ArgumentParser:
    """A parser of ``memsieve eval``'s arguments (what follows the word ``eval``)."""
    parser = OneLineParser(prog=prog, description="Evaluate memsieve on a benchmark.")
    _add_benchmarks(parser)
    return parser


def run(argv: list[str], *, prog: str = "memsieve eval") -> int:
    """Parse and run ``memsieve eval ...`` (what follows the word ``eval``); returns the exit code.

    Raises:
        ConfigError: the ``memsieve[eval]`` extra is missing.
    """
    require_extra()
    ns = build_parser(prog=prog).parse_args(argv)
    return int(ns.func(ns) or 0)


def _add_benchmarks(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="benchmark", required=True)
    for module in BENCHMARKS.values():
        importlib.import_module(module).add_arguments(sub)
