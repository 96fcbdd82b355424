"""One conversational turn: text in → streamed LLM reply → TTS → paced Opus (§1.8 A/D/F).

The LLM streams into a sentence splitter; a speaker task synthesises sentence *n+1* while the
pacer is still sending sentence *n*. Tool calls (device MCP or server tools) are executed and fed
back to the model, at most ``session.max_tool_rounds`` times.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson
import structlog

from config.settings import AudioSettings, SessionSettings
from providers.errors import ProviderError
from providers.llm import ChatLLM, Message, TextDelta, ToolCall, ToolCallsReady
from providers.opus import OpusEncoder, resample
from providers.tts import TextToSpeech
from server import metrics
from server.conversation import Conversation, Utterance
from server.emotions import emotion_of
from server.mcp_client import DeviceMcpClient, McpCallError
from server.pacing import AudioPacer
from server.protocol.machine import DeviceProtocol
from server.sentences import SentenceSplitter
from server.tools import ToolContext, ToolRegistry

log = structlog.get_logger(__name__)

APOLOGY_LLM = "抱歉，我现在有点想不起来，请稍后再问我一次。"
_END = object()


class PromptContributor(Protocol):
    """Adds a block to the system prompt for this utterance (the memory read path does)."""

    async def prompt_block(self, utterance: str, context: ToolContext) -> str | None: ...


@dataclass
class TurnServices:
    llm: ChatLLM
    tts: TextToSpeech
    tools: ToolRegistry
    audio: AudioSettings
    session: SessionSettings
    system_prompt: str
    contributors: list[PromptContributor] = field(default_factory=list)
    clock: Callable[[], float] = time.monotonic


@dataclass
class TurnTiming:
    started: float
    provider_s: float = 0.0
    first_audio_at: float | None = None


class Turn:
    def __init__(
        self,
        services: TurnServices,
        protocol: DeviceProtocol,
        flush: Callable[[], Awaitable[None]],
        conversation: Conversation,
        encoder: OpusEncoder,
        mcp: DeviceMcpClient | None,
        context: ToolContext,
    ) -> None:
        self.s = services
        self.protocol = protocol
        self.flush = flush
        self.conversation = conversation
        self.encoder = encoder
        self.mcp = mcp
        self.context = context
        self.pacer = AudioPacer(
            services.audio.frame_ms, services.audio.head_start_frames, services.audio.tail_ms
        )
        self.spoken: list[str] = []
        self.timing = TurnTiming(started=services.clock())
        self._emotion_sent = False
        self._timestamp_ms = 0

    async def run(self, text: str, started: float | None = None) -> None:
        if started is not None:
            self.timing.started = started
        history = self.conversation.history_messages()
        self.conversation.add(Utterance("user", text, time.time()))
        self.protocol.send_stt(text)
        self.protocol.send_tts_start()
        await self.flush()
        queue: asyncio.Queue[object] = asyncio.Queue()
        speaker = asyncio.create_task(self._speak(queue))
        try:
            try:
                await self._think(text, history, queue)
            except ProviderError as exc:
                log.error("turn.llm_failed", error=str(exc), transient=exc.transient)
                metrics.PROVIDER_ERRORS.labels(provider="llm").inc()
                await queue.put(APOLOGY_LLM)
            await queue.put(_END)
            await speaker
            await asyncio.sleep(self.pacer.delay_until_played(self.s.clock()))
        finally:
            if not speaker.done():
                speaker.cancel()
            self.conversation.add(
                Utterance("assistant", "".join(self.spoken), time.time(), interrupted=False)
            )
        self.protocol.send_tts_stop()
        await self.flush()

    # ---- thinking ---------------------------------------------------------------------------

    async def _messages(self, text: str, history: list[Message]) -> list[Message]:
        blocks = [self.s.system_prompt]
        for contributor in self.s.contributors:
            block = await contributor.prompt_block(text, self.context)
            if block:
                blocks.append(block)
        return [{"role": "system", "content": "\n\n".join(blocks)}, *history,
                {"role": "user", "content": text}]  # fmt: skip

    def _functions(self) -> list[dict[str, Any]]:
        functions = self.s.tools.functions()
        if self.mcp is not None:
            functions += [tool.as_function() for tool in self.mcp.tools.values()]
        return functions

    async def _think(self, text: str, history: list[Message], queue: asyncio.Queue[object]) -> None:
        messages = await self._messages(text, history)
        functions = self._functions()
        for _round in range(self.s.session.max_tool_rounds + 1):
            splitter = SentenceSplitter()
            calls: list[ToolCall] = []
            reply: list[str] = []
            stream = self.s.llm.stream(messages, functions)
            while True:
                waited = self.s.clock()
                try:
                    item = await anext(stream)
                except StopAsyncIteration:
                    break
                finally:
                    if self.timing.first_audio_at is None:
                        self.timing.provider_s += self.s.clock() - waited
                if isinstance(item, TextDelta):
                    reply.append(item.text)
                    await self._on_text(item.text, splitter, queue)
                elif isinstance(item, ToolCallsReady):
                    calls = item.calls
            rest = splitter.flush()
            if rest:
                await queue.put(rest)
            if not calls:
                return
            messages.append(_assistant_tool_message("".join(reply), calls))
            for call in calls:
                result = await self._call_tool(call)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            functions = functions if _round + 1 < self.s.session.max_tool_rounds else []

    async def _on_text(
        self, text: str, splitter: SentenceSplitter, queue: asyncio.Queue[object]
    ) -> None:
        if not self._emotion_sent and text.strip():
            emoji, emotion = emotion_of(text)
            self.protocol.send_emotion(emoji, emotion)
            self._emotion_sent = True
            await self.flush()
        for segment in splitter.feed(text):
            await queue.put(segment)

    async def _call_tool(self, call: ToolCall) -> str:
        try:
            arguments = orjson.loads(call.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
        except (orjson.JSONDecodeError, ValueError) as exc:
            return f"error: invalid arguments for {call.name}: {exc}"
        tool = self.s.tools.get(call.name)
        log.info("turn.tool_call", tool=call.name, arguments=arguments)
        try:
            if tool is not None:
                return await tool.handler(arguments, self.context)
            if self.mcp is not None and call.name in self.mcp.tools:
                return await self.mcp.call(call.name, arguments)
        except McpCallError as exc:
            log.warning("turn.device_tool_failed", tool=call.name, error=str(exc))
            return f"error: {exc}"
        return f"error: unknown tool {call.name}"

    # ---- speaking ---------------------------------------------------------------------------

    async def _speak(self, queue: asyncio.Queue[object]) -> None:
        while (item := await queue.get()) is not _END:
            sentence = str(item)
            started = self.s.clock()
            try:
                speech = await self.s.tts.synthesize(sentence)
            except ProviderError as exc:
                log.error("turn.tts_failed", sentence=sentence, error=str(exc))
                metrics.PROVIDER_ERRORS.labels(provider="tts").inc()
                speech = None
            finally:
                if self.timing.first_audio_at is None:
                    self.timing.provider_s += self.s.clock() - started
            self.protocol.send_sentence_start(sentence)
            self.spoken.append(sentence)
            await self.flush()
            if speech is None or not speech.pcm:
                continue
            pcm = resample(speech.pcm, speech.sample_rate, self.encoder.sample_rate)
            for packet in self.encoder.encode_pcm(pcm):
                await self._send_frame(packet)

    async def _send_frame(self, packet: bytes) -> None:
        delay = self.pacer.delay_before_next(self.s.clock())
        if delay > 0:
            await asyncio.sleep(delay)
        now = self.s.clock()
        self.protocol.send_audio(packet, self._timestamp_ms, now)
        self._timestamp_ms += self.s.audio.frame_ms
        await self.flush()
        self.pacer.frame_sent(now)
        if self.timing.first_audio_at is None:
            self.timing.first_audio_at = self.s.clock()
            total = self.timing.first_audio_at - self.timing.started
            metrics.FIRST_AUDIO.observe(total)
            metrics.SERVER_ADDED.observe(max(0.0, total - self.timing.provider_s))


def _assistant_tool_message(text: str, calls: list[ToolCall]) -> Message:
    return {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }
