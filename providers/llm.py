"""Chat LLM over any OpenAI-compatible HTTP endpoint: streaming text and function calls."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx
import openai
import orjson
import structlog

from providers.errors import (
    Cause,
    PermanentProviderError,
    ProviderError,
    TransientProviderError,
)

log = structlog.get_logger(__name__)

Message = dict[str, Any]
ToolSpec = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it


@dataclass(frozen=True, slots=True)
class ToolCallsReady:
    calls: list[ToolCall]


StreamItem = TextDelta | ToolCallsReady


class ChatLLM(Protocol):
    name: str

    def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[StreamItem]:
        """Text deltas as they come; at most one ``ToolCallsReady`` at the end."""
        ...


_TOOL_OPENER = re.compile(r"^\s*(\{|\[|```|<\s*/?\s*(tool|function|json))", re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
# <tool_call>, <tools>, <function_call>, <function=…>, <json> … as small models improvise them
_TAGS = re.compile(r"<\s*/?\s*(tool|function|json)[^>]*>", re.IGNORECASE)


_DECIDE_AFTER_CHARS = 6
_FENCE_LINE_CHARS = 40  # a fence's first line longer than this: decided without its language
# A fenced block's language: a code block (「```python」) is never a tool call, so it is not held
# to the end of the reply (it was: 8 s before the first sentence); markup ones still are.
_FENCE_LANGUAGE = re.compile(r"^\s*```[ \t]*([\w+#.-]*)[ \t]*\n")
_MARKUP_LANGUAGES = frozenset({"", "json", "json5", "jsonc", "tool", "tool_call", "tool_code",
                               "function", "function_call", "functions", "xml"})  # fmt: skip


def ready_to_decide(opening: str) -> bool:
    """Enough of a reply's opening to tell speech from a tool call written as text: a few
    characters, or for a fenced block its whole first line (its language)."""
    if len(opening.strip()) < _DECIDE_AFTER_CHARS:
        return False
    if opening.lstrip().startswith("```"):
        return "\n" in opening or len(opening) >= _FENCE_LINE_CHARS
    return True


def decide_opening(opening: str) -> tuple[list[str] | None, bool, str]:
    """(held, seen_text, text to speak now) for a reply's first characters."""
    fence = _FENCE_LANGUAGE.match(opening)
    if fence and fence.group(1).lower() not in _MARKUP_LANGUAGES:
        return None, True, opening
    if _TOOL_OPENER.match(opening):
        return [opening], False, ""
    return None, True, opening


def textual_tool_calls(text: str, names: set[str]) -> list[ToolCall] | None:
    """Tool calls a model wrote as text instead of using the API (small local models do:
    ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``, bare JSON, even ``{{…}}``).
    Returns None unless everything parses to calls of offered tools."""
    body = _TAGS.sub("\n", _FENCE.sub("", text.strip())).strip()
    calls = _as_calls(_loads_loosely(body), names)
    if not calls:
        for line in (line.strip() for line in body.splitlines() if line.strip()):
            found = _as_calls(_loads_loosely(line), names)
            if not found:
                return None
            calls += found
    return [ToolCall(f"text_call_{i}", c.name, c.arguments) for i, c in enumerate(calls)] or None


_JSON = json.JSONDecoder()


def _loads_loosely(text: str) -> object:
    """JSON as small models write it: extra template braces around it (「{{…}}」, even
    unbalanced 「{{…}}}}」) are tolerated; any other trailing text is not."""
    text = text.strip()
    while text.startswith("{{"):
        text = text[1:]
    try:
        parsed, end = _JSON.raw_decode(text)
    except ValueError:
        return None
    return parsed if not text[end:].strip().strip("}]") else None


def looks_like_tool_call(text: str) -> bool:
    """Tool-call markup or a JSON object naming a function: never speech."""
    body = _FENCE.sub("", text.strip())
    if _TAGS.search(body):
        return True
    parsed = _loads_loosely(_TAGS.sub("\n", body).strip())
    return isinstance(parsed, dict) and ("name" in parsed or "function" in parsed)


def _as_calls(parsed: object, names: set[str]) -> list[ToolCall]:
    items = parsed if isinstance(parsed, list) else [parsed]
    calls = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            item = item["function"]  # OpenAI's own wrapper: {"type": "function", "function": …}
        if not isinstance(item, dict) or item.get("name") not in names:
            return []
        arguments = item.get("arguments", item.get("parameters", {}))
        raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
        calls.append(ToolCall(f"text_call_{index}", str(item["name"]), raw))
    return calls


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def openai_client(base_url: str, api_key: str, timeout_s: float) -> openai.AsyncOpenAI:
    """Retries are ours to decide (the turn apologises, the worker backs off), never the SDK's."""
    return openai.AsyncOpenAI(
        base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=0
    )


