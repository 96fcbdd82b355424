"""``DeviceProtocol``: the device side of one connection as a sans-I/O state machine.

Frames in (``receive_text`` / ``receive_binary``), events out; frames to send accumulate and
are drained with ``data_to_send``. Time is passed in (``now``, monotonic seconds), never read,
so every timeout is testable without sleeping. The asyncio glue lives in ``server.device.session``.
"""

from __future__ import annotations

import enum
from typing import Any

from server.protocol import framing
from server.protocol.errors import (
    BadHello,
    FramingError,
    HelloExpected,
    HelloTimeout,
    TooManyMalformed,
)
from server.protocol.messages import (
    AudioParams,
    AudioReceived,
    Event,
    HelloReceived,
    IgnoredMessage,
    ListenDetected,
    ListenMode,
    ListenStarted,
    ListenStopped,
    MalformedMessage,
    dump,
    hello_reply,
    parse_client_json,
)

Outgoing = str | bytes


class Phase(enum.Enum):
    AWAITING_HELLO = "awaiting_hello"
    OPEN = "open"
    CLOSED = "closed"


class DeviceProtocol:
    """Protocol state for one device connection (device-protocol.md §1.2-§1.7)."""

    def __init__(
        self,
        session_id: str,
        *,
        version: int,
        downlink: AudioParams,
        now: float,
        hello_timeout_s: float,
        idle_timeout_s: float,
        max_malformed: int,
    ) -> None:
        if version not in framing.SUPPORTED_VERSIONS:
            version = 1
        self.session_id = session_id
        self.version = version
        self.downlink = downlink
        self.phase = Phase.AWAITING_HELLO
        self.client_hello: HelloReceived | None = None
        self.listen_mode: ListenMode | None = None
        self.listening = False
        self.speaking = False
        self.malformed = 0
        self._max_malformed = max_malformed
        self._hello_deadline = now + hello_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._last_activity = now
        self._out: list[Outgoing] = []

    # ---- input ------------------------------------------------------------------------------

    def receive_text(self, text: str, now: float) -> list[Event]:
        event = parse_client_json(text)
        if isinstance(event, MalformedMessage):
            return [self._malformed(event)]
        if self.phase is Phase.AWAITING_HELLO:
            if not isinstance(event, HelloReceived):
                raise HelloExpected(f"expected hello first, got {type(event).__name__}")
            return [self._accept_hello(event, now)]
        if isinstance(event, IgnoredMessage) and not event.known:
            self._count_malformed()  # an undefined type is no better than garbage
            return [event]
        if isinstance(event, HelloReceived):
            # A second hello is harmless (some clients re-send after reconnect logic); re-answer.
            self._send_json(hello_reply(self.session_id, self.version, self.downlink))
            return []
        if isinstance(event, ListenStarted):
            self.listen_mode = event.mode
            self.listening = True
        elif isinstance(event, ListenStopped):
            self.listening = False
        elif isinstance(event, ListenDetected):
            self.touch(now)
        return [event]

    def receive_binary(self, data: bytes, now: float) -> list[Event]:
        if self.phase is Phase.AWAITING_HELLO:
            raise HelloExpected("binary audio before hello")
        try:
            frame = framing.decode(self.version, data)
        except FramingError as exc:
            return [self._malformed(MalformedMessage(exc.reason))]
        if frame.kind == framing.FRAME_JSON:
            return self.receive_text(frame.payload.decode("utf-8", "replace"), now)
        return [AudioReceived(frame.payload, frame.timestamp_ms)]

    def _accept_hello(self, hello: HelloReceived, now: float) -> HelloReceived:
        if hello.transport != "websocket":
            raise BadHello(f"unsupported transport {hello.transport!r}")
        self.client_hello = hello
        self.phase = Phase.OPEN
        self.touch(now)
        self._send_json(hello_reply(self.session_id, self.version, self.downlink))
        return hello

    def _malformed(self, event: MalformedMessage) -> MalformedMessage:
        self._count_malformed()
        return event

    def _count_malformed(self) -> None:
        self.malformed += 1
        if self.malformed > self._max_malformed:
            raise TooManyMalformed(f"more than {self._max_malformed} malformed messages")

    # ---- time -------------------------------------------------------------------------------

    def touch(self, now: float) -> None:
        """Activity that re-arms the idle clock: voice, text, outgoing audio (§1.7)."""
        self._last_activity = now

    def next_deadline(self) -> float:
        if self.phase is Phase.AWAITING_HELLO:
            return self._hello_deadline
        return self._last_activity + self._idle_timeout_s

    def check_timeouts(self, now: float) -> bool:
        """True when the session has been idle too long; raises if the hello never came."""
        if self.phase is Phase.AWAITING_HELLO:
            if now >= self._hello_deadline:
                raise HelloTimeout("no hello received in time")
            return False
        if self.phase is Phase.OPEN and self.speaking:
            return False
        return self.phase is Phase.OPEN and now >= self._last_activity + self._idle_timeout_s

    # ---- output -----------------------------------------------------------------------------

    def data_to_send(self) -> list[Outgoing]:
        out, self._out = self._out, []
        return out

    def _send_json(self, message: dict[str, Any]) -> None:
        message.setdefault("session_id", self.session_id)
        self._out.append(dump(message))

    def send_stt(self, text: str) -> None:
        self._send_json({"type": "stt", "text": text})

    def send_tts_start(self) -> None:
        self.speaking = True
        self._send_json({"type": "tts", "state": "start"})

    def send_sentence_start(self, text: str) -> None:
        self._send_json({"type": "tts", "state": "sentence_start", "text": text})

    def send_tts_stop(self) -> None:
        self.speaking = False
        self._send_json({"type": "tts", "state": "stop"})

    def send_emotion(self, emoji: str, emotion: str) -> None:
        self._send_json({"type": "llm", "text": emoji, "emotion": emotion})

    def send_mcp(self, payload: dict[str, Any]) -> None:
        self._send_json({"type": "mcp", "payload": payload})

    def send_alert(self, status: str, message: str, emotion: str) -> None:
        self._send_json({"type": "alert", "status": status, "message": message, "emotion": emotion})

    def send_pong(self) -> None:
        self._send_json({"type": "pong"})

    def send_audio(self, opus_packet: bytes, timestamp_ms: int, now: float) -> None:
        # §1.4: the device drops audio unless it is speaking, so tts start must come first.
        if not self.speaking:
            raise RuntimeError("send_tts_start() must precede audio")
        self.touch(now)
        self._out.append(framing.encode(self.version, opus_packet, timestamp_ms))

    def close(self) -> None:
        self.phase = Phase.CLOSED
        self.speaking = False
