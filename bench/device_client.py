"""A device as the firmware behaves: auth headers, hello, listen/detect, Opus in, events out.

Used by the benches and the tests; one instance per WebSocket connection.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect

from providers.opus import OpusEncoder
from server.protocol import framing

HELLO = {
    "type": "hello",
    "version": 1,
    "transport": "websocket",
    "features": {"mcp": True},
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}


@dataclass
class TurnResult:
    stt: str | None = None
    emotion: str | None = None
    sentences: list[str] = field(default_factory=list)
    frames: list[bytes] = field(default_factory=list)
    sent_at: float = 0.0
    first_frame_at: float | None = None
    stt_at: float | None = None
    stopped_at: float | None = None
    frame_times: list[float] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.sentences)

    @property
    def first_audio_s(self) -> float | None:
        """Sent → first Opus frame (seconds); None when no audio came."""
        return None if self.first_frame_at is None else self.first_frame_at - self.sent_at


class DeviceClient:
    def __init__(
        self,
        url: str,
        device_id: str,
        client_id: str,
        token: str | None,
        protocol_version: int = 1,
        mcp_tools: list[dict[str, Any]] | None = None,
    ) -> None:
        self.url = url
        self.device_id = device_id
        self.client_id = client_id
        self.token = token
        self.protocol_version = protocol_version
        self.mcp_tools = mcp_tools or []
        self.mcp_calls: list[dict[str, Any]] = []
        self.mcp_initialize: dict[str, Any] | None = None  # the server's initialize params
        self.ws: ClientConnection | None = None
        self.session_id = ""
        self.server_hello: dict[str, Any] = {}

    def headers(self) -> dict[str, str]:
        headers = {
            "Protocol-Version": str(self.protocol_version),
            "Device-Id": self.device_id,
            "Client-Id": self.client_id,
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    async def connect(self, hello: dict[str, Any] | None = None, within_s: float = 10) -> None:
        self.ws = await connect(
            self.url, additional_headers=self.headers(), open_timeout=within_s, max_size=2**20
        )
        await self.ws.send(orjson.dumps(hello or HELLO).decode())
        async with asyncio.timeout(within_s):
            while True:
                message = await self.recv_json()
                if message and message.get("type") == "hello":
                    self.server_hello = message
                    self.session_id = str(message.get("session_id", ""))
                    return

    async def send_json(self, message: dict[str, Any]) -> None:
        assert self.ws is not None
        message.setdefault("session_id", self.session_id)
        await self.ws.send(orjson.dumps(message).decode())

    async def recv_json(self) -> dict[str, Any] | None:
        """Next JSON message (answers MCP requests on the way); None for a binary frame."""
        assert self.ws is not None
        raw = await self.ws.recv()
        if isinstance(raw, bytes):
            return None
        message: dict[str, Any] = orjson.loads(raw)
        if message.get("type") == "mcp":
            await self._answer_mcp(message["payload"])
        return message

    async def _answer_mcp(self, payload: dict[str, Any]) -> None:
        method = payload.get("method")
        if "id" not in payload:
            return
        result: dict[str, Any]
        if method == "initialize":
            self.mcp_initialize = payload.get("params") or {}
            result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "bench-device", "version": "1.0"}}  # fmt: skip
        elif method == "tools/list":
            result = {"tools": self.mcp_tools, "nextCursor": ""}
        elif method == "tools/call":
            self.mcp_calls.append(payload["params"])
            result = {"content": [{"type": "text", "text": "true"}], "isError": False}
        else:
            await self.send_json({"type": "mcp", "payload": {"jsonrpc": "2.0", "id": payload["id"],
                "error": {"code": -32601, "message": "Unknown method"}}})  # fmt: skip
            return
        await self.send_json(
            {"type": "mcp", "payload": {"jsonrpc": "2.0", "id": payload["id"], "result": result}}
        )

    async def ask(self, text: str, within_s: float = 60, abort: bool = False) -> TurnResult:
        """listen start + listen detect(text), then collect until tts stop (§1.8 D).
        ``abort``: send ``abort`` once the first Opus frame has come (latency benches: the
        rest of the reply is not waited for)."""
        assert self.ws is not None
        await self.send_json({"type": "listen", "state": "start", "mode": "auto"})
        result = TurnResult(sent_at=time.perf_counter())
        await self.send_json({"type": "listen", "state": "detect", "text": text})
        return await self.collect(result, within_s, abort)

    async def send_audio(
        self, pcm: bytes, *, sample_rate: int = 16000, frame_ms: int = 60, pace: bool = False
    ) -> int:
        """``pcm`` (16-bit mono) as Opus frames, as the firmware uploads the mic; paced in real
        time when ``pace``. Returns the number of frames sent."""
        assert self.ws is not None
        encoder = OpusEncoder(sample_rate, frame_ms)
        packets = encoder.encode_pcm(pcm)
        for n, packet in enumerate(packets):
            await self.ws.send(framing.encode(self.protocol_version, packet, n * frame_ms))
            if pace:
                await asyncio.sleep(frame_ms / 1000)
        return len(packets)

    async def speak(
        self,
        pcm: bytes,
        *,
        mode: str = "auto",
        sample_rate: int = 16000,
        frame_ms: int = 60,
        silence_ms: int = 1000,
        pace: bool = False,
        within_s: float = 60,
        abort: bool = False,
    ) -> TurnResult:
        """A spoken turn: listen start, the utterance and ``silence_ms`` of silence as Opus
        (then ``listen stop`` in manual mode), collected until tts stop. ``sent_at`` is the end
        of the speech, so ``stt`` latency reads as end-of-speech → transcript."""
        await self.send_json({"type": "listen", "state": "start", "mode": mode})
        await self.send_audio(pcm, sample_rate=sample_rate, frame_ms=frame_ms, pace=pace)
        result = TurnResult(sent_at=time.perf_counter())
        silence = b"\x00" * (sample_rate * 2 * silence_ms // 1000)

        async def trailing_silence() -> None:
            await self.send_audio(silence, sample_rate=sample_rate, frame_ms=frame_ms, pace=pace)
            if mode == "manual":
                await self.send_json({"type": "listen", "state": "stop"})

        # The mic keeps streaming while the reply is read, as on a device (and stt is timed
        # when it arrives, not after the silence has been sent).
        silent = asyncio.create_task(trailing_silence())
        try:
            return await self.collect(result, within_s, abort)
        finally:
            await silent

    async def collect(
        self, result: TurnResult, within_s: float = 60, abort: bool = False
    ) -> TurnResult:
        """Read the server's reply to one turn until ``tts stop``; ``abort``: ask the server to
        stop speaking once the first Opus frame has come."""
        assert self.ws is not None
        async with asyncio.timeout(within_s):
            while True:
                raw = await self.ws.recv()
                now = time.perf_counter()
                if isinstance(raw, bytes):
                    if result.first_frame_at is None:
                        result.first_frame_at = now
                        if abort:
                            await self.send_json({"type": "abort"})
                    result.frames.append(raw)
                    result.frame_times.append(now)
                    continue
                message = orjson.loads(raw)
                kind, state = message.get("type"), message.get("state")
                if kind == "mcp":
                    await self._answer_mcp(message["payload"])
                elif kind == "stt":
                    result.stt = message.get("text")
                    result.stt_at = now
                elif kind == "llm":
                    result.emotion = message.get("emotion")
                elif kind == "tts" and state == "sentence_start":
                    result.sentences.append(message.get("text", ""))
                elif kind == "tts" and state == "stop":
                    result.stopped_at = now
                    return result

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
