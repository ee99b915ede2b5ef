"""The gate-changes set: does the write gate fold a later statement that changes a value into the memory
that says the old one? (eval/gate-changes/README.md)

    python eval/gate-changes/measure.py [--out results.json] [--db FILE] [--pairs FILE]

Each pair gets its own scope of one SQLite store (default embedder and gate): 5-20 fillers (seeded),
the earlier statement, then the later one. A *loss* is a later statement with a value (``value``, a
regular expression) that is folded (NOOP) into a memory whose text does not say it; a pair without a
value is a true repeat, and ``folded`` says whether the gate folded it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent

FILLERS = [
    "I've been getting into sourdough baking on weekends.",
    "My favorite podcast is about ancient history.",
    "We repainted the garage door last summer.",
    "I'm trying to learn how to solve a Rubik's cube.",
    "My neighbor has a loud parrot that whistles show tunes.",
    "I prefer paperback books over e-readers for fiction.",
    "I keep a journal of the birds I see in my backyard.",
    "My nephew is really into dinosaurs right now.",
    "I usually do the grocery shopping on Sunday afternoons.",
    "Our book club is reading a thriller this month.",
    "I started composting kitchen scraps in the backyard.",
    "I get seasick on ferries, so I avoid boat tours.",
    "My go-to karaoke song is a Whitney Houston ballad.",
    "I collect enamel pins from national parks.",
    "We put up a bird feeder outside the kitchen window.",
    "I'm not great at remembering people's names at parties.",
    "My grandfather taught me how to fish for perch.",
    "I like doing crossword puzzles with my morning tea.",
    "The basement floods a little whenever there's heavy rain.",
    "I've been watching a lot of cooking competition shows.",
    "My coworker brings homemade kimchi to share sometimes.",
    "I can't stand the smell of cilantro.",
    "Our kitchen faucet has been dripping for ages.",
    "I've been meaning to organize the photo albums.",
    "I learned to knit from a YouTube channel.",
    "My favorite season is autumn because of the colors.",
    "I once got lost in IKEA for an hour.",
    "I always bring a reusable water bottle to work.",
    "The local library has a great graphic novel section.",
    "I think board game nights are the best way to unwind.",
    "My car's check engine light came on again.",
    "I'm thinking of redoing the bathroom tiles.",
    "I volunteer at the animal shelter sometimes.",
    "We host my in-laws for Thanksgiving most years.",
    "I'm a big fan of Studio Ghibli movies.",
    "My handwriting is terrible, even I can't read it.",
    "I like to take long walks along the river after work.",
    "I'm trying to cut down on caffeine in the afternoon.",
    "My favorite ice cream flavor is pistachio.",
    "There's a farmers market in our town every Saturday.",
    "I recently replaced the battery in my smoke detector.",
    "My son wants to learn the drums, which worries me.",
    "I have a standing desk but I rarely stand at it.",
    "We're growing tomatoes and basil on the balcony.",
    "I find it hard to fall asleep when it's humid.",
    "I play chess online most evenings.",
    "I'm afraid of spiders, even the tiny ones.",
    "Our street is getting repaved soon, it's so noisy.",
    "I prefer window shopping to actually buying things.",
    "I took a pottery class once and made a lopsided mug.",
    "My aunt sends me postcards from every trip she takes.",
    "I have a sweet tooth, especially for dark chocolate.",
    "I'm trying to get better at public speaking.",
    "I listen to lo-fi beats while working.",
    "My favorite hiking trail goes past an old mill.",
    "I really want to see the northern lights someday.",
    "I recently switched to a bamboo toothbrush.",
    "My laptop fan gets really loud during video calls.",
    "I like making homemade pizza on Friday nights.",
    "I'm learning some basic sign language.",
]


def _message(text: str, role: str | None):
    return text if role is None else [{"role": role, "content": text}]


def run(pairs: list[dict], db: str) -> list[dict]:
    from memsieve import Memory
    from memsieve.read.render import render_line

    rng = random.Random(65)
    rows = []
    with Memory(db) as mem:
        for p in pairs:
            uid = f"p{p['id']}"
            fillers = rng.sample(FILLERS, rng.randint(5, 20))
            for text in fillers:
                mem.add(_message(text, p["roles"][0]), user_id=uid)
            earlier = mem.add(_message(p["earlier"], p["roles"][0]), user_id=uid)[0]
            later = mem.add(_message(p["later"], p["roles"][1]), user_id=uid)[0]
            kept = mem.get(later.memory_id, user_id=uid).text if later.event == "NOOP" and later.memory_id else None
            loss = None if p["value"] is None else bool(
                later.event == "NOOP" and not re.search(p["value"], kept or "", re.I))
            # What a reader of that memory sees: search finds it by the earlier statement's words,
            # and shows the texts folded into it that say words it does not (memsieve.read.folded).
            line = None
            if later.event == "NOOP" and later.memory_id:
                hits = {h.id: h for h in mem.search(p["earlier"], user_id=uid, limit=5)}
                line = render_line(hits[later.memory_id]) if later.memory_id in hits else None
            shown = None if line is None else later.rejection_id is not None and p["later"] in line
            rows.append({"id": p["id"], "cls": p["cls"], "event": later.event, "reason": later.reason,
                         "into_earlier": later.memory_id == earlier.memory_id if later.event == "NOOP" else None,
                         "loss": loss, "folded": later.event == "NOOP" if p["value"] is None else None,
                         "shown": shown,
                         "value_shown": None if not loss else bool(line and re.search(p["value"], line, re.I))})
    return rows


def summary(rows: list[dict]) -> dict:
    changes = [r for r in rows if r["loss"] is not None]
    repeats = [r for r in rows if r["folded"] is not None]
    per = Counter(r["cls"] for r in changes)
    lost = Counter(r["cls"] for r in changes if r["loss"])
    return {"changes": len(changes), "lost": sum(lost.values()), "repeats": len(repeats),
            "repeats_folded": sum(r["folded"] for r in repeats),
            "lost_value_shown": sum(bool(r.get("value_shown")) for r in changes if r["loss"]),
            "repeats_folded_shown": sum(bool(r.get("shown")) for r in repeats if r["folded"]),
            "per_class": {c: {"pairs": n, "lost": lost[c]} for c, n in sorted(per.items())},
            "lost_ids": [r["id"] for r in changes if r["loss"]]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the summary and every row as JSON here")
    ap.add_argument("--db", help="the SQLite file to use (default: a temporary one)")
    ap.add_argument("--pairs", default=str(HERE / "pairs.jsonl"),
                    help="the pairs to run (default: the set; blind-2.jsonl is a second blind batch)")
    ns = ap.parse_args(argv)
    pairs = [json.loads(line) for line in Path(ns.pairs).read_text(encoding="utf-8").splitlines() if line]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(pairs, ns.db or str(Path(tmp) / "gate-changes.db"))
    out = summary(rows)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"changes lost {out['lost']} / {out['changes']} ({100 * out['lost'] / out['changes']:.1f}%), "
          f"repeats folded {out['repeats_folded']} / {out['repeats']}, {out['seconds']} s; "
          f"of the changes lost, {out['lost_value_shown']} have their value shown beside the memory by search; "
          f"of the repeats folded, {out['repeats_folded_shown']} are shown beside it")
    for cls, c in out["per_class"].items():
        if c["lost"]:
            print(f"  {cls}: {c['lost']} / {c['pairs']}")
    if ns.out:
        Path(ns.out).write_text(json.dumps({**out, "rows": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
