"""An OpenAI-compatible chat client that returns JSON objects or typed errors.

Works with any endpoint that speaks ``POST /v1/chat/completions``: OpenAI,
vLLM, Ollama, llama.cpp's server and llama-cpp-python's server. The client
asks for constrained JSON with llama.cpp's ``response_format`` (a JSON schema
applied as a decoding grammar) and falls back to plain prompting once when a
server rejects that field, then remembers the fallback.

Failures are never silent. An unreachable or failing endpoint raises
:class:`memsieve.LLMError` naming the URL and a fix; a reply that holds no JSON
object raises :class:`memsieve.LLMResponseError` with the raw text. Both are
counted in :attr:`LLMClient.faults`.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

from memsieve.errors import ConfigError, InvalidTextError, LLMError
from memsieve.llm.parsing import excerpt, extract_json, response_error
from memsieve.llm.prompts import FACTS_SCHEMA, PROMPT_STYLES, fact_extraction_messages


def _sdk() -> ModuleType:
    """The openai package, imported on first use: it is most of what ``import memsieve`` would
    cost (0.86 of 1.1 s on a 2-core EPYC), and a memory without an LLM never calls it."""
    import openai

    return openai


@dataclass(frozen=True, kw_only=True)
class LLMConfig:
    """Settings for the LLM endpoint.

    Attributes:
        base_url: Root of the OpenAI-compatible API, e.g.
            ``"http://127.0.0.1:8080/v1"``.
        model: Model name sent with each request (local servers often ignore it).
        api_key: Bearer token; local servers accept any value.
        timeout: Seconds to wait for one HTTP request.
        retries: Extra attempts after a connection error, timeout, 429 or 5xx.
        temperature: Sampling temperature; 0 makes decisions repeatable.
        max_tokens: Upper bound on tokens generated per reply.
        prompt_style: ``"short"`` for small models, ``"full"`` for strong ones.
        use_response_format: Send a JSON schema as ``response_format``.
    """

    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout: float = 30.0
    retries: int = 2
    temperature: float = 0.0
    max_tokens: int = 512
    prompt_style: str = "short"
    use_response_format: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base_url must be an http(s) URL, got {self.base_url!r}; "
                "use e.g. 'http://127.0.0.1:8080/v1'"
            )
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(
                f"model must be a non-empty str, got {self.model!r}; "
                "pass the name the server lists at /v1/models"
            )
        if not isinstance(self.api_key, str):
            raise ConfigError(f"api_key must be a str, got {type(self.api_key).__name__}")
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or not (
            math.isfinite(self.timeout) and self.timeout > 0
        ):
            raise ConfigError(f"timeout must be a positive number of seconds, got {self.timeout!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ConfigError(f"retries must be an int >= 0, got {self.retries!r}")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) or not (
            math.isfinite(self.temperature) and 0.0 <= self.temperature <= 2.0
        ):
            raise ConfigError(f"temperature must be in [0, 2], got {self.temperature!r}")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be an int >= 1, got {self.max_tokens!r}")
        if self.prompt_style not in PROMPT_STYLES:
            raise ConfigError(
                f"unknown prompt_style {self.prompt_style!r}; use 'short' for small "
                "models or 'full' for strong ones"
            )
        if not isinstance(self.use_response_format, bool):
            raise ConfigError(
                f"use_response_format must be a bool, got {self.use_response_format!r}"
            )


@dataclass(frozen=True)
class Usage:
    """Token usage of one logical request.

    Attributes:
        prompt_tokens: Prompt tokens as reported by the server (0 if it
            reports none).
        completion_tokens: Generated tokens as reported by the server.
        calls: HTTP requests made: 1, or 2 when the response_format fallback ran.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0


@dataclass(frozen=True)
class Completion:
    """A parsed reply together with what produced it.

    Attributes:
        data: The JSON object from the reply.
        usage: Tokens and requests spent on it.
        raw: The reply text before any stripping.
        fell_back: True if this request was retried without response_format.
    """

    data: dict
    usage: Usage
    raw: str
    fell_back: bool


