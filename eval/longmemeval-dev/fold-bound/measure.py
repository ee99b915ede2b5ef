"""How many LongMemEval turns another turn of their haystack says word for word.

Issue 18 asks the gate to store at most 92% of the dev half's turns while every
folded turn goes into a memory that says everything it says. This reads what
the data allows of that, before any gate: for each turn of a store-everything
store (one scope per question, turns in the order they were told), whether
an earlier turn of its scope holds every one of its index terms
(``memsieve._core.tokenize``: content words stemmed, numbers, names), the
earlier turn being

- its nearest by cosine (the memory a novelty NOOP folds into),
- one of its 5 nearest (the information term's neighbours), or
- any earlier turn at all (the bound: no fold into one memory that keeps
  every word can do better).

Held word for word is necessary, not sufficient (a value said of another
noun, a denial, a tense, another day): the counts are upper bounds on the
folds that lose no word. Given a gate store too (``--gate``), it also counts
that store's NOOPs whose memory holds every word of the text folded into it.

Usage::

    memsieve eval longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \\
        --out /tmp/lme --arms add-all,memsieve --store /tmp/lme.sqlite
    python eval/longmemeval-dev/fold-bound/measure.py /tmp/lme.add-all.sqlite \\
        --gate /tmp/lme.memsieve.sqlite --out eval/longmemeval-dev/fold-bound/summary.json
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

from memsieve import _core

NEAREST = 5


def _terms(text: str) -> frozenset[str]:
    return frozenset(_core.tokenize(text))


def _is_user(metadata: str) -> bool:
    return json.loads(metadata or "{}").get("role") == "user"


def held_by_earlier(store: Path) -> dict[str, int]:
    """Turns whose every term an earlier turn of their scope holds, by which earlier turn."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    by_scope: dict[str, list[tuple[str, bytes, str]]] = collections.defaultdict(list)
    for scope, text, vector, metadata in con.execute(
            "SELECT scope_key, text, embedding, metadata FROM memories WHERE is_active ORDER BY seq"):
        by_scope[scope].append((text, vector, metadata))
    counts = collections.Counter()
    for rows in by_scope.values():
        vectors = np.stack([np.frombuffer(v, dtype=np.float32) for _, v, _ in rows])
        terms = [_terms(t) for t, _, _ in rows]
        cosines = vectors @ vectors.T
        postings: dict[str, set[int]] = collections.defaultdict(set)
        for i, (_, _, metadata) in enumerate(rows):
            counts["turns"] += 1
            mine = terms[i]
            counts["no_terms"] += not mine
            if i and mine:
                nearest = np.argsort(-cosines[i, :i], kind="stable")[:NEAREST]
                held = [mine <= terms[int(j)] for j in nearest]
                counts["held_by_nearest"] += held[0]
                counts["held_by_one_of_5_nearest"] += any(held)
                earlier = set.intersection(*(postings.get(w, set()) for w in mine))
                if earlier:
                    counts["held_by_any_earlier"] += 1
                    counts["held_by_any_earlier_user"] += _is_user(metadata)
            for w in mine:
                postings[w].add(i)
    return dict(counts)


def gate_folds(store: Path) -> dict[str, int]:
    """A gate store's NOOPs, and how many fold into a memory that holds every term of the text."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    counts = collections.Counter()
    for layer, text, into in con.execute(
            "SELECT r.layer, r.text, m.text FROM rejections r LEFT JOIN memories m ON m.id = r.nearest_id"):
        counts[f"noop_{layer}"] += 1
        if into is not None and _terms(text) <= _terms(into):
            counts[f"noop_{layer}_held_word_for_word"] += 1
    counts["memories"] = con.execute("SELECT count(*) FROM memories WHERE is_active").fetchone()[0]
    return dict(counts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("store", type=Path, help="a store-everything (add-all) store of the harness")
    p.add_argument("--gate", type=Path, help="the memsieve arm's store of the same run")
    p.add_argument("--out", type=Path, help="write the counts as JSON here")
    args = p.parse_args(argv)
    result: dict[str, object] = {"store_everything": held_by_earlier(args.store)}
    if args.gate is not None:
        result["gate"] = gate_folds(args.gate)
    turns = result["store_everything"]["turns"]  # type: ignore[index]
    for key, value in result["store_everything"].items():  # type: ignore[union-attr]
        print(f"{key:28s} {value:7d}  {100 * value / turns:6.2f}%")
    for key, value in (result.get("gate") or {}).items():  # type: ignore[union-attr]
        print(f"gate {key:33s} {value:7d}")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
