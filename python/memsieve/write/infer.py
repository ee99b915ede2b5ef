"""``add(infer=True)``: requests to forget are carried out, facts are extracted from the rest.

The LLM sees the messages as one conversation excerpt and returns the facts
worth remembering; those facts, not the messages, become the candidates. A
user's message that asks to forget something ("please forget my old address")
is no fact to store: it is split off first and carried out as a request to
forget (memsieve.write.forget.forget_asked), and its decisions come first.
"""

from __future__ import annotations

from collections.abc import Callable

from memsieve.inputs import check_text
from memsieve.parts import LLM
from memsieve.records import Decision
from memsieve.text.lexicon import ENGLISH, Lexicon

#: (text, role) of one message; role None for plain text.
Pair = tuple[str, str | None]


def split_forget_requests(pairs: list[Pair], *, lexicon: Lexicon = ENGLISH) -> tuple[list[str], list[Pair]]:
    """(the user's requests to forget, the other messages), each in order.

    Only a user's message (or plain text) can ask to forget; an assistant
    saying "I will forget that" asks nothing.
    """
    requests = [text for text, role in pairs if role in (None, "user") and lexicon.is_forget_request(text)]
    return requests, [(text, role) for text, role in pairs if text not in requests]


def extracted_facts(client: LLM, pairs: list[Pair], *, max_chars: int) -> list[Pair]:
    """The facts the LLM finds in the messages, each checked as a candidate text.

    Raises:
        LLMError: the extraction failed; nothing is written.
        InvalidTextError: an extracted fact is not an acceptable text (too long, ...).
    """
    if not pairs:
        return []
    facts = client.extract_facts("\n".join(f"{role}: {t}" if role else t for t, role in pairs))
    return [(check_text(f, where="extracted fact", max_chars=max_chars), None) for f in facts]


def infer_candidates(pairs: list[Pair], *, client: LLM, forget_asked: Callable[[str], list[Decision]],
                     max_chars: int, lexicon: Lexicon = ENGLISH) -> tuple[list[Decision], list[Pair]]:
    """Carry out the requests to forget among ``pairs``; return (their decisions, the facts to write).

    Args:
        pairs: the call's messages, checked.
        client: the LLM client.
        forget_asked: carries out one request to forget in the call's scope.
        max_chars: longest accepted candidate text.
        lexicon: the language a request to forget is told apart in.
    """
    requests, rest = split_forget_requests(pairs, lexicon=lexicon)
    forgotten = [d for r in requests for d in forget_asked(r)]
    return forgotten, extracted_facts(client, rest, max_chars=max_chars)
