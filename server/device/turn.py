"""One conversational turn: text in → streamed LLM reply → TTS → paced Opus (§1.8 A/D/F).

The LLM streams into a sentence splitter; a speaker task synthesises sentence *n+1* while the
pacer is still sending sentence *n*. Tool calls (device MCP or server tools) are executed and fed
back to the model, at most ``session.max_tool_rounds`` times; a call repeated with the same
arguments is not run again, and a model that answers nothing after tool results gets them once
more as plain context (see ``Turn._think``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson
import structlog

from config.settings import AudioSettings, SessionSettings
from providers.errors import ProviderError
from providers.llm import ChatLLM, Message, TextDelta, ToolCall, ToolCallsReady
from providers.opus import OpusEncoder, resample
from providers.tts import TextToSpeech, speakable
from server import metrics
from server.device.claims import reminder_sentence
from server.device.clock import moment_note
from server.device.conversation import Conversation
from server.device.emotions import emotion_of
from server.device.heeding import heeded
from server.device.pacing import AudioPacer
from server.device.priority import NoPriority, TurnPriority
from server.device.reply_checks import ReplyChecks
from server.device.rules import NO_WEATHER_NOTE, STATEMENT_NOTE
from server.device.sentences import CodeBlocks, SentenceSplitter
from server.mcp.client import DeviceMcpClient, McpCallError
from server.memory.read_result import ReadResult
from server.protocol.machine import DeviceProtocol
from server.tools import ToolContext, ToolRegistry
from server.understanding.question import Question
from workers.contract import Said

log = structlog.get_logger(__name__)

# What the device says when the model cannot answer: short and true, in the device's language.
LLM_UNAVAILABLE = {
    "zh": "抱歉，语言模型现在不可用，请稍后再试。",
    "en": "Sorry, the language model is not available right now. Please try again later.",
}
LLM_FAILED = {
    "zh": "抱歉，语言模型刚才出错了，请再问我一次。",
    "en": "Sorry, the language model failed to answer. Please ask me again.",
}
SentenceQueue = asyncio.Queue[str | None]  # None ends the turn's speech


@dataclass(frozen=True, slots=True)
class AudioChunk:
    sentence: str | None  # subtitle to send first (None: continuation of the last sentence)
    packets: list[bytes]


class PromptContributor(Protocol):
    """Adds a block to the system prompt for this utterance."""

    async def prompt_block(self, utterance: str, context: ToolContext) -> str | None: ...


class MemoryReader(Protocol):
    """Reads memory for this utterance before the model answers (the read path does): its block
    goes into the prompt, the rest of its result into the turn's reminder and reply checks."""

    async def read(self, utterance: str, context: ToolContext) -> ReadResult: ...


@dataclass
class TurnServices:
    llm: ChatLLM
    tts: TextToSpeech
    tools: ToolRegistry
    audio: AudioSettings
    session: SessionSettings
    system_prompt: str
    memory: MemoryReader | None = None
    contributors: list[PromptContributor] = field(default_factory=list)  # blocks after memory's
    clock: Callable[[], float] = time.monotonic
    encode_pool: Executor | None = None  # None = asyncio's default executor
    # Observability hook: (text→first frame seconds, of which provider seconds) per turn.
    on_first_audio: Callable[[float, float], None] | None = None
    # Called with the turn's trace (recall, tool calls, reply) just before tts stop.
    on_turn_end: Callable[[ToolContext], Awaitable[None]] | None = None
    language: str = "zh"  # the device's language, for the fixed sentences below
    # While a turn is in flight the write path's local model is paused (server.device.priority)
    priority: TurnPriority = field(default_factory=NoPriority)

    def sentence(self, cause: str) -> str:
        """The fixed sentence for a turn the model could not answer."""
        table = LLM_FAILED if cause == "llm_failed" else LLM_UNAVAILABLE
        return table.get(self.language.split("-")[0], table["zh"])


