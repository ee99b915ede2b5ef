"""Near-copies of long texts (an assistant's plan, a user's long story), with the real embedder.

A text longer than the embedder's window is judged passage by passage as well as whole
(memsieve.text.passages). Three things used to go wrong with near-copies of one:

- a passage was held to the whole memory's denials, tenses and plans, so a harmless edit
  (bullets, curly quotes) left a passage "without 'not'" and the copy was stored again;
- two details that traded places ("the tires are at 30 percent and the brake pads need
  replacing") kept every word and its count, and no exchange was tried on a long text;
- a denial dropped in one place, with another denial said elsewhere in both texts, left
  the set of denials as it was;
- a passage was lined up with the whole memory (never a share of both long enough) and its
  new words were netted against every word of the memory it does not say, so a long answer
  that names other things in one of its lists was folded.
"""

from __future__ import annotations

import pytest

from memsieve import Memory
from memsieve.text.lexicon import ENGLISH
from memsieve.text.aligned import changed_in_place
from memsieve.text.unmarked import part_of, unmarked
from memsieve.text.passages import passage_spans
from tests.conftest import TableEmbedder, unit

PLAN = """Here is a week of packed lunches and dinners for two, built around one big shop on Sunday.

**Sunday prep (about 90 minutes)**
- Roast two trays of vegetables: peppers, courgettes, red onions and sweet potatoes, 40 minutes at 200C.
- Cook a pot of brown rice and a pot of red lentils; cool them quickly and keep them in the fridge.
- Bake six chicken thighs with paprika and garlic; they keep for four days.
- Don't dress the salads yet: the leaves wilt overnight.

**Lunches**
- Monday and Tuesday: lentil and roasted vegetable bowls with a spoon of yoghurt.
- Wednesday and Thursday: chicken wraps with hummus, grated carrot and spinach.
- Friday: leftover rice fried with eggs, peas and spring onions.

**Dinners**
- Monday: baked cod with lemon, the rest of the roasted vegetables and rice.
- Tuesday: a lentil curry with coconut milk, ready in 25 minutes.
- Wednesday: pasta with a tomato and tuna sauce.
- Thursday: chicken thighs with a tray of new potatoes.
- Friday: homemade pizza night, not a takeaway.

**Shopping list**
- Vegetables: 3 peppers, 2 courgettes, 3 red onions, 4 sweet potatoes, a bag of spinach, 4 carrots,
  a bag of new potatoes, spring onions and a bag of frozen peas.
- Protein: 6 chicken thighs, 2 cod fillets, a tin of tuna, a dozen eggs and 250g of red lentils.
- Store cupboard: brown rice, wholewheat pasta, a tin of coconut milk, two tins of tomatoes, hummus,
  wraps, pizza bases, paprika, curry powder and garlic.
- Dairy: a large pot of plain yoghurt and a ball of mozzarella for the pizza.

**Tips**
- Label the boxes with the day, so nobody eats Thursday's wraps on Monday.
- The lentils and the rice both freeze well in flat bags; thaw them overnight in the fridge.
- If the week gets busy, the curry and the pasta sauce can swap days without any waste.

Keep the cod for Monday at the latest, and freeze half of the curry if you won't eat it by Wednesday."""

STORY = """So a bit of background before my question. My son Theo is nine and in fourth grade, and he has
always found reading hard: he is about a year behind, guesses at long words and gets upset when he
has to read aloud. His teacher, Mr. Okafor, has been great about it. The school assessed him in
September and said he doesn't need a support plan for now, but they put him in a small reading
group that meets three mornings a week. We also found a tutor who comes on Tuesdays and Thursdays
after school, and Theo actually likes her, which I did not expect. At home we read together for
twenty minutes before bed, and I let him pick the books, mostly comics and books about dinosaurs.
What I am wondering is whether we should ask for a full evaluation anyway, or give the reading
group and the tutor until the end of the school year before we push for more. His dad thinks we
should wait, because Theo has been more confident since the tutoring started, and he read a whole
chapter book on his own over half-term. I worry that waiting costs him another year, and that the
gap gets harder to close the longer it stays open. Any advice on how to raise it with the school
without sounding like we are ignoring what they have already done would be very welcome."""


@pytest.fixture()
def memory(tmp_path):
    with Memory(tmp_path / "m.db") as m:
        m.add_many(["I like hiking on weekends.", "My favourite food is ramen.", "We watch a film on Fridays.",
                    "My sister lives in Glasgow and works as a midwife.", "I drink two coffees a day."],
                   user_id="u")
        yield m


def _second(memory: Memory, first: str, later: str):
    (a,) = memory.add(first, user_id="u")
    (d,) = memory.add(later, user_id="u")
    assert a.event == "ADD"
    return a, d


