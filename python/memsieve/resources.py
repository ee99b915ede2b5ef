"""Where the package data shipped with memsieve lives, found without loading anything.

The embedder reads the MiniLM tokenizer to tokenize, and the default lexicon
reads its vocabulary as a word-frequency prior (memsieve.text.rarity). Both
find the file here, so that the gate, which needs the prior, never imports
the embedding module (and ONNX Runtime with it).
"""

from __future__ import annotations

from importlib import resources
from typing import Any


def packaged_tokenizer_path() -> Any:
    """The MiniLM tokenizer.json shipped as memsieve package data (a Traversable)."""
    return resources.files("memsieve") / "data" / "minilm" / "tokenizer.json"
