"""Issue 20, high: caps on what one client can hold — sockets per device, the length of a typed
text, the length of a session's transcript — each closed with the protocol's codes, with the
transcript kept (real WebSocket on loopback, scripted LLM)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed

from bench.device_client import DeviceClient
from server.device.listening import EndReason, UtteranceEnded
from server.device.session import MAX_PENDING_UTTERANCES
from server.protocol.messages import MAX_DETECT_CHARS
from tests.conftest import RunningHearth, start_hearth
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.waiting import wait_until

MAC = "aa:bb:cc:dd:ee:77"


async def _closed_with(device: DeviceClient) -> int | None:
    assert device.ws is not None
    with pytest.raises(ConnectionClosed):
        while True:
            await device.recv_json()
    return device.ws.close_code


@pytest.fixture
def hearth_overrides() -> dict[str, Any]:
    return {"server": {"max_sockets_per_device": 2, "max_transcript_utterances": 10}}


async def test_one_device_cannot_open_more_sockets_than_the_cap(hearth: RunningHearth) -> None:
    first, second = hearth.device(MAC), hearth.device(MAC)
    await first.connect()
    await second.connect()
    third = hearth.device(MAC)
    with pytest.raises(ConnectionClosed) as refused:
        await third.connect()
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 1008
    other = hearth.device("aa:bb:cc:dd:ee:78")  # another device is served as usual
    await other.connect()
    for device in (first, second, other):
        await device.close()


async def test_an_overlong_typed_text_is_malformed_not_a_turn(hearth: RunningHearth) -> None:
    device = hearth.device()
    await device.connect()
    await device.send_json(
        {"type": "listen", "state": "detect", "text": "长" * (MAX_DETECT_CHARS + 1)}
    )
    hearth.llm.responder = lambda req: Reply("在的。")
    result = await device.ask("在吗", within_s=30)
    assert result.text == "在的。"
    assert len(hearth.llm.requests) == 1  # the long text never reached the model
    await device.close()


async def test_a_session_past_its_transcript_cap_ends_and_keeps_every_word(
    hearth: RunningHearth,
) -> None:
    device = hearth.device()
    await device.connect()
    hearth.llm.responder = lambda req: Reply("好。")
    for n in range(5):  # 5 exchanges = 10 utterances: the cap
        await device.ask(f"第{n}句", within_s=30)
    await device.send_json({"type": "listen", "state": "detect", "text": "最后一句"})
    assert await _closed_with(device) == 1008
    record = await hearth.ended.wait_for(device.session_id)
    said = [u.text for u in record.transcript if u.role == "user"]
    assert said == [f"第{n}句" for n in range(5)] + ["最后一句"]
    assert record.end_reason == "transcript_full"


class BlockingASR:
    """Holds every transcription until released: a backlog builds as it would on a slow CPU."""

    name = "blocking"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        self.calls += 1
        await self.release.wait()
        return ""


async def test_one_device_cannot_queue_unbounded_audio_for_the_asr(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> None:
    asr = BlockingASR()
    async with start_hearth(
        tmp_path, redis_url, scripted_llm.base_url, scripted_llm, asr=asr
    ) as hearth:
        device = hearth.device()
        await device.connect()
        session = next(s for s in hearth.server.sessions if s.creds.device_id == device.device_id)
        before = (
            REGISTRY.get_sample_value("hearth_voice_utterances_total", {"outcome": "asr_backlog"})
            or 0.0
        )
        utterance = UtteranceEnded(b"\0\0" * 16000, 800, EndReason.SILENCE, time.time())
        session._on_listener_events([utterance] * (MAX_PENDING_UTTERANCES + 2))
        assert len(session._asr_tasks) == MAX_PENDING_UTTERANCES
        after = REGISTRY.get_sample_value(
            "hearth_voice_utterances_total", {"outcome": "asr_backlog"}
        )
        assert after == before + 2  # refused, counted and logged — not silently queued
        asr.release.set()
        await wait_until(lambda: not session._asr_tasks, within_s=10)
        await device.close()
