"""``DeviceSession``: thin asyncio glue between one WebSocket and its ``DeviceProtocol``.

Reads frames, feeds the state machine, runs at most one turn at a time (a new utterance or an
``abort`` cancels the current one at once and answers ``tts stop``), runs the device MCP
handshake in the background, enforces the hello/idle deadlines, and on the way out hands the
transcript to the session-ended hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import structlog
from redis.exceptions import RedisError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from providers.opus import OpusEncoder
from server import metrics
from server.auth import DeviceCredentials
from server.conversation import Conversation, Utterance
from server.mcp_client import DeviceMcpClient, McpCallError
from server.persons import default_person
from server.protocol.errors import CloseCode, ProtocolError
from server.protocol.machine import DeviceProtocol
from server.protocol.messages import (
    AbortRequested,
    AudioParams,
    Event,
    HelloReceived,
    IgnoredMessage,
    ListenDetected,
    MalformedMessage,
    McpReceived,
    PingReceived,
)
from server.tools import ToolContext
from server.turn import Turn, TurnServices

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """What the write path receives when a session ends."""

    session_id: str
    device_id: str
    client_id: str
    person: str
    started_at: float
    ended_at: float
    end_reason: str
    transcript: list[Utterance]


class SessionEndHook(Protocol):
    async def session_ended(self, record: SessionRecord) -> None: ...


PersonResolver = Callable[[str], Awaitable[str]]


async def own_person(device_id: str) -> str:
    """The unmapped-device policy: each device is its own person (see server.persons)."""
    return default_person(device_id)


@dataclass
class SessionServices:
    turn: TurnServices
    hello_timeout_s: float
    idle_timeout_s: float
    max_malformed: int
    vision_url: str
    end_hooks: list[SessionEndHook] = field(default_factory=list)
    resolve_person: PersonResolver = own_person


class DeviceSession:
    def __init__(
        self, ws: ServerConnection, creds: DeviceCredentials, services: SessionServices
    ) -> None:
        self.ws = ws
        self.creds = creds
        self.s = services
        self.clock = services.turn.clock
        self.session_id = str(uuid.uuid4())
        audio = services.turn.audio
        self.protocol = DeviceProtocol(
            self.session_id,
            version=creds.protocol_version,
            downlink=AudioParams(
                sample_rate=audio.downlink_sample_rate, frame_duration=audio.frame_ms
            ),
            now=self.clock(),
            hello_timeout_s=services.hello_timeout_s,
            idle_timeout_s=services.idle_timeout_s,
            max_malformed=services.max_malformed,
        )
        self.encoder = OpusEncoder(
            audio.downlink_sample_rate, audio.frame_ms, audio.opus_complexity
        )
        self.conversation = Conversation(services.turn.session.history_turns)
        self.mcp: DeviceMcpClient | None = None
        self.person = ""
        self._send_lock = asyncio.Lock()
        self._turn: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.log = log.bind(session=self.session_id, device=creds.device_id)

    async def flush(self) -> None:
        """Send whatever the state machine queued, in order, even with concurrent callers."""
        async with self._send_lock:
            for frame in self.protocol.data_to_send():
                await self.ws.send(frame)

    async def run(self) -> None:
        started = time.time()
        reason = "closed_by_device"
        metrics.CONNECTIONS.inc()
        try:
            self.person = await self.s.resolve_person(self.creds.device_id)
        except (RedisError, OSError) as exc:
            # Redis down: keep serving the device; its memories stay its own until it reconnects.
            self.person = default_person(self.creds.device_id)
            self.log.error("person_map.unavailable", error=str(exc), fallback=self.person)
        self.log = self.log.bind(person=self.person)
        self.log.info("session.open", client=self.creds.client_id, version=self.protocol.version)
        try:
            reason = await self._loop()
        except ProtocolError as exc:
            reason = f"protocol_error:{type(exc).__name__}"
            metrics.PROTOCOL_ERRORS.labels(kind=type(exc).__name__).inc()
            self.log.warning("session.protocol_error", error=exc.reason, code=int(exc.close_code))
            await self._close(exc.close_code, exc.reason)
        except ConnectionClosed:
            reason = "connection_lost"
        finally:
            await self._shutdown()
            metrics.CONNECTIONS.dec()
            metrics.SESSIONS_ENDED.labels(reason=reason.split(":")[0]).inc()
            self.log.info(
                "session.closed", reason=reason, utterances=len(self.conversation.transcript)
            )
            await self._fire_end_hooks(started, reason)

    async def _loop(self) -> str:
        while True:
            timeout = max(0.0, self.protocol.next_deadline() - self.clock())
            try:
                async with asyncio.timeout(timeout):
                    message = await self.ws.recv()
            except TimeoutError:
                if self.protocol.check_timeouts(self.clock()):
                    await self._close(CloseCode.IDLE_TIMEOUT, "idle timeout")
                    return "idle_timeout"
                continue
            except ConnectionClosed:
                return "closed_by_device"
            now = self.clock()
            if isinstance(message, bytes):
                events = self.protocol.receive_binary(message, now)
            else:
                events = self.protocol.receive_text(message, now)
            await self.flush()
            for event in events:
                await self._dispatch(event, now)

    async def _dispatch(self, event: Event, received_at: float) -> None:
        if isinstance(event, HelloReceived):
            if event.features.get("mcp"):
                self._spawn(self._start_mcp())
        elif isinstance(event, ListenDetected):
            await self._on_detect(event.text, received_at)
        elif isinstance(event, AbortRequested):
            self.log.info("session.abort", reason=event.reason)
            await self._cancel_turn()
        elif isinstance(event, McpReceived):
            if self.mcp is not None:
                self.mcp.handle(event.payload)
        elif isinstance(event, PingReceived):
            self.protocol.send_pong()
            await self.flush()
        elif isinstance(event, MalformedMessage):
            metrics.PROTOCOL_ERRORS.labels(kind="malformed").inc()
            self.log.warning("session.malformed", reason=event.reason, sample=event.sample)
        elif isinstance(event, IgnoredMessage):
            self.log.info("session.ignored_message", type=event.type)
        # AudioReceived / listen start-stop: consumed by voice input when configured.

    async def _on_detect(self, text: str, received_at: float) -> None:
        if not text:
            return
        kind = "text"
        if text in self.s.turn.session.wake_words:
            kind, text = "wake_word", self.s.turn.session.greeting
        await self._cancel_turn(reply_stop=False)
        metrics.TURNS.labels(kind=kind).inc()
        turn = Turn(
            self.s.turn,
            self.protocol,
            self.flush,
            self.conversation,
            self.encoder,
            self.mcp,
            ToolContext(self.person, self.creds.device_id, self.session_id),
        )
        self._turn = asyncio.create_task(self._run_turn(turn, text, received_at))

    async def _run_turn(self, turn: Turn, text: str, received_at: float) -> None:
        try:
            await turn.run(text, started=received_at)
        except ConnectionClosed:
            self.log.info("turn.device_gone")
        except Exception:  # a turn must never take the session down with it
            self.log.exception("turn.crashed")
            with contextlib.suppress(ConnectionClosed):
                if self.protocol.speaking:
                    self.protocol.send_tts_stop()
                    await self.flush()

    async def _cancel_turn(self, reply_stop: bool = True) -> None:
        turn, self._turn = self._turn, None
        if turn is not None and not turn.done():
            turn.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await turn
        if reply_stop and (self.protocol.speaking or turn is not None):
            self.protocol.send_tts_stop()
            await self.flush()

    async def _start_mcp(self) -> None:
        async def send(payload: dict[str, object]) -> None:
            self.protocol.send_mcp(payload)
            await self.flush()

        turn = self.s.turn.session
        self.mcp = DeviceMcpClient(
            send, timeout_s=turn.mcp_timeout_s, call_timeout_s=turn.tool_call_timeout_s
        )
        try:
            await self.mcp.start(self.s.vision_url, "unsupported")
        except McpCallError as exc:
            self.log.warning("mcp.handshake_failed", error=str(exc))

    def _spawn(self, coro: Awaitable[None]) -> None:
        async def guarded() -> None:
            with contextlib.suppress(ConnectionClosed):
                await coro

        task = asyncio.create_task(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _close(self, code: CloseCode, reason: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.close(int(code), reason)

    async def _shutdown(self) -> None:
        self.protocol.close()
        if self.mcp is not None:
            self.mcp.cancel_all()
        tasks = [t for t in (self._turn, *self._background) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await task

    async def _fire_end_hooks(self, started: float, reason: str) -> None:
        record = SessionRecord(
            session_id=self.session_id,
            device_id=self.creds.device_id,
            client_id=self.creds.client_id,
            person=self.person,
            started_at=started,
            ended_at=time.time(),
            end_reason=reason,
            transcript=list(self.conversation.transcript),
        )
        for hook in self.s.end_hooks:
            try:
                await hook.session_ended(record)
            except Exception:  # one failing hook must not stop the others
                self.log.exception("session.end_hook_failed", hook=type(hook).__name__)
