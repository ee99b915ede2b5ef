"""Turn what a chat model actually says into the JSON object it was asked for.

memsieve talks to any OpenAI-compatible endpoint, and the models behind them
are imperfect in predictable ways: reasoning models wrap their answer in
``<think>`` blocks, small local models leak chat-template tokens, many models
put the JSON in a Markdown fence or after a sentence of preamble, and some keep
talking after the closing brace. All of that is stripped here before parsing.

What is never done: turning garbage into ``{}``. A reply that holds no JSON
object raises :class:`memsieve.LLMResponseError` carrying the raw text, so the
caller can count, log and record the fault instead of mistaking it for an empty
answer.
"""

from __future__ import annotations

from collections.abc import Iterator

import json
import re

from memsieve.errors import LLMResponseError

# A closed reasoning block anywhere in the reply.
_THINK_BLOCK = re.compile(r"<think\b[^>]*>.*?</think\s*>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think\b[^>]*>", re.IGNORECASE)

# Chat-template control tokens. The generic ``<|...|>`` form covers ChatML,
# Llama 3, Phi and GPT-style templates; the rest are the older spellings.
_SPECIAL_TOKENS = re.compile(
    r"<\|[^<>|\n]{0,64}\|>"  # <|im_start|>, <|eot_id|>, <|endoftext|>, ...
    r"|</?s>"  # Llama 2 / Mistral sentence markers
    r"|\[/?INST\]"  # Llama 2 / Mistral instruction markers
    r"|<</?SYS>>"  # Llama 2 system markers
    r"|<(?:start|end)_of_turn>"  # Gemma
    r"|<\uff5c[^<>\n]{0,64}\uff5c>",  # DeepSeek's full-width bar tokens
    re.IGNORECASE,
)

# A Markdown fence line such as ```json or ``` (the language tag is optional).
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")

# Longest raw excerpt quoted in an error message; the full text is on ``.raw``.
_EXCERPT = 160


def response_error(message: str, raw: str | None) -> LLMResponseError:
    """Build an LLMResponseError that carries the model's raw reply.

    Args:
        message: Lowercase description of what was wrong, with a fix.
        raw: The unmodified text the model returned (``None`` if it sent none).

    Returns:
        The error, with the raw text on its ``raw`` attribute.
    """
    err = LLMResponseError(message)
    # errors.py declares no ``raw`` attribute; it is attached per instance.
    setattr(err, "raw", raw)  # noqa: B010
    return err


def excerpt(text: str | None) -> str:
    """Return a short, single-line, repr-quoted excerpt of ``text`` for messages."""
    if text is None:
        return "None"
    flat = " ".join(text.split())
    if len(flat) > _EXCERPT:
        flat = flat[:_EXCERPT] + "..."
    return repr(flat)


def strip_noise(text: str) -> str:
    """Remove reasoning blocks, chat special tokens and code fences.

    Args:
        text: A raw model reply.

    Returns:
        The reply with the noise removed; JSON, preamble and trailing prose
        are left for :func:`extract_json` to separate.
    """
    cleaned = _THINK_BLOCK.sub(" ", text)
    # Templates that open the <think> block in the prompt leave the reply with
    # reasoning followed by a bare </think>: everything before the last close
    # is reasoning, whether or not its opening tag survived.
    closes = list(_THINK_CLOSE.finditer(cleaned))
    if closes:
        cleaned = cleaned[closes[-1].end():]
    # A reply cut off mid-reasoning has an open <think> and no close; the rest
    # of it is unfinished thought, not an answer.
    still_open = _THINK_OPEN.search(cleaned)
    if still_open:
        cleaned = cleaned[: still_open.start()]
    cleaned = _SPECIAL_TOKENS.sub(" ", cleaned)
    cleaned = _FENCE.sub(" ", cleaned)
    return cleaned


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, bool]]:
    """Yield (index, char, inside_string) from ``start``, tracking JSON string literals.

    A string's opening quote is reported as outside it and its closing quote as
    inside, so callers see every structural character exactly once.
    """
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            yield i, ch, True
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        else:
            yield i, ch, False
            if ch == '"':
                in_string = True


def _balanced_object_end(text: str, start: int) -> int | None:
    """Find the index just past the ``}`` that closes the ``{`` at ``start``.

    Braces inside JSON strings (including escaped quotes) do not count.

    Returns:
        The end index, or ``None`` if the object never closes.
    """
    depth = 0
    for i, ch, inside in _scan(text, start):
        if inside:
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` outside strings.

    Small models often write ``["a", "b",]``; the intent is unambiguous, so
    this one repair is made rather than discarding an otherwise valid answer.
    """
    out: list[str] = []
    pending_comma: list[str] = []  # a comma plus the whitespace after it
    for _, ch, inside in _scan(text):
        if inside:
            out.append(ch)
            continue
        if pending_comma:
            if ch.isspace():
                pending_comma.append(ch)
                continue
            if ch in "}]":
                out.extend(pending_comma[1:])  # keep the whitespace, drop the comma
            else:
                out.extend(pending_comma)
            pending_comma = []
        if ch == ",":
            pending_comma = [ch]
            continue
        out.append(ch)
    out.extend(pending_comma)
    return "".join(out)


def _load_object(candidate: str) -> dict | None:
    """Parse ``candidate`` as a JSON object, with the trailing-comma repair."""
    for attempt in (candidate, _drop_trailing_commas(candidate)):
        try:
            value = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def extract_json(text: str) -> dict:
    """Extract the first JSON object from a model reply.

    Strips ``<think>`` blocks, chat special tokens and code fences, skips any
    preamble before the object, and ignores anything after its closing brace
    (found by a balanced-brace scan that respects JSON strings).

    Args:
        text: The raw reply (``message.content``) from the model.

    Returns:
        The parsed object.

    Raises:
        LLMResponseError: if ``text`` is not a string or holds no parseable
            JSON object. The raw text is on the error's ``raw`` attribute.
    """
    if not isinstance(text, str):
        raise response_error(
            f"expected the model reply as a str, got {type(text).__name__}; "
            "check that the endpoint returns message.content",
            None if text is None else str(text),
        )
    cleaned = strip_noise(text)
    whole = _load_object(cleaned.strip())
    if whole is not None:
        return whole
    pos = cleaned.find("{")
    while pos != -1:
        end = _balanced_object_end(cleaned, pos)
        if end is not None:
            found = _load_object(cleaned[pos:end])
            if found is not None:
                return found
        pos = cleaned.find("{", pos + 1)
    raise response_error(
        f"no JSON object in the model reply {excerpt(text)} ({len(text)} chars); "
        "use a model that follows JSON instructions, enable response_format, "
        "or raise max_tokens if the reply was cut off",
        text,
    )
