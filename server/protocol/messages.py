"""Wire messages: parsing client JSON into events, building server JSON (§1.2-§1.5).

Parsing never raises for a single bad message: it yields ``MalformedMessage`` (the firmware
itself logs and ignores unknown or typeless JSON, §1.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

ListenMode = Literal["auto", "manual", "realtime"]
LISTEN_MODES: tuple[ListenMode, ...] = ("auto", "manual", "realtime")


@dataclass(frozen=True, slots=True)
class AudioParams:
    format: str = "opus"
    sample_rate: int = 16000
    channels: int = 1
    frame_duration: int = 60

    def as_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "sample_rate": self.sample_rate,
            "channels": self.channels,
            "frame_duration": self.frame_duration,
        }


# ---- events produced by parsing -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HelloReceived:
    version: int
    features: dict[str, Any]
    audio_params: AudioParams
    transport: str = "websocket"


@dataclass(frozen=True, slots=True)
class ListenStarted:
    mode: ListenMode


@dataclass(frozen=True, slots=True)
class ListenStopped:
    pass


@dataclass(frozen=True, slots=True)
class ListenDetected:
    """Wake word fired, or (every headless client) a typed utterance (§1.3, §1.8 D)."""

    text: str


@dataclass(frozen=True, slots=True)
class AbortRequested:
    reason: str | None


@dataclass(frozen=True, slots=True)
class McpReceived:
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AudioReceived:
    opus: bytes
    timestamp_ms: int = 0


@dataclass(frozen=True, slots=True)
class PingReceived:
    pass


@dataclass(frozen=True, slots=True)
class MalformedMessage:
    reason: str
    sample: str = field(default="")


@dataclass(frozen=True, slots=True)
class IgnoredMessage:
    """Well-formed but not for us: legacy ``iot`` and MQTT-only ``goodbye`` (``known``), or a
    type nobody defined — which counts toward the malformed-message limit like garbage does.
    ``type`` is cut to TYPE_SAMPLE characters (it goes into the log)."""

    type: str
    known: bool = True


KNOWN_IGNORED = frozenset({"iot", "goodbye"})
MAX_DETECT_CHARS = 1000  # a typed or wake-word text; longer is malformed (counted), not a turn
TYPE_SAMPLE = 40


Event = (
    HelloReceived
    | ListenStarted
    | ListenStopped
    | ListenDetected
    | AbortRequested
    | McpReceived
    | AudioReceived
    | PingReceived
    | MalformedMessage
    | IgnoredMessage
)


def _sample(text: str) -> str:
    return text[:80]


def parse_client_json(text: str) -> Event:
    """One client text frame → one event."""
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        return MalformedMessage("invalid JSON", _sample(text))
    if not isinstance(obj, dict):
        return MalformedMessage("JSON is not an object", _sample(text))
    kind = obj.get("type")
    if not isinstance(kind, str):
        return MalformedMessage("JSON without a string 'type'", _sample(text))
    if kind == "hello":
        return _parse_hello(obj)
    if kind == "listen":
        return _parse_listen(obj, text)
    if kind == "abort":
        reason = obj.get("reason")
        return AbortRequested(reason if isinstance(reason, str) else None)
    if kind == "mcp":
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return MalformedMessage("mcp without an object 'payload'", _sample(text))
        return McpReceived(payload)
    if kind == "ping":
        return PingReceived()
    return IgnoredMessage(kind[:TYPE_SAMPLE], known=kind in KNOWN_IGNORED)


def _parse_hello(obj: dict[str, Any]) -> Event:
    features = obj.get("features")
    raw_params = obj.get("audio_params")
    params = AudioParams()
    if isinstance(raw_params, dict):
        try:
            params = AudioParams(
                format=str(raw_params.get("format", "opus")),
                sample_rate=int(raw_params.get("sample_rate", 16000)),
                channels=int(raw_params.get("channels", 1)),
                frame_duration=int(raw_params.get("frame_duration", 60)),
            )
        except (TypeError, ValueError):
            return MalformedMessage("hello with non-numeric audio_params")
    version = obj.get("version", 1)
    transport = obj.get("transport", "websocket")
    return HelloReceived(
        transport=transport if isinstance(transport, str) else repr(transport),
        version=version if isinstance(version, int) else 1,
        features=features if isinstance(features, dict) else {},
        audio_params=params,
    )


def _parse_listen(obj: dict[str, Any], text: str) -> Event:
    state = obj.get("state")
    if state == "start":
        mode = obj.get("mode", "auto")
        if mode not in LISTEN_MODES:
            return MalformedMessage(f"listen start with unknown mode {mode!r}", _sample(text))
        return ListenStarted(mode)
    if state == "stop":
        return ListenStopped()
    if state == "detect":
        detected = obj.get("text")
        if not isinstance(detected, str):
            return MalformedMessage("listen detect without text", _sample(text))
        if len(detected) > MAX_DETECT_CHARS:
            return MalformedMessage(
                f"listen detect text longer than {MAX_DETECT_CHARS} characters", _sample(text)
            )
        return ListenDetected(detected.strip())
    return MalformedMessage(f"listen with unknown state {state!r}", _sample(text))


# ---- server → client builders ---------------------------------------------------------------


def dump(message: dict[str, Any]) -> str:
    return orjson.dumps(message).decode()


def hello_reply(session_id: str, version: int, downlink: AudioParams) -> dict[str, Any]:
    return {
        "type": "hello",
        "version": version,
        "transport": "websocket",
        "session_id": session_id,
        "audio_params": downlink.as_json(),
    }
