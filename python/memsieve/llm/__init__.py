"""memsieve's optional LLM layer: fact extraction and the CRUD decision in the band.

The write path calls it only where arithmetic cannot decide: ``infer=True``
fact extraction, and candidates whose novelty falls in the band. Everything
here talks to an OpenAI-compatible endpoint through :class:`LLMClient`; a
failing model or endpoint is reported as an error or a recorded fault, never as
an empty result.
"""

from memsieve.llm.client import Completion, LLMClient, LLMConfig, Usage
from memsieve.llm.crud import FAULTS, CrudDecision, decide_crud, decide_forget, guard_destructive
from memsieve.llm.parsing import extract_json

__all__ = [
    "FAULTS",
    "Completion",
    "CrudDecision",
    "LLMClient",
    "LLMConfig",
    "Usage",
    "decide_crud",
    "decide_forget",
    "extract_json",
    "guard_destructive",
]
