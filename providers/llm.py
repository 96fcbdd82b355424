"""Chat LLM over any OpenAI-compatible HTTP endpoint: streaming text and function calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai

from providers.errors import PermanentProviderError, TransientProviderError

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


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


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
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=0
        )
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
        chunks = 0
        try:
            response = await self._client.chat.completions.create(**kwargs)
            async for chunk in response:
                chunks += 1
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                if delta.content:
                    yield TextDelta(delta.content)
                for call in delta.tool_calls or []:
                    slot = partial.setdefault(call.index, _PartialCall())
                    if call.id:
                        slot.id = call.id
                    if call.function and call.function.name:
                        slot.name += call.function.name
                    if call.function and call.function.arguments:
                        slot.arguments.append(call.function.arguments)
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientProviderError(self.name, f"unreachable: {exc}") from exc
        except openai.APIStatusError as exc:
            kind = TransientProviderError if exc.status_code >= 500 else PermanentProviderError
            raise kind(self.name, f"HTTP {exc.status_code}: {exc.message[:200]}") from exc
        except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
            # A body that is not a chat completion stream ("garbage") lands here.
            raise PermanentProviderError(self.name, f"unusable response: {exc}") from exc
        if chunks == 0:
            raise PermanentProviderError(self.name, "response held no completion chunks")
        calls = [
            ToolCall(slot.id or f"call_{index}", slot.name, "".join(slot.arguments) or "{}")
            for index, slot in sorted(partial.items())
            if slot.name
        ]
        if calls:
            yield ToolCallsReady(calls)
