"""Whether a text restates a memory or changes it in place.

``changed_in_place`` tells a restatement from a change: a text that lines up
with a memory word for word but puts words in place of its own ("My bike is
blue" / "My bike is green"), or swaps two of them ("Anna hired Ben" / "Ben
hired Anna"), changes what it says however its words net out. It reads the
two texts' ``Marks`` (memsieve.text.marks): their word hashes in order, their
doers, and where the memory names an owner.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from difflib import SequenceMatcher

from memsieve.text.marks import MAX_SWAP_WORDS, Marks, is_term, sequence_words, word_hashes
from memsieve.text.voice import voice_turned


def changed_in_place(text: str, mine: Marks, memory: Marks, *, share: float,
                     filler: Collection[str] = (), possessive: str = "",
                     role_words: Collection[str] = (), speaker_owners: Collection[str] = (),
                     part: bool = False) -> tuple[str, ...] | None:
    """The words a text puts in place of a memory's, or adds among them, when the two line up.

    A text that changes a value of a memory in place ("My bike is blue" / "My bike is green")
    keeps the memory's words and their order; a paraphrase rebuilds the sentence ("I'm afraid
    of heights" / "Heights scare me"). When at least ``share`` of both texts' words line up
    (difflib's ratio, 2 x matched / both lengths), this returns the text's words in the
    alignment's replacements and insertions (empty: it only drops or repeats words); else None.
    Texts longer than ``MAX_ALIGNED`` words are compared by their words' overlap, without
    the quadratic alignment, and return their words the memory does not hold.

    Args:
        text: the text; ``mine`` its marks (``Lexicon.marks``), ``memory`` the memory's.
        share: the least ratio of lined-up words.
        filler: words a restatement adds without saying more ("honestly"): never changed.
        possessive: the possessive ending ("'s"): two neighbours that trade places across it
            swap owner and owned ("my friend's sister" / "my sister's friend").
        role_words: prepositions that say who gives and who gets ("from", "for"): where both
            texts say some, they are compared in order ("a gift from my aunt" / "a gift for my
            aunt", "from Boston to Austin" / "to Boston from Austin"); one the memory has no
            counterpart for rebuilds the sentence ("my brother and I share" / "I share ... with
            my brother").
        speaker_owners: the speaker's possessives ("my", "our"): an owner the memory names by
            the possessive ending that the text drops, or says as one of these, is another
            owner ("my friend's son" / "my son", "Tom's car" / "my car"), unlike "his" or "her",
            which name the one the memory names.
        part: the text is a passage of a longer one (memsieve.text.passages), to be found inside
            the memory: ``share`` of its own words must line up, not of both texts' (a passage
            of a text on the memory's subject that names other things in one list: "smoked
            tofu" where the memory says "chicken thighs"). Nothing is exchanged or moved: the
            whole text is judged for that.
    """
    a, b = mine.sequence, memory.sequence
    if not a or not b:
        return None
    if len(a) == len(b) == 2 and not part:
        return _one_of_two(text, mine, memory, filler)
    # The words both say, in any order, bound the ratio from above: most pairs stop here,
    # without the quadratic alignment.
    counts, theirs = Counter(a), Counter(b)

    def ratio(lined: int) -> float:
        return lined / len(a) if part else 2.0 * lined / (len(a) + len(b))

    if ratio(sum((counts & theirs).values())) < share:
        return None
    said = sequence_words(text)
    if len(a) > MAX_ALIGNED or len(b) > MAX_ALIGNED:
        return tuple(dict.fromkeys(w for w, h in zip(said, a) if h not in theirs and w not in filler))
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    # A verb turned between the active and the passive with the same doer ("Tom interviewed
    # Maria" / "Maria was interviewed by Tom") trades its doer's and receiver's places by grammar.
    turned = voice_turned(mine.doers, memory.doers)
    if ratio(matched) < share:
        if part:
            return None
        # Two words that swapped places break the alignment of a short text ("Anna hired Ben
        # last year" / "Ben hired Anna last year"); exchanged back, the two line up.
        swapped = [] if turned else _swapped(said, a, b, counts, theirs, matched, filler, share=share,
                                             possessive=possessive)
        return tuple(dict.fromkeys(swapped)) if swapped else None
    # A word moved, not changed ("Nairobi is where I was born" / "I was born in Nairobi"), is
    # said as often by the memory: only a word the text says more often than it is new there.
    more = counts - theirs
    # The opcodes turn the text into the memory: the text's own words are those a "replace" or
    # a "delete" takes out.
    roles = frozenset(role_words)
    opcodes = matcher.get_opcodes()
    new = [w for tag, i1, i2, _, _ in opcodes if tag in ("replace", "delete")
           for w, h in zip(said[i1:i2], a[i1:i2]) if more[h] > 0 and w not in filler and w not in roles]
    new += _filler_in_place(said, a, b, opcodes, memory.terms, counts, filler)
    if part:  # a passage says a share of its memory's prepositions: its whole text is judged for them
        return tuple(dict.fromkeys(new))
    new += _roles_changed(said, a, b, roles)
    new += _owner_dropped(said, a, b, opcodes, memory.owners, mine.owners, frozenset(speaker_owners))
    if len(a) > MAX_SWAP_WORDS or len(b) > MAX_SWAP_WORDS:
        # Too long to try exchanges (_swapped): a word that left its place on both sides, said as
        # often by each, moved; in a near-copy of a long text, moved words trade what they say
        # ("the pads are at 30 percent and the tires need replacing" / "the tires are at ...").
        return tuple(dict.fromkeys(new + _moved(said, a, b, opcodes, filler)))
    return tuple(dict.fromkeys(new + ([] if turned else _swapped(said, a, b, counts, theirs, matched, filler,
                                                                  possessive=possessive))))


def _filler_in_place(said: Sequence[str], a: array, b: array, opcodes: Sequence[tuple[str, int, int, int, int]],
                     terms: bytes, counts: Counter[int], filler: Collection[str]) -> list[str]:
    """The text's filler words said in place of one content word of the memory that the text does not
    say: "the right side" / "the left side", "I like jazz" / "I hate jazz", "pretty nervous" / "a
    little nervous". A filler added among the memory's words ("I really like jazz") still says
    nothing; one put for a word the memory says ("yeah" for "yes") neither."""
    if not filler or len(terms) != len(b):
        return []
    fill = word_hashes(frozenset(filler))
    return [said[i1] for tag, i1, i2, j1, j2 in opcodes
            if tag == "replace" and i2 - i1 == 1 and said[i1] in filler
            and any(terms[j] and b[j] not in fill and b[j] not in counts for j in range(j1, j2))]


def _owner_dropped(said: Sequence[str], a: array, b: array, opcodes: Sequence[tuple[str, int, int, int, int]],
                   owners: Sequence[int], text_owners: Sequence[int], speaker_owners: frozenset[str]) -> list[str]:
    """The text's words whose owner the memory names and the text does not: "my son" against
    "my friend's son", "my car" against "Tom's car". The memory's owner, said by the possessive
    ending right before the word both texts say, is left out by the text or put as the speaker's
    own ("my"), and the text names it as no owner anywhere (``text_owners``: "my parents live
    with my husband" does not say "my husband's parents"). A text that gives the word another
    owner of its own ("my friend's car" against "my friend Jake's car") says whose it is.
    ``opcodes`` turn the text (``a``) into the memory (``b``)."""
    if not owners:
        return []
    held, theirs = {a[k] for k in text_owners}, set(owners)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag not in ("insert", "replace") or i2 >= len(a) or j2 >= len(b) or a[i2] != b[j2]:
            continue
        if tag == "replace" and not all(w in speaker_owners for w in said[i1:i2]):
            continue  # "his car" names the one "Tom's car" names
        if tag == "insert" and i2 - 1 in text_owners:
            continue  # "my friend's car": the text says whose
        if any(j in theirs and b[j] not in held for j in range(j1, j2)):
            out.append(f"whose {said[i2]!r}")
    return out


def _roles_changed(said: Sequence[str], a: array, b: array, roles: frozenset[str]) -> list[str]:
    """The role prepositions of a text that line up with a memory, where both say some and not
    the same ones in the same order: "a gift from my aunt" / "a gift for my aunt", "from Boston
    to Austin" / "to Boston from Austin". One that only rebuilds the sentence, where the memory
    says none, changes nothing ("my brother and I share" / "I share ... with my brother")."""
    if not roles:
        return []
    hashes = {hash(w) for w in roles}
    mine = [(w, h) for w, h in zip(said, a) if w in roles]
    theirs = [h for h in b if h in hashes]
    if not mine or not theirs or [h for _, h in mine] == theirs:
        return []
    return [w for k, (w, h) in enumerate(mine) if k >= len(theirs) or theirs[k] != h]


def _moved(said: Sequence[str], a: array, b: array, opcodes: Sequence[tuple[str, int, int, int, int]],
           filler: Collection[str]) -> list[str]:
    """The content words of a text that left their place against a memory on both sides: in a
    "replace" or "delete" of the text and in a "replace" or "insert" of the memory, said as
    often by each."""
    left = Counter(h for tag, i1, i2, _, _ in opcodes if tag in ("replace", "delete") for h in a[i1:i2])
    came = Counter(h for tag, _, _, j1, j2 in opcodes if tag in ("replace", "insert") for h in b[j1:j2])
    return [w for tag, i1, i2, _, _ in opcodes if tag in ("replace", "delete")
            for w, h in zip(said[i1:i2], a[i1:i2]) if left[h] == came[h] and is_term(w) and w not in filler]


#: Above this many words, ``changed_in_place`` counts shared words instead of aligning them.
MAX_ALIGNED = 5000
#: At most this many trial exchanges of two words a text that swapped places (``MAX_SWAP_WORDS``).
MAX_SWAP_TRIALS = 12


def _swapped(said: Sequence[str], a: array, b: array, counts: Counter, theirs: Counter, matched: int,
             filler: Collection[str], *, share: float = 0.0, possessive: str = "") -> list[str]:
    """The content words of a text that changed places with each other against a memory.

    Two words that each only moved may have swapped roles: "Anna hired Ben" / "Ben hired Anna",
    "I like tea more than coffee" / "... coffee more than tea". A moved clause does not swap
    ("Nairobi is where I was born" / "I was born in Nairobi"). So a pair of content words, each
    said once by both texts and in opposite orders, is a swap when exchanging the two in the
    text lines up two more words with the memory, counted over every word or over the content
    words alone ("my aunt owes the landlord" / "the landlord owes my aunt": the determiners
    stay behind), and at least ``share`` of both texts' words (difflib's ratio) once exchanged.
    Two neighbours joined by the ``possessive`` ending line up only one more word once exchanged,
    yet trade owner and owned ("my friend's sister" / "my sister's friend"): one is enough.
    """
    if len(a) > MAX_SWAP_WORDS or len(b) > MAX_SWAP_WORDS:
        return []
    at = {h: j for j, h in enumerate(b)}
    content = [is_term(w) for w in said]
    once = [i for i, h in enumerate(a) if counts[h] == 1 and theirs[h] == 1 and content[i] and said[i] not in filler]
    # The content words alone: the text's stopwords are left out of both sides.
    stop = {h for h, is_term in zip(a, content) if not is_term}
    kept = [i for i, is_term in enumerate(content) if is_term]
    b_content = array("q", [h for h in b if h not in stop])
    base_content = _lined(array("q", [a[i] for i in kept]), b_content)
    out: list[str] = []
    trials = 0
    for x, i in enumerate(once):
        for j in once[x + 1:]:
            if at[a[i]] < at[a[j]]:
                continue
            trials += 1
            if trials > MAX_SWAP_TRIALS:
                return out
            trial = array("q", a)
            trial[i], trial[j] = a[j], a[i]
            lined = _lined(trial, b)
            if 2.0 * lined / (len(a) + len(b)) < share:
                continue
            owner = bool(possessive) and j == i + 1 and said[i].endswith(possessive)
            if (lined >= matched + 2 or (owner and lined >= matched + 1)
                    or _lined(array("q", [trial[k] for k in kept]), b_content) >= base_content + 2):
                out += [said[i], said[j]]
    return out


def _lined(a: array, b: array) -> int:
    """How many words of ``a`` and ``b`` line up (difflib's matching blocks)."""
    return sum(block.size for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def _one_of_two(text: str, mine: Marks, memory: Marks, filler: Collection[str]) -> tuple[str, ...] | None:
    """Two words against two: the text's other word where it keeps the memory's pronoun and puts
    another content word in the other's place ("I'm single" / "I'm married", "she's vegan" /
    "she's vegetarian"), as a longer text lined up with its memory changes one word ("I'm doing
    great" / "I'm doing well" line up at 0.67); None otherwise. Two words without a pronoun
    ("Sounds great!" / "Sounds awesome!") are a reaction, not a fact, and do not line up."""
    a, b = mine.sequence, memory.sequence
    if not mine.roles or mine.roles != memory.roles or len(mine.terms) != 2 or len(memory.terms) != 2:
        return None
    kept = [k for k in range(2) if a[k] == b[k]]
    if len(kept) != 1:
        return None
    k = 1 - kept[0]
    said = sequence_words(text)
    if not (mine.terms[k] and memory.terms[k]) or said[k] in filler:
        return None
    return (said[k],)


def swapped_in_slot(said: Sequence[str], mine: Marks, memory: Marks,
                    filler: Collection[str] = (), *, most: int = 2,
                    forms: Mapping[int, int] | None = None) -> tuple[str, ...]:
    """The content words a rebuilt text puts in the slot of a memory's word it drops.

    A text that moves a clause and changes one word does not line up with its memory
    ("My daughter plays soccer on weekends" / "On weekends my daughter plays basketball"), so
    ``changed_in_place`` returns None and the information term nets the new word against the
    dropped one as a paraphrase's swap. A paraphrase rebuilds around other words ("I'm afraid of
    heights" / "Heights scare me"); a change keeps the words around the one it changes. So a new
    content word is in a dropped word's slot when the nearest content word before both, or after
    both, is one word both texts say ("plays basketball" / "plays soccer", "watch the news" /
    "read the news"). Stopwords are passed over: "the", "my" and "a" move with the sentence.

    Args:
        said: the text's words (``sequence_words``), one per entry of ``mine.sequence``.
        mine: the text's marks; ``memory`` the memory's (``Lexicon.marks``).
        filler: words that say nothing by themselves ("honestly"): never in a slot.
        most: read only a text that says at most this many content words the memory does not,
            and drops as many of the memory's: a sentence rebuilt around one or two changed
            words. A text that says less than its memory, or two chat turns sharing a
            few words, are the information term's to weigh.
        forms: a word's hash mapped to its group's first form (``Lexicon.verb_form_hashes``): a
            verb's past and participle ("gave" / "given") are one word here, whose voice the
            voice rules read.

    Returns:
        The text's words in a dropped word's slot, each once, in text order.
    """
    if len(mine.terms) != len(mine.sequence) or len(memory.terms) != len(memory.sequence):
        return ()
    forms = forms or {}
    a = [forms.get(h, h) for h in mine.sequence]
    b = [forms.get(h, h) for h in memory.sequence]
    if not a or not b:
        return ()
    ours, theirs = set(a), set(b)
    new = [i for i in range(len(a)) if mine.terms[i] and a[i] not in theirs and said[i] not in filler]
    dropped = [j for j in range(len(b)) if memory.terms[j] and b[j] not in ours]
    # A change trades words one for one; a rewording says the thing in more or fewer words
    # ("meets" / "gets together", "my flight leaves" / "I fly out").
    count = len({a[i] for i in new})
    if not dropped or not count or count > most or count != len({b[j] for j in dropped}):
        return ()
    # An adverb in "-ly" qualifies what the memory says ("takes about" / "is roughly"): not a slot's value.
    new = [i for i in new if not said[i].endswith("ly")]
    a_slots, b_slots = _content_slots(a, mine.terms), _content_slots(b, memory.terms)
    held = {slot for j in dropped for slot in b_slots[j] if slot is not None}
    return tuple(dict.fromkeys(said[i] for i in new if held.intersection(s for s in a_slots[i] if s is not None)))


def _content_slots(seq: Sequence[int], terms: bytes) -> list[tuple[tuple[str, int] | None, tuple[str, int] | None]]:
    """For each word of ``seq``: (("before", the hash of the nearest content word before it), ("after",
    the nearest after)), None at an edge."""
    content = [k for k in range(len(seq)) if terms[k]]
    out: list[tuple[tuple[str, int] | None, tuple[str, int] | None]] = []
    prev: tuple[str, int] | None = None
    nxt = 0
    for k in range(len(seq)):
        while nxt < len(content) and content[nxt] <= k:
            nxt += 1
        after = ("after", seq[content[nxt]]) if nxt < len(content) else None
        out.append((prev, after))
        if terms[k]:
            prev = ("before", seq[k])
    return out


def placed_values(said: Sequence[str], mine: Marks, memory: Marks, placed: Collection[str]) -> tuple[str, ...]:
    """The text's words where it puts a stopword that says a value in another word's place, or
    another word in one's place, against a memory it lines up with: "away until June 3" / "away
    from June 3", "unless it rains" / "if it rains". ``changed_in_place`` passes stopwords over;
    these (``Lexicon.placed_values``) carry the value. Texts longer than ``MAX_SWAP_WORDS`` are
    not read (a long text's alignment is the overlap of its words, which keeps no places).

    Returns:
        The text's words in such a place, each once, in text order.
    """
    a, b = mine.sequence, memory.sequence
    if not placed or not a or not b or len(a) > MAX_SWAP_WORDS or len(b) > MAX_SWAP_WORDS:
        return ()
    hashes = word_hashes(frozenset(placed))
    if hashes.isdisjoint(a) and hashes.isdisjoint(b):
        return ()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "replace" and (not hashes.isdisjoint(a[i1:i2]) or not hashes.isdisjoint(b[j1:j2])):
            out += said[i1:i2]
    return tuple(dict.fromkeys(out))
