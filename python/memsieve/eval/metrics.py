"""Retrieval metrics that need no LLM judge, and their micro/macro aggregation.

Normalization (used for answers and retrieved texts alike):

1. lowercase;
2. every character that is not a letter, a digit or whitespace becomes a space
   (so "Sweden's" -> "sweden s", "7 May, 2023" -> "7 may 2023");
3. split on whitespace;
4. drop the tokens in :data:`STOPWORDS` (English function words, written for this
   module, plus the contraction stubs "s", "t", "d", "ll", "m", "re", "ve" left
   by step 2). "may" is deliberately not a stopword: in LoCoMo it is the month.

Answer-token recall@k is the share of the answer's distinct content tokens that
occur anywhere in the top-k retrieved texts. Numbers stay tokens ("2022"), so a
date answer counts only if the retrieved text spells the same day or year.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

STOPWORDS = frozenset(
    """
    a an the and or but nor so yet if then than that this these those there here
    of to in on at by for with from into onto over under about above below after
    before during since until upon within without through between among against
    is am are was were be been being do does did doing done have has had having
    i me my mine myself you your yours yourself he him his himself she her hers
    herself it its itself we us our ours ourselves they them their theirs
    themselves who whom whose which what when where why how
    not no yes as also just very too only own same other such both each all any
    some more most can could will would shall should might must
    s t d ll m re ve
    """.split()
)

PRIMARY_K = 10


def primary_key(ks: Sequence[int]) -> int:
    """The headline cut-off: recall@10 when 10 is among ``ks``, else the middle one."""
    ks = sorted(ks)
    return PRIMARY_K if PRIMARY_K in ks else ks[len(ks) // 2]


_NON_WORD = re.compile(r"[^\w\s]|_", re.UNICODE)


def content_tokens(text: str | None) -> list[str]:
    """Normalize ``text`` and return its content tokens in order (with repeats).

    Args:
        text: any string; None gives [].
    """
    if not text:
        return []
    return [t for t in _NON_WORD.sub(" ", text.lower()).split() if t not in STOPWORDS]


def answer_recall(answer: str | None, retrieved: Sequence[str], k: int) -> float | None:
    """Share of the answer's distinct content tokens found in the top-k texts.

    Args:
        answer: the reference answer (``str(answer)``); None for category 5.
        retrieved: retrieved texts, best first.
        k: cut-off.

    Returns:
        A value in [0, 1], or None when the answer has no content token (it is
        then left out of the answer-recall averages, and counted).
    """
    wanted = set(content_tokens(answer))
    if not wanted:
        return None
    seen: set[str] = set()
    for text in retrieved[:k]:
        seen.update(content_tokens(text))
    return len(wanted & seen) / len(wanted)


def evidence_recall(evidence: Sequence[str], retrieved_sources: Sequence[Iterable[str]], k: int) -> float | None:
    """Share of the evidence dia_ids credited by the top-k retrieved memories.

    Args:
        evidence: the question's well-formed evidence ids (from the loader).
        retrieved_sources: for each retrieved memory (best first), the dia_ids that
            count for it: its own sources for strict recall, own plus NOOP-attached
            sources for provenance recall.
        k: cut-off.

    Returns:
        A value in [0, 1], or None when the question has no usable evidence id.
    """
    wanted = set(evidence)
    if not wanted:
        return None
    seen: set[str] = set()
    for srcs in retrieved_sources[:k]:
        seen.update(srcs)
    return len(wanted & seen) / len(wanted)


def _mean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None


def aggregate(rows: Sequence[Mapping[str, object]], metric_keys: Sequence[str],
              *, answer_categories: Iterable[int | str] | None = (1, 2, 3, 4),
              group: str = "category") -> dict[str, dict]:
    """Micro (per question), macro (mean of category means) and per-category means.

    A metric whose value is None for a question (no answer tokens, no evidence)
    leaves that question out of that metric's mean. Answer metrics
    (``answer_recall@k``) are averaged over ``answer_categories`` only, so the
    adversarial category, which has no answer, cannot enter the macro mean as a
    silent zero.

    Args:
        rows: one mapping per question with ``group`` and every key of ``metric_keys``.
        metric_keys: which metrics to average.
        answer_categories: categories allowed into answer-metric means (None: all).
        group: the row key that names a question's category: ``"category"``
            (LoCoMo's integers) or any other key whose values are strings
            (LongMemEval's ``question_type``).

    Returns:
        {"micro": {key: mean, "n_<key>": count}, "macro": {key: mean},
         "per_category": {"<cat>": {key: mean, "n": questions}}}
    """
    def cat(r: Mapping[str, object]) -> int | str:
        value = r[group]
        return int(value) if group == "category" else str(value)  # type: ignore[call-overload]

    allowed = None if answer_categories is None else set(answer_categories)
    cats = sorted({cat(r) for r in rows})  # type: ignore[type-var]
    micro: dict[str, float | int | None] = {}
    macro: dict[str, float | None] = {}
    per_cat: dict[str, dict[str, float | int | None]] = {str(c): {"n": 0} for c in cats}
    for r in rows:
        per_cat[str(cat(r))]["n"] += 1  # type: ignore[operator]
    for key in metric_keys:
        is_answer = key.startswith("answer_recall")
        usable = [r for r in rows if r.get(key) is not None
                  and (not is_answer or allowed is None or cat(r) in allowed)]
        micro[key] = _mean(float(r[key]) for r in usable)  # type: ignore[arg-type]
        micro[f"n_{key}"] = len(usable)
        cat_means = []
        for c in cats:
            vals = [float(r[key]) for r in usable if cat(r) == c]  # type: ignore[arg-type]
            m = _mean(vals)
            per_cat[str(c)][key] = m
            if m is not None:
                cat_means.append(m)
        macro[key] = _mean(cat_means)
    return {"micro": micro, "macro": macro, "per_category": per_cat}


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
