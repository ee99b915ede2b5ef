"""The order of a search's results on a stored LongMemEval arm, beyond recall@k.

Recall@k does not see the order within the k results, and each k is its own
search. This reads what a reader of a longer list gets: the first 10 results
of a limit-20 and a limit-30 search, NDCG@10, how many of 10 results are
marked an older version (``superseded_by``), and what ``current_only=True``
returns. Used for docs/UPDATES.md ("Versions in a chat").

    python scripts/lme_order.py STORE.sqlite [--data FILE] > order.json

STORE is an arm's store kept by ``memsieve eval longmemeval --store``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from memsieve import Memory
from memsieve.eval.longmemeval import ndcg, score_hits, search_kwargs
from memsieve.eval.longmemeval_data import load_longmemeval

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/longmemeval/longmemeval_s_dev.json.gz"


def _scored(q, hits, k: int) -> dict:
    prov = [set(h.sources or []) for h in hits]
    row = score_hits(q, hits, prov, prov, k)
    row["ndcg@10"] = ndcg([bool(p & set(q.evidence)) for p in prov], len(q.evidence), 10) if q.evidence else None
    return row


def _mean(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(100 * statistics.mean(values), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("--data", default=str(DATA))
    args = ap.parse_args()
    ds = load_longmemeval(args.data)
    mem = Memory(args.store)
    at10, current, marked, returned = [], [], [], []
    first10 = {20: [], 30: []}
    for q in ds.questions:
        how = search_kwargs(mem.search, q)
        hits = mem.search(q.question, user_id=q.question_id, limit=10, **how)
        at10.append(_scored(q, hits, 10))
        marked.append(sum(h.superseded_by is not None for h in hits))
        cur = mem.search(q.question, user_id=q.question_id, limit=10, current_only=True, **how)
        returned.append(len(cur))
        current.append(_scored(q, cur, 10))
        for k in first10:
            first10[k].append(_scored(q, mem.search(q.question, user_id=q.question_id, limit=k, **how)[:10], 10))
    out = {"store": args.store, "questions": len(ds.questions), "ndcg@10": _mean(at10, "ndcg@10"),
           "superseded_in_10": round(statistics.mean(marked), 2),
           "current_only_returned": round(statistics.mean(returned), 2)}
    for name, rows in [("limit10", at10), ("current_only", current), ("first10_of_20", first10[20]),
                       ("first10_of_30", first10[30])]:
        for m in ("any", "all", "share"):
            out[f"{name}_{m}"] = _mean(rows, f"recall_{m}@10")
    for k in first10:
        out[f"first10_of_{k}_ndcg"] = _mean(first10[k], "ndcg@10")
    mem.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