class LLMClient:
    """Chat client for memsieve's LLM steps. Safe to share between threads.

    Attributes:
        config: The :class:`LLMConfig` in use.
        calls: HTTP requests made (a response_format fallback counts twice).
        prompt_tokens: Prompt tokens reported by the server, summed.
        completion_tokens: Completion tokens reported by the server, summed.
        faults: Requests that ended in LLMError or LLMResponseError.
        response_format_fallback: True once the server rejected
            response_format; later requests are sent without it.
    """

    def __init__(self, config: LLMConfig) -> None:
        if not isinstance(config, LLMConfig):
            raise ConfigError(
                f"expected an LLMConfig, got {type(config).__name__}; "
                "use LLMClient(LLMConfig(base_url=..., model=...))"
            )
        self.config = config
        self._openai = _sdk().OpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            timeout=config.timeout,
            max_retries=config.retries,
        )
        self._lock = threading.Lock()
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.faults = 0
        self.response_format_fallback = False

    def __repr__(self) -> str:
        return (
            f"LLMClient(base_url={self.config.base_url!r}, model={self.config.model!r}, "
            f"calls={self.calls}, faults={self.faults})"
        )

    def usage_dict(self) -> dict:
        """Counters so far, for ``Memory.stats()``.

        Returns:
            ``{"calls", "prompt_tokens", "completion_tokens", "faults",
            "response_format_fallback"}``.
        """
        with self._lock:
            return {
                "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "faults": self.faults,
                "response_format_fallback": self.response_format_fallback,
            }

    def _count_fault(self) -> None:
        with self._lock:
            self.faults += 1

    def _unreachable(self, exc: Exception, name: str) -> LLMError:
        return LLMError(
            f"llm request {name!r} to {self.config.base_url} failed after "
            f"{self.config.retries} retries: {type(exc).__name__}: {exc}; check that "
            "the server is running and base_url is right, or raise timeout/retries"
        )

    def _post(self, messages: list[dict], schema: dict | None, name: str, with_format: bool):
        kwargs: dict = {}
        if with_format:
            fmt: dict = {"type": "json_object"}
            if schema is not None:
                fmt["schema"] = schema
            kwargs["response_format"] = fmt
        with self._lock:
            self.calls += 1
        openai = _sdk()
        try:
            return self._openai.chat.completions.create(
                model=self.config.model,
                messages=cast(Any, messages),  # plain dicts are what the API takes
                temperature=self.config.temperature,
                max_tokens=self.config.max_tokens,
                **kwargs,
            )
        except openai.BadRequestError:
            raise  # the caller decides whether this was about response_format
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise self._unreachable(exc, name) from exc
        except openai.APIStatusError as exc:
            raise LLMError(
                f"llm request {name!r} to {self.config.base_url} got HTTP "
                f"{exc.status_code} after {self.config.retries} retries: "
                f"{excerpt(str(exc))}; check the server log, the model name "
                f"{self.config.model!r} and api_key"
            ) from exc
        except openai.OpenAIError as exc:
            raise LLMError(
                f"llm request {name!r} to {self.config.base_url} failed: "
                f"{type(exc).__name__}: {exc}; check that the endpoint is OpenAI-compatible"
            ) from exc

    def complete(self, messages: list[dict], *, schema: dict | None, name: str) -> Completion:
        """Send a chat request and parse the reply as one JSON object.

        Args:
            messages: OpenAI chat messages.
            schema: JSON schema for the reply, or ``None`` for any object.
            name: Short label for the request (``"facts"``, ``"crud"``) used in
                error messages.

        Returns:
            The parsed reply with its usage and raw text.

        Raises:
            LLMError: the endpoint was unreachable, timed out or failed after
                the configured retries.
            LLMResponseError: the reply held no JSON object (``.raw`` has it).
        """
        try:
            return self._complete(messages, schema=schema, name=name)
        except LLMError:
            self._count_fault()
            raise

    def _complete(self, messages: list[dict], *, schema: dict | None, name: str) -> Completion:
        with self._lock:
            with_format = self.config.use_response_format and not self.response_format_fallback
        calls = 1
        fell_back = False
        openai = _sdk()
        try:
            response = self._post(messages, schema, name, with_format)
        except openai.BadRequestError as exc:
            if not with_format:
                raise LLMError(
                    f"llm request {name!r} to {self.config.base_url} was rejected "
                    f"(HTTP 400): {excerpt(str(exc))}; check the model name and the "
                    "server's context size"
                ) from exc
            # The server does not take response_format (or not with a schema):
            # ask once more with the prompt alone, and stop sending it.
            with self._lock:
                self.response_format_fallback = True
            calls, fell_back = 2, True
            try:
                response = self._post(messages, schema, name, False)
            except openai.BadRequestError as exc2:
                raise LLMError(
                    f"llm request {name!r} to {self.config.base_url} was rejected "
                    f"(HTTP 400) with and without response_format: {excerpt(str(exc2))}; "
                    "check the model name and the server's context size"
                ) from exc2
        usage = self._record_usage(response, calls)
        raw = _reply_text(response)
        if raw is None:
            raise response_error(
                f"llm reply to {name!r} from {self.config.base_url} had no text content; "
                "check that the model is a chat model",
                None,
            )
        try:
            data = extract_json(raw)
        except LLMError as exc:
            if _finish_reason(response) == "length":
                raise response_error(
                    f"llm reply to {name!r} was cut off at max_tokens="
                    f"{self.config.max_tokens} before the JSON closed: {excerpt(raw)}; "
                    "raise max_tokens",
                    raw,
                ) from exc
            raise
        return Completion(data=data, usage=usage, raw=raw, fell_back=fell_back)

    def _record_usage(self, response, calls: int) -> Usage:
        reported = getattr(response, "usage", None)
        prompt = int(getattr(reported, "prompt_tokens", 0) or 0)
        completion = int(getattr(reported, "completion_tokens", 0) or 0)
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
        return Usage(prompt_tokens=prompt, completion_tokens=completion, calls=calls)

    def complete_json(
        self, messages: list[dict], *, schema: dict | None, name: str
    ) -> tuple[dict, Usage]:
        """Send a chat request and return the reply's JSON object and usage.

        See :meth:`complete` for arguments and errors.

        Returns:
            ``(data, usage)``.
        """
        done = self.complete(messages, schema=schema, name=name)
        return done.data, done.usage

    def extract_facts(self, text: str) -> list[str]:
        """Ask the model for the facts in ``text``.

        Args:
            text: A message or conversation excerpt.

        Returns:
            Facts as stripped, non-empty strings in the model's order (an empty
            list when the model says there is nothing to remember). Blank items
            are dropped.

        Raises:
            InvalidTextError: ``text`` is not a non-empty str.
            LLMError: the endpoint failed.
            LLMResponseError: the reply is not ``{"facts": [str, ...]}``.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidTextError(
                f"expected non-empty text to extract facts from, got {excerpt(repr(text))}; "
                "pass the message text as a str"
            )
        messages = fact_extraction_messages(text, style=self.config.prompt_style)
        done = self.complete(messages, schema=FACTS_SCHEMA, name="facts")
        try:
            return _validate_facts(done.data, done.raw)
        except LLMError:
            self._count_fault()
            raise


def _validate_facts(data: dict, raw: str) -> list[str]:
    facts = data.get("facts")
    if not isinstance(facts, list):
        raise response_error(
            f"expected {{\"facts\": [str, ...]}} from the model, got facts="
            f"{excerpt(repr(facts))} in {excerpt(raw)}; use a model that follows "
            "JSON instructions or enable response_format",
            raw,
        )
    out: list[str] = []
    for i, fact in enumerate(facts):
        if not isinstance(fact, str):
            raise response_error(
                f"expected every fact to be a str, got {type(fact).__name__} at "
                f"position {i} in {excerpt(raw)}; use a model that follows JSON "
                "instructions or enable response_format",
                raw,
            )
        fact = fact.strip()
        if fact:
            out.append(fact)
    return out


def _reply_text(response) -> str | None:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return None
    message = getattr(choices[0], "message", None)
    return getattr(message, "content", None)


def _finish_reason(response) -> str | None:
    choices = getattr(response, "choices", None) or []
    return getattr(choices[0], "finish_reason", None) if choices else None
