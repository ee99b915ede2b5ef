"""Spot checks of the gate's rules on pairs written after the rules were set, by the hand that
wrote them, so it knew their shape: 20 changes and 20 restatements each. Each pair gets its own
scope with 8 of measure.py's fillers (seeded).

    python eval/gate-changes/spot_check.py [--set slots|values] [--before]

- ``slots`` (2026-12-06): the slot and placed-value rules.
- ``values`` (2026-12-06, later): a value said of another noun (memsieve.text.clauses), an amount
  with a fraction (memsieve.text.amounts) and a letter the index drops (``unread_values``).

``--before`` turns the set's rules off (the code before them) in the same process.
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

VALUE_CHANGES = [  # written after the value rules (2026-12-06, later)
 ("My husband works Mondays and I work Fridays.", "My husband works Fridays.", "Fridays"),
 ("Lunch is at noon and the meeting is at 3.", "The meeting is at noon.", "noon"),
 ("My older kid is 12 and the younger one is 9.", "The younger one is 12.", "12"),
 ("Sam drives a Tesla and Jo drives a Volvo.", "Jo drives a Tesla.", "Jo drives a Tesla"),
 ("The gym opens at 6 and closes at 10.", "The gym closes at 6.", "closes at 6"),
 ("I visited Rome in 2018 and Paris in 2022.", "I visited Paris in 2018.", "Paris in 2018"),
 ("My sister's birthday is in March and my mum's is in October.", "My mum's birthday is in March.",
  "mum's birthday is in March"),
 ("Our cat weighs 4 kilos and our dog weighs 20.", "Our dog weighs 4 kilos.", "dog weighs 4"),
 ("The recipe calls for half a teaspoon of salt.", "The recipe calls for a teaspoon and a half of salt.",
  "and a half"),
 ("The flight is an hour and a half.", "The flight is half an hour.", "half an hour"),
 ("I've been learning piano for one and a half years.", "I've been learning piano for half a year.",
  "half a year"),
 ("We walked three and a half miles.", "We walked four and a half miles.", "four"),
 ("She works three quarters of the week from home.", "She works a quarter of the week from home.",
  "a quarter of"),
 ("The drive is two and a half hours.", "The drive is an hour and a half.", "an hour and a half"),
 ("My daughter got a B on her test.", "My daughter got an A on her test.", r"an A\b"),
 ("We're going with option C.", "We're going with option A.", "option A"),
 ("I take vitamin D every day.", "I take vitamin B every day.", "vitamin B"),
 ("My seat is in row F.", "My seat is in row A.", "row A"),
 ("The meeting is in room B.", "The meeting is in room A.", "room A"),
 ("I'm in group A for the project.", "I'm in group B for the project.", "group B"),
]
VALUE_REPEATS = [
 ("My husband works Mondays and I work Fridays.", "My husband works Mondays."),
 ("My older kid is 12 and the younger one is 9.", "The younger one is 9."),
 ("Sam drives a Tesla and Jo drives a Volvo.", "Sam drives a Tesla."),
 ("The gym opens at 6 and closes at 10.", "The gym opens at 6."),
 ("I visited Rome in 2018 and Paris in 2022.", "I visited Rome in 2018."),
 ("Our cat weighs 4 kilos and our dog weighs 20.", "Our cat weighs 4 kilos."),
 ("The recipe calls for half a teaspoon of salt.", "The recipe needs half a teaspoon of salt."),
 ("The flight is an hour and a half.", "The flight takes an hour and a half."),
 ("We walked three and a half miles.", "We walked three and a half miles in total."),
 ("My daughter got a B on her test.", "My daughter got a B on the test."),
 ("We're going with option C.", "We've decided on option C."),
 ("I'm in group A for the project.", "For the project I'm in group A."),
 ("Tom and Ana live in Berlin.", "Ana lives in Berlin."),
 ("I moved to Seattle in 2020 and I love it there.", "I love Seattle."),
 ("My brother is 30 and lives in Leeds.", "My brother lives in Leeds."),
 ("Breakfast is at 7, and lunch is at noon.", "Lunch is at noon."),
 ("I run 5k on Mondays and swim on Thursdays.", "On Mondays I run 5k."),
 ("The soup needs half a cup of cream.", "Half a cup of cream goes in the soup."),
 ("Our budget is 500 for food and 200 for fun.", "We budget 500 for food."),
 ("The kids are 8 and 11.", "The kids are 8 and 11 years old."),
]
SETS = {"slots": (CHANGES, REPEATS), "values": (VALUE_CHANGES, VALUE_REPEATS)}


def _rules_off(name: str) -> None:
    """Turn a set's rules off in this process: the code before them."""
    import memsieve.gate.profiles.kde as kde
    import memsieve.text.marks as marks
    from memsieve.text.lexicon import ENGLISH

    if name == "slots":
        kde.SLOT_MAX_LACKING = -1
        object.__setattr__(ENGLISH, "placed_values", frozenset())
    else:
        kde.said_of_another = lambda *args, **kwargs: ()
        marks.amounts = lambda *args, **kwargs: frozenset()
        marks.unread_values = lambda *args, **kwargs: []


def _later(m, rng: random.Random, uid: str, earlier: str, later: str):
    """The decision on ``later`` in a scope of 8 fillers and ``earlier``."""
    for text in rng.sample(FILLERS, 8):
        m.add(text, user_id=uid)
    m.add(earlier, user_id=uid)
    (d,) = m.add(later, user_id=uid)
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(SETS), default="slots", help="which rules' pairs")
    ap.add_argument("--before", action="store_true", help="turn the set's rules off")
    ns = ap.parse_args(argv)
    from memsieve import Memory

    if ns.before:
        _rules_off(ns.set)
    changes, repeats = SETS[ns.set]
    rng = random.Random(7)
    lost = folded = 0
    with tempfile.TemporaryDirectory() as tmp, Memory(os.path.join(tmp, "spot.db")) as m:
        for i, (earlier, later, value) in enumerate(changes):
            d = _later(m, rng, f"c{i}", earlier, later)
            if d.event == "NOOP" and not re.search(value, m.get(d.memory_id, user_id=f"c{i}").text, re.I):
                lost += 1
                print("lost:", later)
        for i, (earlier, later) in enumerate(repeats):
            d = _later(m, rng, f"r{i}", earlier, later)
            folded += d.event == "NOOP"
            if d.event != "NOOP":
                print("stored:", later)
    print(f"changes lost {lost} / {len(changes)}, repeats folded {folded} / {len(repeats)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
