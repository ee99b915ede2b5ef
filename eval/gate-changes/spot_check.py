"""A spot check of the slot and placed-value rules on 40 pairs written after the rules were set
(2026-12-06), by the hand that wrote the rules, so it knew their shape: 20 changes and 20
restatements. Each pair gets its own scope with 8 of measure.py's fillers (seeded).

    python eval/gate-changes/spot_check.py [--before]

``--before`` turns both rules off (the code before them) in the same process.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import FILLERS  # noqa: E402

CHANGES = [  # (earlier, later, new value regex)
 ("I walk to the office most days.", "Most days I cycle to the office.", "cycle"),
 ("Our team meets in the small conference room.", "In the large conference room is where our team meets.", "large"),
 ("My brother studies law in Madrid.", "In Madrid, my brother studies medicine.", "medicine"),
 ("I keep my bike in the garage.", "In the shed is where I keep my bike.", "shed"),
 ("On Sundays we eat pancakes.", "We eat waffles on Sundays.", "waffles"),
 ("My mother grows roses in her garden.", "In her garden my mother grows tulips.", "tulips"),
 ("I learned French at school.", "At school I learned German.", "German"),
 ("For lunch I usually pack a sandwich.", "I usually pack a salad for lunch.", "salad"),
 ("My favourite band plays jazz.", "Rock is what my favourite band plays.", "Rock"),
 ("The kids walk to school with their friends.", "With their friends, the kids bike to school.", "bike"),
 ("I'm reading a mystery novel.", "I finished a mystery novel.", "finished"),
 ("I'm building a treehouse for the kids.", "I built a treehouse for the kids.", "built"),
 ("My boss is Linda.", "Karen is my boss.", "Karen"),
 ("We stay at the Radisson when we visit.", "When we visit, the Sheraton is where we stay.", "Sheraton"),
 ("The meeting is on hold until Friday.", "The meeting is on hold after Friday.", "after"),
 ("I'll call you unless the train is late.", "I'll call you if the train is late.", "if"),
 ("I visit my grandparents each month.", "I visit my grandparents some months.", "some"),
 ("I can swim across the lake.", "I could swim across the lake.", "could"),
 ("My daughter wants a puppy for her birthday.", "For her birthday my daughter wants a kitten.", "kitten"),
 ("At night I drink chamomile tea.", "I drink peppermint tea at night.", "peppermint"),
]
REPEATS = [
 ("I walk to the office most days.", "Most days I walk to the office."),
 ("My brother studies law in Madrid.", "In Madrid, my brother is a law student."),
 ("I keep my bike in the garage.", "My bike lives in the garage."),
 ("On Sundays we eat pancakes.", "Pancakes are what we eat on Sundays."),
 ("My mother grows roses in her garden.", "Roses grow in my mother's garden."),
 ("I learned French at school.", "French is something I picked up at school."),
 ("My favourite band plays jazz.", "Jazz is what my favourite band plays."),
 ("I'm terrified of snakes.", "Snakes scare me a lot."),
 ("We adopted a dog last spring.", "Last spring we adopted a dog."),
 ("The dentist appointment is on Tuesday.", "On Tuesday I have the dentist appointment."),
 ("I love hiking in the mountains.", "Hiking in the mountains is my favourite thing."),
 ("My sister is a nurse at the city hospital.", "At the city hospital, my sister works as a nurse."),
 ("I prefer tea over coffee.", "Tea is my preference over coffee."),
 ("Our flat has two bedrooms.", "There are two bedrooms in our flat."),
 ("I started running in January.", "In January I took up running."),
 ("My car needs new tyres.", "New tyres are what my car needs."),
 ("I work night shifts at the warehouse.", "At the warehouse I'm on night shifts."),
 ("My son plays the trumpet in the school band.", "In the school band, my son plays the trumpet."),
 ("We usually go camping in August.", "In August we usually go camping."),
 ("I bake bread every weekend.", "Every weekend I bake bread."),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", action="store_true", help="turn both rules off")
    ns = ap.parse_args(argv)
    import memsieve.gate.profiles.kde as kde
    from memsieve import Memory
    from memsieve.text.lexicon import ENGLISH

    if ns.before:
        kde.SLOT_MAX_LACKING = -1
        object.__setattr__(ENGLISH, "placed_values", frozenset())
    rng = random.Random(7)
    lost = folded = 0
    with tempfile.TemporaryDirectory() as tmp, Memory(os.path.join(tmp, "spot.db")) as m:
        for i, (earlier, later, value) in enumerate(CHANGES):
            uid = f"c{i}"
            for text in rng.sample(FILLERS, 8):
                m.add(text, user_id=uid)
            m.add(earlier, user_id=uid)
            (d,) = m.add(later, user_id=uid)
            if d.event == "NOOP" and not re.search(value, m.get(d.memory_id, user_id=uid).text, re.I):
                lost += 1
                print("lost:", later)
        for i, (earlier, later) in enumerate(REPEATS):
            uid = f"r{i}"
            for text in rng.sample(FILLERS, 8):
                m.add(text, user_id=uid)
            m.add(earlier, user_id=uid)
            (d,) = m.add(later, user_id=uid)
            folded += d.event == "NOOP"
            if d.event != "NOOP":
                print("stored:", later)
    print(f"changes lost {lost} / {len(CHANGES)}, repeats folded {folded} / {len(REPEATS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
