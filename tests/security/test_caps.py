"""Issue 20, high: caps on what one client can hold — sockets per device, the length of a typed
text, the length of a session's transcript — each closed with the protocol's codes, with the
transcript kept (real WebSocket on loopback, scripted LLM)."""

from __future__ import annotations

from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from bench.device_client import DeviceClient
from server.protocol.messages import MAX_DETECT_CHARS
from tests.conftest import RunningHearth
from tests.support.scripted_llm import Reply

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
