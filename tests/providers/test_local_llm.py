"""The real local LLM path: llama.cpp server started by our provider, a device turn through it.

Slow-ish (model load ~5 s, a short answer 1-3 s on 2 cores); part of the default suite.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from config.settings import load_settings
from providers.llm import Message, ToolCall
from providers.processes import LocalLLMServer, free_port
from server.device.turn import assistant_tool_message
from server.runtime import build_llm
from tests.conftest import start_hearth

pytestmark = pytest.mark.local_llm


@pytest.fixture
async def local_llm(tmp_path: Path) -> AsyncIterator[LocalLLMServer]:
    defaults = load_settings()
    model = defaults.resolve(defaults.local_llm.model_file).resolve()
    assert model.is_file(), "run `hearth models install` (make test does)"
    settings = defaults.local_llm.model_copy(update={"port": free_port()})
    server = LocalLLMServer(settings, model, tmp_path)
    await server.start()
    yield server
    server.stop()
    assert not server.child.alive()


async def test_device_turn_through_the_real_local_llm(
    local_llm: LocalLLMServer, tmp_path: Path, redis: Redis, redis_url: str
) -> None:
    async with start_hearth(tmp_path, redis_url, local_llm.base_url, None) as hearth:
        device = hearth.device()
        await device.connect()
        result = await device.ask("用一句话告诉我一加一等于几", within_s=120)
        await device.close()
    assert result.stt == "用一句话告诉我一加一等于几"
    assert result.text.strip(), "the local model said nothing"
    assert "二" in result.text or "2" in result.text
    assert len(result.frames) > 5  # espeak audio as Opus frames
    assert "抱歉" not in result.text  # not the apology path


async def test_the_local_server_accepts_the_round_after_a_tool_call(
    local_llm: LocalLLMServer,
) -> None:
    """The follow-up request carries the assistant's tool call and the tool's result, exactly as
    a turn builds them; llama-cpp-python's server once refused it (HTTP 500 on null content).
    What the 1.5B model then says is sampled (temperature 0.6) and differs between CPUs' kernels
    (an empty reply, a tool call written as text): the turn handles each (tests/server), so this
    test asserts what the server does — it answers the round with a finished completion."""
    call = ToolCall("call_1", "check_safety", '{"topic": "海鲜礼包"}')
    messages: list[Message] = [
        {"role": "system", "content": "你是家庭语音助手，回答要简短。"},
        {"role": "user", "content": "订个海鲜礼包送我老婆"},
        assistant_tool_message("", [call]),
        {"role": "tool", "tool_call_id": "call_1", "content": "我老婆对海鲜过敏"},
    ]
    body = {"model": "local", "messages": messages, "max_tokens": 48}
    async with httpx.AsyncClient(timeout=120) as client:
        response = await client.post(f"{local_llm.base_url}/chat/completions", json=body)
    assert response.status_code == 200, response.text
    [choice] = response.json()["choices"]
    assert choice["finish_reason"] in {"stop", "length", "tool_calls"}, choice
    assert response.json()["usage"]["completion_tokens"] >= 1  # it did generate
    # and the provider streams the same round without raising
    llm = build_llm(load_settings(), local_llm.base_url)
    _ = [item async for item in llm.stream(messages, [])]
