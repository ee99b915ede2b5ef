"""Adapters that let agent frameworks use memsieve without glue code.

Each submodule needs its own optional extra and is imported only when used:

- ``memsieve.integrations.mcp``: the ``memsieve mcp`` server (``memsieve[mcp]``).
- ``memsieve.integrations.langgraph``: ``MemsieveStore``, a LangGraph ``BaseStore``
  (``memsieve[langgraph]``).

Nothing is imported here, so ``import memsieve`` never loads a framework.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from memsieve.errors import ConfigError


def require_extra(module: str, *, extra: str) -> ModuleType:
    """Import a framework module, or say which extra installs it.

    Raises:
        ConfigError: ``module`` is not installed (its message names the
            ``pip install "memsieve[extra]"`` command).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"the {extra} integration needs {module!r}, which is not installed ({exc}); install it with "
                          f'pip install "memsieve[{extra}]"') from exc
