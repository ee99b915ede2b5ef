"""Evaluation of the write gate on LoCoMo: loader, metrics, arms, runner, report.

Run it with ``memsieve eval locomo DATA.json --out DIR`` (or
``python -m memsieve.eval locomo ...``); see docs/EVALUATION.md.
"""

from memsieve.eval.locomo import CATEGORY_LABELS, STREAMS, Dataset, LocomoFormatError, load_locomo
from memsieve.eval.metrics import STOPWORDS, aggregate, answer_recall, content_tokens, evidence_recall

__all__ = [
    "CATEGORY_LABELS",
    "STOPWORDS",
    "STREAMS",
    "Dataset",
    "LocomoFormatError",
    "aggregate",
    "answer_recall",
    "content_tokens",
    "evidence_recall",
    "load_locomo",
]
