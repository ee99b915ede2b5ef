"""The multi-session questions' share@10 under other speaker-stage constants, on a kept store.

    memsieve eval longmemeval DEV.json.gz --out OUT --arms add-all --store /tmp/ms.sqlite \\
        --questions <the 71 multi-session ids>
    python eval/longmemeval-dev/recall-all-readings/speaker_sweep.py DEV.json.gz /tmp/ms.add-all.sqlite

Search only: the store-everything arm's store is searched again with the default search, the
question date as reference time, and the speaker constants patched for the sweep (an
evaluation's reach into a module's constants, not an application's).
"""

from __future__ import annotations

import statistics
import sys

import memsieve.read.search as search_module
import memsieve.read.speaker as speaker
from memsieve import Memory
from memsieve.eval.longmemeval_data import load_longmemeval
from memsieve.eval.metrics import answer_recall
from memsieve.read.render import render_line


def read(mem: Memory, questions: list, label: str) -> None:
    """Print share@10, all@10 and answer recall@10 (dated lines) of ``questions`` as searched now."""
    shares, alls, answers = [], [], []
    for q in questions:
        hits = mem.search(q.question, user_id=q.question_id, limit=10, reference_time=q.question_date)
        seen = {s for h in hits for s in (h.sources or [])}
        if q.evidence:
            found = [e in seen for e in q.evidence]
            shares.append(sum(found) / len(found))
            alls.append(float(all(found)))
        if not q.abstention:
            a = answer_recall(q.answer, [render_line(h, dated=True) for h in hits], 10)
            if a is not None:
                answers.append(a)
    print(f"| {label} | {100 * statistics.mean(shares):.1f} | {100 * statistics.mean(alls):.1f} "
          f"| {100 * statistics.mean(answers):.1f} |", flush=True)


def main() -> None:
    data, store = sys.argv[1], sys.argv[2]
    questions = [q for q in load_longmemeval(data).questions if q.question_type == "multi-session"]
    print("| speaker stage | share@10 | all@10 | answer@10 |")
    print("|---|---:|---:|---:|")
    with Memory(store) as mem:
        read(mem, questions, "default (share 0.7, boost 0.5, reach 3)")
        for share in (0.8, 0.9, 1.0):
            speaker.SPEAKER_SHARE = share
            read(mem, questions, f"share {share}")
        speaker.SPEAKER_SHARE = 0.7
        for boost in (0.3, 0.8, 1.2):
            speaker.SPEAKER_BOOST = boost
            read(mem, questions, f"boost {boost}")
        speaker.SPEAKER_BOOST = 0.5
        for reach in (2, 5):
            search_module.SPEAKER_REACH = reach
            read(mem, questions, f"reach {reach}")


if __name__ == "__main__":
    main()