def provider_error(name: str, exc: Exception, *, garbage_transient: bool) -> ProviderError:
    """One classification of SDK failures: unreachable, 5xx and 429 may pass; other HTTP errors
    (auth, unknown model) will not; an unusable body is as transient as the caller decides."""
    if isinstance(exc, openai.APIConnectionError | openai.APITimeoutError | httpx.TransportError):
        # httpx's own errors escape the SDK when the server dies mid-stream (connection reset)
        return TransientProviderError(name, f"unreachable: {exc}", "unreachable")
    if isinstance(exc, openai.APIStatusError):
        transient = exc.status_code >= 500 or exc.status_code == 429
        kind = TransientProviderError if transient else PermanentProviderError
        cause: Cause = "unavailable" if transient else "failed"
        return kind(name, f"HTTP {exc.status_code}: {exc.message[:200]}", cause)
    kind = TransientProviderError if garbage_transient else PermanentProviderError
    return kind(name, f"unusable response: {exc}")


class OpenAICompatibleLLM:
    """``chat.completions`` with ``stream=True``; tool-call deltas are reassembled by index."""

    name = "openai-compatible"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        timeout_s: float,
        temperature: float,
        max_tokens: int,
    ) -> None:
        self._client = openai_client(base_url, api_key, timeout_s)
        self.model = model
        self._temperature = temperature
        self._max_tokens = max_tokens

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamItem]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "temperature": self._temperature,
            "max_tokens": self._max_tokens,
        }
        if tools:
            kwargs["tools"] = tools
        partial: dict[int, _PartialCall] = {}
        names = {t["function"]["name"] for t in tools if "function" in t}
        # A reply that opens like a tool call is held back, never spoken, until it is known
        # whether it is one (see textual_tool_calls).
        held: list[str] | None = None
        opening = ""  # the first characters, until it is clear whether they open a tool call
        seen_text = False
        chunks = 0
        try:
            response = await self._client.chat.completions.create(**kwargs)
            async for chunk in response:
                chunks += 1
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                if delta.content:
                    if held is not None:
                        held.append(delta.content)
                    elif not seen_text:  # held even with no tools: JSON is never speech
                        opening += delta.content
                        if ready_to_decide(opening):
                            held, seen_text, text = decide_opening(opening)
                            opening = ""
                            if text:
                                yield TextDelta(text)
                    else:
                        yield TextDelta(delta.content)
                for call in delta.tool_calls or []:
                    slot = partial.setdefault(call.index, _PartialCall())
                    if call.id:
                        slot.id = call.id
                    if call.function and call.function.name:
                        slot.name += call.function.name
                    if call.function and call.function.arguments:
                        slot.arguments.append(call.function.arguments)
        except (
            openai.APIError,
            httpx.TransportError,
            ValueError,
            TypeError,
            AttributeError,
        ) as exc:
            # a body that is not a chat completion stream ("garbage") is not worth retrying
            # while a person waits: the device hears an apology
            raise provider_error(self.name, exc, garbage_transient=False) from exc
        if chunks == 0:
            raise PermanentProviderError(self.name, "response held no completion chunks")
        text_calls: list[ToolCall] = []
        if opening:
            held, _, text = decide_opening(opening)
            if text:
                yield TextDelta(text)
        if held is not None:
            written = "".join(held)
            text_calls = textual_tool_calls(written, names) or []
            if not text_calls:
                if looks_like_tool_call(written):
                    # A call of a tool we never offered, or one too broken to run: the device
                    # must not read JSON aloud (the turn says a short apology instead).
                    log.warning("llm.unusable_text_tool_call", text=written[:200])
                else:
                    yield TextDelta(written)
        calls = [
            ToolCall(slot.id or f"call_{index}", slot.name, "".join(slot.arguments) or "{}")
            for index, slot in sorted(partial.items())
            if slot.name
        ]
        calls += text_calls
        if calls:
            yield ToolCallsReady(calls)


StructuredStyle = Literal["json_schema", "json_object"]


class StructuredLLM(Protocol):
    """A completion constrained to a JSON schema; returns the reply text."""

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], name: str
    ) -> str: ...


class JsonLLM:
    """One non-streaming completion constrained to a JSON schema (the write path's calls).

    ``json_schema`` is OpenAI's structured output; ``json_object`` + ``schema`` is what
    llama.cpp's server turns into a grammar. The reply text is returned as is: parsing and
    validation belong to the caller, which knows what a usable answer is.
    """

    name = "write-llm"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        timeout_s: float,
        max_tokens: int,
        style: StructuredStyle,
    ) -> None:
        self._client = openai_client(base_url, api_key, timeout_s)
        self.model = model
        self.style = style
        self._max_tokens = max_tokens

    def _format(self, schema: dict[str, Any], name: str) -> dict[str, Any]:
        if self.style == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        return {"type": "json_object", "schema": schema}

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], name: str
    ) -> str:
        try:
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": 0,
                "max_tokens": self._max_tokens,
                "response_format": self._format(schema, name),
            }
            response = await self._client.chat.completions.create(**kwargs)
        except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
            raise provider_error(self.name, exc, garbage_transient=True) from exc
        if not response.choices:
            raise TransientProviderError(self.name, "response held no choices")
        return response.choices[0].message.content or ""