def test_the_texts_are_long_enough_to_be_judged_by_passages():
    assert len(passage_spans(PLAN)) >= 2 and len(passage_spans(STORY)) >= 2


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("\n- ", "\n* "),
    lambda t: t.replace("'", "\u2019").replace("Here is", "Here's"),
    lambda t: t.replace("**", ""),
])
def test_a_harmless_edit_of_a_long_text_is_folded(memory, edit):
    later = edit(PLAN)
    assert later != PLAN
    a, d = _second(memory, PLAN, later)
    assert d.event == "NOOP", d.reason
    assert d.memory_id == a.memory_id


def test_two_details_of_a_long_text_that_trade_places_are_not_folded(memory):
    later = PLAN.replace("- Monday and Tuesday: lentil and roasted vegetable bowls with a spoon of yoghurt.\n"
                         "- Wednesday and Thursday: chicken wraps with hummus, grated carrot and spinach.",
                         "- Monday and Tuesday: chicken wraps with hummus, grated carrot and spinach.\n"
                         "- Wednesday and Thursday: lentil and roasted vegetable bowls with a spoon of yoghurt.")
    assert later != PLAN
    _, d = _second(memory, PLAN, later)
    assert d.event == "ADD", d.reason


def test_a_denial_dropped_from_a_long_text_that_keeps_another_is_not_folded(memory):
    later = STORY.replace("said he doesn't need a support plan for now, but", "said he does need a support plan, and")
    assert later != STORY and "not" in STORY and "not" in later  # "I did not expect" stays in both
    _, d = _second(memory, STORY, later)
    assert d.event == "ADD", d.reason


def test_a_passage_is_read_with_the_denials_of_its_whole_text():
    whole = ENGLISH.marks(PLAN)
    passage = ENGLISH.marks(PLAN[: PLAN.index("**Lunches**")])  # says "don't", not the later "not"/"won't"
    memory = ENGLISH.marks(PLAN)
    assert "not" in whole.polarity
    read = part_of(passage, whole)
    assert read.polarity == whole.polarity and read.denials == whole.denials
    assert read.sequence == passage.sequence  # what is lined up stays the passage's own
    assert not any("without" in r for r in unmarked(read, memory))


def test_denials_are_counted_only_where_both_texts_line_up_and_deny():
    mine, theirs = ENGLISH.marks("I don't smoke, and I don't drink."), ENGLISH.marks("I don't smoke, and I drink.")
    assert (mine.denials, theirs.denials) == (2, 1)
    assert changed_in_place("I don't smoke, and I don't drink.", mine, theirs, share=0.65) is not None
    assert "2 denials where it says 1" in unmarked(mine, theirs, aligned=True)
    assert not any("denials" in r for r in unmarked(mine, theirs, aligned=False))


def _near_everything(*texts: tuple[str, tuple[float, ...]]) -> TableEmbedder:
    """Each text and every passage of it at the given point: only the words decide."""
    table = TableEmbedder()
    for text, point in texts:
        for start, end in [(0, len(text)), *passage_spans(text)]:
            table.table[text[start:end]] = unit(*point)
    return table


def _vegetarian(plan: str) -> str:
    """The plan's sections in the reverse order, its meat and fish swapped for other things: a
    text on the same subject that does not line up with the plan word for word."""
    head, *sections = plan.split("\n\n")
    text = "\n\n".join([head, *sections[::-1]])
    for meat, other in (("chicken thighs", "smoked tofu"), ("chicken", "tempeh"), ("cod", "halloumi"),
                        ("tuna", "chickpea"), ("eggs", "edamame beans")):
        text = text.replace(meat, other)
    return text


def test_a_passage_is_found_inside_its_memory_and_not_netted_against_the_rest_of_it(tmp_path):
    """A passage lines up with the part of its memory that says the same (``changed_in_place(...,
    part=True)``: a share of the passage's own words), and its information is not netted against
    the memory's other words, which the text's other passages say. Before, a long answer on the
    memory's subject, in another order and naming other things in one list, was folded."""
    later, bullets = _vegetarian(PLAN), PLAN.replace("\n- ", "\n* ")
    assert changed_in_place(later, ENGLISH.marks(later), ENGLISH.marks(PLAN), share=0.65) is None
    near = _near_everything((PLAN, (1, 0, 0)), (later, (1, 0.02, 0)), (bullets, (1, 0, 0.01)))
    with Memory(tmp_path / "m.db", embedder=near) as m:
        m.add_many(["I like hiking on weekends.", "My favourite food is ramen."], user_id="u")
        (a,) = m.add(PLAN, user_id="u")
        (d,) = m.add(later, user_id="u")
        assert d.event == "ADD", d.reason
        assert any(w in d.reason for w in ("tofu", "tempeh", "halloumi", "chickpea", "edamam")), d.reason
        # the same text with its bullets changed still folds
        (again,) = m.add(bullets, user_id="u")
        assert again.event == "NOOP" and again.memory_id == a.memory_id, again.reason
