"""The package's stages import only downward: the tree reads as the pipeline (README, "Layout").

Every import in python/memsieve, at module level, under TYPE_CHECKING or inside
a function, is read with ``ast``; a stage may import only the stages listed
before it in ``ORDER``. An import that climbs back up ties two stages in a
circle (the write path's passages once lived in write/ while the store and the
gate below it read them), so a new one fails here with the file, the line and
the two stages named.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "memsieve"

#: The stages from the ground up: each may import any stage before it, none after it.
ORDER = [
    "_core", "errors", "jsonable", "plain", "resources", "offsets", "records", "scope", "times",
    "text", "embedding", "llm", "inputs", "parts",
    "store", "gate", "read", "stats", "consolidation", "write",
    "scoped", "memory", "aio", "router", "integrations", "__init__",
    "server", "eval", "cli",
]
RANK = {stage: i for i, stage in enumerate(ORDER)}


def stage_of_file(path: Path) -> str:
    """The stage a file of the package belongs to: its folder, or its own name at the top."""
    first = path.relative_to(PACKAGE).parts[0]
    return first.removesuffix(".py").removesuffix(".pyi")


def stage_of_module(module: str, name: str | None = None) -> str | None:
    """The stage ``module`` (or ``from module import name``) names; None outside the package."""
    parts = module.split(".")
    if parts[0] != "memsieve":
        return None
    if len(parts) == 1:
        # ``from memsieve import _core`` names a stage; ``from memsieve import Memory`` the front.
        return name if name in RANK and name != "__init__" else "__init__"
    return parts[1]


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, stage) of every import of a package stage in one file."""
    return imports_in(path.read_text(encoding="utf-8"), path)


def imports_in(source: str, path: Path) -> list[tuple[int, str]]:
    """(line, stage) of every import of a package stage in ``source``, read as the file ``path``."""
    tree = ast.parse(source, filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, s) for a in node.names if (s := stage_of_module(a.name))]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, s) for a in node.names if (s := stage_of_module(node.module, a.name))]
    return found


def package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_stage_of_the_package_is_ordered():
    stages = {stage_of_file(p) for p in package_files()}
    assert stages - set(RANK) == set(), "a new stage: give it its place in ORDER"


@pytest.mark.parametrize("path", package_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_only_down(path):
    here = stage_of_file(path)
    upward = [f"{path.relative_to(PACKAGE)}:{line} ({here}) imports {there}"
              for line, there in imports_of(path) if there != here and RANK[there] > RANK[here]]
    assert upward == []


def test_the_rule_sees_an_upward_import():
    # The reader itself: imports of a higher stage, one hidden in a function, are found.
    fake = PACKAGE / "store" / "base.py"
    source = "import memsieve.gate.ann\ndef f():\n    from memsieve.write.path import WritePath\n"
    assert [there for _, there in imports_in(source, fake)] == ["gate", "write"]
    assert RANK["write"] > RANK["gate"] > RANK[stage_of_file(fake)]
    assert stage_of_module("memsieve", "_core") == "_core"
    assert stage_of_module("memsieve", "Memory") == "__init__"
