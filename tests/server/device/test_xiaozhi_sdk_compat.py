"""A real third-party device client (xiaozhi-sdk from PyPI) against Hearth, OTA included."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from starlette.datastructures import Headers
from xiaozhi_sdk import XiaoZhiWebsocket

from server.vision import VISION_PATH, vision_credentials
from tests.conftest import RunningHearth, RunningHttp
from tests.support.scripted_llm import Reply
from tests.support.waiting import wait_until

MAC = "aa:bb:cc:00:11:22"


async def test_xiaozhi_sdk_completes_ota_hello_mcp_and_a_text_turn(
    hearth: RunningHearth, http_app: RunningHttp
) -> None:
    hearth.llm.responder = lambda req: Reply("你好呀，我在呢。有什么可以帮你？")
    # The SDK derives its Client-Id from the MAC; approve the device as an operator would.
    client_id = str(uuid.uuid5(uuid.NAMESPACE_DNS, MAC))
    await http_app.services.devices.approve(MAC, client_id)

    messages: list[dict[str, Any]] = []
    stopped = asyncio.Event()

    async def on_message(message: dict[str, Any]) -> None:
        messages.append(message)
        if message.get("type") == "tts" and message.get("state") == "stop":
            stopped.set()

    sdk = XiaoZhiWebsocket(on_message, ota_url=f"{http_app.base_url}/xiaozhi/ota/")
    await sdk.set_mcp_tool([])
    try:
        async with asyncio.timeout(20):
            assert await sdk.init_connection(MAC)
            # the SDK answered our MCP initialize (it needs capabilities.vision) and tools/list
            await wait_until(
                lambda: any(s.mcp and s.mcp.server_info for s in hearth.server.sessions)
            )
            session = next(iter(hearth.server.sessions))
            assert session.mcp is not None
            device_info = session.mcp.server_info
            await sdk.send_text("你好")
            await stopped.wait()
    finally:
        await sdk.close()

    kinds = [(m.get("type"), m.get("state")) for m in messages]
    assert ("stt", None) in kinds and ("tts", "start") in kinds and ("tts", "stop") in kinds
    stt = next(m for m in messages if m.get("type") == "stt")
    assert stt["text"] == "你好"
    sentences = [m["text"] for m in messages if m.get("state") == "sentence_start"]
    assert "".join(sentences) == "你好呀，我在呢。有什么可以帮你？"
    assert len(sdk.output_audio_queue) > 0  # our Opus decoded by the SDK's own decoder
    assert device_info.get("version") == "0.0.1"  # the SDK's MCP server answered initialize
    # the vision URL and token our initialize announced: the token names this device and
    # carries a valid device signature (the vision endpoint accepts it: tests/server/test_vision)
    # the host the device reached us by (no public_host configured), not a placeholder
    assert sdk.explain_url.startswith("http://127.0.0.1:") and sdk.explain_url.endswith(VISION_PATH)
    announced = vision_credentials(VISION_PATH, Headers({"authorization": sdk.explain_token}))
    assert (announced.device_id, announced.client_id) == (MAC, client_id)
    hearth.authority.verify(announced, time.time())