@dataclass
class TurnTiming:
    """Where a turn's time goes. ``marks`` are clock times of its stages, the first time each
    is reached (see ``STAGES``); the trace keeps them as ms after ``started`` (for a spoken
    turn, the person's last voiced frame), the voice-latency bench splits them."""

    started: float
    provider_s: float = 0.0
    marks: dict[str, float] = field(default_factory=dict)

    @property
    def first_audio_at(self) -> float | None:
        return self.marks.get("first_audio")

    def mark(self, stage: str, at: float) -> None:
        self.marks.setdefault(stage, at)

    def as_ms(self) -> dict[str, float]:
        return {s: round((t - self.started) * 1000, 1) for s, t in sorted(
            self.marks.items(), key=lambda item: item[1])}  # fmt: skip


# A turn's stages in order. A spoken turn's first three come from the session (VAD decided the
# utterance ended, ASR began, ASR returned); then the read path has built the prompt, the
# model's first token, the first sentence to speak, its speech synthesized, its first frame sent.
STAGES = ("utterance_end", "asr_start", "asr_done", "prompt_ready", "llm_first_token",
          "first_sentence", "first_tts", "first_audio")  # fmt: skip


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
        self.services = services
        self.settings: SessionSettings = services.session
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
        self._queued = 0  # sentences the LLM produced this turn
        self.checks = ReplyChecks(
            services.language,
            context.trace.replaced,
            lambda: [call.name for call in context.trace.tool_calls],
        )
        self._code = CodeBlocks(services.language)  # a fenced code block is not read aloud

    async def run(
        self, text: str, started: float | None = None, marks: dict[str, float] | None = None
    ) -> None:
        """Answer ``text`` with the LLM (tools, memory), spoken as it streams. ``marks``: the
        stages before the turn (a spoken turn's VAD end and ASR)."""
        history = self.conversation.history_messages()
        for stage, at in (marks or {}).items():
            self.timing.mark(stage, at)

        async def think(queue: SentenceQueue) -> None:
            try:
                await self._think(text, history, queue)
            except ProviderError as exc:
                cause = "llm_failed" if exc.cause == "failed" else "llm_unavailable"
                log.error("turn.llm_failed", cause=cause, error=str(exc), transient=exc.transient)
                metrics.PROVIDER_ERRORS.labels(provider="llm").inc()
                metrics.TURN_FAILURES.labels(cause=cause).inc()
                self.context.trace.failure = f"{cause}: {exc}"
                await queue.put(self.services.sentence(cause))
                return
            closing = self.checks.closing()
            if closing is not None:
                await self._put(queue, closing)
            elif not self._queued:  # the model said nothing speakable: never leave silence
                log.warning("turn.empty_reply", question=text, kind=self.checks.kind)
                await queue.put(self.checks.fallback())

        await self._respond(text, started, think)

    async def say(self, reply: str, heard: str | None = None, started: float | None = None) -> None:
        """A fixed reply without any LLM call (goodbye, an apology), spoken like any other."""

        async def fixed(queue: SentenceQueue) -> None:
            await queue.put(reply)

        await self._respond(heard, started, fixed)

    async def _respond(
        self,
        heard: str | None,
        started: float | None,
        produce: Callable[[SentenceQueue], Awaitable[None]],
    ) -> None:
        if started is not None:
            self.timing.started = started
        if heard is not None:
            self.conversation.add(Said(role="user", text=heard, at=time.time()))
            self.protocol.send_stt(heard)
        self.context.trace.question = heard or ""
        self.context.trace.person = self.context.person
        self.protocol.send_tts_start()
        await self.flush()
        queue: SentenceQueue = asyncio.Queue()
        speaker = asyncio.create_task(self._speak(queue))
        finished = False
        try:
            async with self.services.priority.turn():  # the write model waits meanwhile
                await produce(queue)
                await queue.put(None)
                await speaker
            await asyncio.sleep(self.pacer.delay_until_played(self.services.clock()))
            finished = True
        finally:
            if not speaker.done():
                speaker.cancel()
            self.conversation.add(
                Said(
                    role="assistant",
                    text="".join(self.spoken),
                    at=time.time(),
                    interrupted=not finished,
                )
            )
            self.context.trace.reply = "".join(self.spoken)
            self.context.trace.finished = finished
            self.context.trace.timing = self.timing.as_ms()
            if self.services.on_turn_end is not None:
                # every turn leaves its trace, an interrupted one (abort, barge-in, a failure)
                # too: shielded, so a cancelled turn's is still written
                await asyncio.shield(self.services.on_turn_end(self.context))
        self.protocol.send_tts_stop()
        await self.flush()

    # ---- thinking ---------------------------------------------------------------------------

    async def _read(self, text: str) -> ReadResult:
        """What memory holds for ``text`` (nothing without a memory, or when it fails)."""
        nothing = ReadResult(text, self.context.person)
        if self.services.memory is None:
            return nothing
        try:
            return await self.services.memory.read(text, self.context)
        except Exception as exc:  # the memory store down: answer without memory, never fail
            log.error("turn.memory_unavailable", error=repr(exc), question=text)
            metrics.MEMORY_UNAVAILABLE.inc()
            self.context.trace.memory = {"error": repr(exc)[:500]}
            return nothing

    async def _messages(
        self, text: str, history: list[Message], functions: list[dict[str, Any]], read: ReadResult
    ) -> list[Message]:
        """Static system prompt first, then history, then this turn's blocks (memory, an act
        no tool does) in their own system message right before the user's words: everything
        before them is the same from turn to turn, so a local llama.cpp server reuses its KV
        cache for that prefix."""
        blocks = [read.block] if read.block else []
        for contributor in self.services.contributors:
            block = await contributor.prompt_block(text, self.context)
            if block:
                blocks.append(block)
        understood = read.understood or Question(text)
        language = self.services.language.split("-")[0]
        if understood.asks_the_moment:
            blocks.append(moment_note(self.services.language))
        elif understood.asks_the_weather and not _knows_weather(functions):
            blocks.append(NO_WEATHER_NOTE.get(language, NO_WEATHER_NOTE["zh"]))
        note = self.checks.declined(text, functions, read)
        if note:
            blocks.append(note)
        elif read.statement:
            blocks.append(STATEMENT_NOTE.get(language, STATEMENT_NOTE["zh"]))
        turn_context = [{"role": "system", "content": "\n\n".join(blocks)}] if blocks else []
        return [{"role": "system", "content": self.services.system_prompt}, *history, *turn_context,
                {"role": "user", "content": text}]  # fmt: skip

    def _functions(self) -> list[dict[str, Any]]:
        functions = self.services.tools.functions()
        if self.mcp is not None:
            functions += [tool.as_function() for tool in self.mcp.tools.values()]
        return functions

    async def _think(self, text: str, history: list[Message], queue: SentenceQueue) -> None:
        """Stream the reply; run the tools it calls and stream again, up to
        ``max_tool_rounds`` rounds of calls, then once more without tools.

        Small local models stumble after a tool-role message: they repeat the call (as fenced
        JSON text) or answer nothing, which used to end in the empty-reply apology. So a call
        already run with the same arguments is not run again, and when a round after tool
        results says nothing speakable the model gets one last round without tools, the results
        given as plain context before the user's words (``turn.tool_results_folded``)."""
        offered = self._functions()
        read = await self._read(text)
        base = await self._messages(text, history, offered, read)
        said = [str(m["content"]) for m in history if m["role"] == "user"]
        self.checks.take(read, said)
        self.timing.mark("prompt_ready", self.services.clock())
        # the constraints the request concerns, said first in Hearth's words (server.memory.
        # applies: never for a command or chit-chat, nor what the person just told)
        reminder = reminder_sentence(read.reminder, self.services.language)
        if reminder is not None:
            await self._put(queue, reminder)
            self.checks.reminded = True
            self.checks.heeded = heeded(read.reminder, read.safety_subjects, text)
        self.checks.guarded = heeded(read.unsaid, read.safety_subjects)
        messages = list(base)
        functions = offered if self.settings.max_tool_rounds else []
        done: set[tuple[str, str]] = set()
        ran: list[tuple[ToolCall, str]] = []
        rounds = 0
        folded = False
        while True:
            spoken, repeated = self._queued, self.checks.repeats
            calls, reply = await self._round(messages, functions, queue)
            fresh = [call for call in calls if _call_key(call) not in done] if functions else []
            if fresh:
                messages.append(assistant_tool_message(reply, fresh))
                for call in fresh:
                    done.add(_call_key(call))
                    result = await self._call_tool(call)
                    ran.append((call, result))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
                rounds += 1
                if rounds >= self.settings.max_tool_rounds:
                    functions = []
                continue
            if calls and functions:
                log.info("turn.repeated_tool_call", tools=[call.name for call in calls])
            # a reminder that repeated Hearth's is an answer too (not spoken: said already)
            if self._queued > spoken or self.checks.repeats > repeated or not ran or folded:
                return
            log.info("turn.tool_results_folded", tools=[call.name for call, _ in ran])
            messages = [*base[:-1], _tool_results_message(ran), base[-1]]
            functions = []
            folded = True

    async def _round(
        self, messages: list[Message], functions: list[dict[str, Any]], queue: SentenceQueue
    ) -> tuple[list[ToolCall], str]:
        """One streamed completion: its text is spoken as it comes; returns (calls, text)."""
        splitter = SentenceSplitter()
        calls: list[ToolCall] = []
        reply: list[str] = []
        stream = self.services.llm.stream(messages, functions)
        while True:
            waited = self.services.clock()
            try:
                item = await anext(stream)
            except StopAsyncIteration:
                break
            finally:
                if self.timing.first_audio_at is None:
                    self.timing.provider_s += self.services.clock() - waited
            self.timing.mark("llm_first_token", self.services.clock())
            if isinstance(item, TextDelta):
                reply.append(item.text)
                await self._on_text(item.text, splitter, queue)
            elif isinstance(item, ToolCallsReady):
                calls = item.calls
        rest = splitter.flush()
        if rest:
            await self._queue_text(queue, rest)
        return calls, "".join(reply)

    async def _queue_text(self, queue: SentenceQueue, text: str) -> None:
        spoken = self._code.filter(text)
        if spoken is None:
            return
        for sentence in self.checks.check(spoken):
            await self._put(queue, sentence)

    async def _put(self, queue: SentenceQueue, text: str) -> None:
        if speakable(text):
            self._queued += 1
            self.timing.mark("first_sentence", self.services.clock())
        await queue.put(text)

    async def _on_text(self, text: str, splitter: SentenceSplitter, queue: SentenceQueue) -> None:
        if not self._emotion_sent and text.strip():
            emoji, emotion = emotion_of(text)
            self.protocol.send_emotion(emoji, emotion)
            self._emotion_sent = True
            await self.flush()
        for segment in splitter.feed(text):
            await self._queue_text(queue, segment)

    async def _call_tool(self, call: ToolCall) -> str:
        try:
            arguments = orjson.loads(call.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
        except (orjson.JSONDecodeError, ValueError) as exc:
            error = f"error: invalid arguments for {call.name}: {exc}"
            self.context.trace.record_tool(call.name, {"raw": call.arguments}, error)
            return error
        log.info("turn.tool_call", tool=call.name, arguments=arguments)
        result = await self._run_tool(call.name, arguments)
        self.context.trace.record_tool(call.name, arguments, result)
        return result

    async def _run_tool(self, name: str, arguments: dict[str, Any]) -> str:
        tool = self.services.tools.get(name)
        try:
            if tool is not None:
                return await tool.handler(arguments, self.context)
            if self.mcp is not None and name in self.mcp.tools:
                return await self.mcp.call(name, arguments)
        except McpCallError as exc:
            log.warning("turn.device_tool_failed", tool=name, error=str(exc))
            return f"error: {exc}"
        return f"error: unknown tool {name}"

    # ---- speaking ----------------------------------------------------------------------------
    # Two stages so synthesis and encoding of sentence n+1 overlap the pacing of sentence n:
    # _prepare (TTS → Opus on the encode pool) feeds _send (sentence_start + paced frames).
    # Only the turn's very first frame is encoded on the event loop, to start audio at once.

    async def _speak(self, sentences: SentenceQueue) -> None:
        audio: asyncio.Queue[AudioChunk | None] = asyncio.Queue(maxsize=4)
        preparer = asyncio.create_task(self._prepare(sentences, audio))
        try:
            while (chunk := await audio.get()) is not None:
                if chunk.sentence is not None:
                    self.protocol.send_sentence_start(chunk.sentence)
                    self.spoken.append(chunk.sentence)
                    await self.flush()
                for packet in chunk.packets:
                    await self._send_frame(packet)
        finally:
            preparer.cancel()

    async def _prepare(
        self, sentences: SentenceQueue, audio: asyncio.Queue[AudioChunk | None]
    ) -> None:
        loop = asyncio.get_running_loop()
        first = True
        while (sentence := await sentences.get()) is not None:
            frames = await self._synthesize(sentence)
            subtitle: str | None = sentence
            if first and frames:
                await audio.put(AudioChunk(subtitle, self.encoder.encode_frames(frames[:1])))
                subtitle, frames = None, frames[1:]
            first = False
            packets = await loop.run_in_executor(
                self.services.encode_pool, self.encoder.encode_frames, frames
            )
            await audio.put(AudioChunk(subtitle, packets))
        await audio.put(None)

    async def _synthesize(self, sentence: str) -> list[bytes]:
        started = self.services.clock()
        try:
            speech = await self.services.tts.synthesize(sentence)
        except ProviderError as exc:
            log.error("turn.tts_failed", sentence=sentence, error=str(exc))
            metrics.PROVIDER_ERRORS.labels(provider="tts").inc()
            return []
        finally:
            if self.timing.first_audio_at is None:
                self.timing.provider_s += self.services.clock() - started
            self.timing.mark("first_tts", self.services.clock())
        pcm = resample(speech.pcm, speech.sample_rate, self.encoder.sample_rate)
        return self.encoder.split(pcm)

    async def _send_frame(self, packet: bytes) -> None:
        delay = self.pacer.delay_before_next(self.services.clock())
        if delay > 0:
            await asyncio.sleep(delay)
        now = self.services.clock()
        self.protocol.send_audio(packet, self._timestamp_ms, now)
        self._timestamp_ms += self.services.audio.frame_ms
        await self.flush()
        self.pacer.frame_sent(now)
        if self.timing.first_audio_at is None:
            first_audio_at = self.services.clock()
            self.timing.mark("first_audio", first_audio_at)
            total = first_audio_at - self.timing.started
            metrics.FIRST_AUDIO.observe(total)
            metrics.SERVER_ADDED.observe(max(0.0, total - self.timing.provider_s))
            if self.services.on_first_audio is not None:
                self.services.on_first_audio(total, self.timing.provider_s)


def _tool_results_message(ran: list[tuple[ToolCall, str]]) -> Message:
    """The tools a turn ran and what they returned, as plain context for the last round."""
    lines = ["刚才调用工具得到的结果如下。不要再调用工具，直接根据结果用一两句话回答用户。"]
    for call, result in ran:
        lines.append(f"【{call.name} {call.arguments}】\n{result}")
    return {"role": "system", "content": "\n".join(lines)}


def _call_key(call: ToolCall) -> tuple[str, str]:
    """A call's identity: its tool and its arguments, whitespace and key order aside."""
    try:
        arguments = orjson.dumps(orjson.loads(call.arguments or "{}"), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        return call.name, call.arguments
    return call.name, arguments.decode()


def assistant_tool_message(text: str, calls: list[ToolCall]) -> Message:
    return {
        "role": "assistant",
        # "" rather than null: OpenAI accepts both, llama-cpp-python's server rejects null (HTTP
        # 500 on the round after every tool call; found by hand with the local model)
        "content": text,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }


def _knows_weather(functions: list[dict[str, Any]]) -> bool:
    """Does an offered tool know the weather (a weather MCP server, a plugin)?"""
    return any("weather" in str(f.get("function", f).get("name", "")).lower() for f in functions)
