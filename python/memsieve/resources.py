"""Where the package data shipped with memsieve lives, and where its caches go, found without
loading anything.

The embedder reads the MiniLM tokenizer to tokenize, and the default lexicon
reads its vocabulary as a word-frequency prior (memsieve.text.rarity). Both
find the file here, so that the gate, which needs the prior, never imports
the embedding module (and ONNX Runtime with it).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any


def packaged_tokenizer_path() -> Any:
    """The MiniLM tokenizer.json shipped as memsieve package data (a Traversable)."""
    return resources.files("memsieve") / "data" / "minilm" / "tokenizer.json"


def cache_root() -> Path:
    """The folder of memsieve's caches (fused models, the evaluations' vectors):
    ``$MEMSIEVE_CACHE_DIR``, else ``$XDG_CACHE_HOME/memsieve``, else ``~/.cache/memsieve``.
    Read at each call, so a process may point it elsewhere before its first use."""
    base = os.environ.get("MEMSIEVE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "memsieve"
