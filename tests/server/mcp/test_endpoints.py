"""The agent and device MCP endpoints through a real MCP client (streamable HTTP on loopback),
sharing one memory engine with a running device server — as ``hearth up`` wires them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import orjson
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from redis.asyncio import Redis

from config import keys
from config.settings import load_settings
from memory.importer import import_file
from memory.registry import Speakers
from memory.schema import Memory, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from providers.processes import free_port
from server.mcp.endpoints import build_endpoints
from server.mcp.tokens import McpTokens
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from tests.conftest import RunningHearth, start_hearth
from tests.memory.conftest import FIXTURES
from tests.server.memory.test_device_memory import system_prompt
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.serving import serving

ZHANG_DEVICE, LI_DEVICE = "aa:bb:cc:00:01:01", "aa:bb:cc:00:01:02"


@dataclass
class Rig:
    hearth: RunningHearth
    urls: dict[str, str]
    tokens: McpTokens
    engine: MemoryEngine


@pytest.fixture
async def rig(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM, embedder: UseEmbedder
) -> AsyncIterator[Rig]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", PersonId("zhang"), embedder, store)
    import_file(FIXTURES / "household_li.jsonl", PersonId("li"), embedder, store)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    ports = {"agent": free_port(), "device": free_port()}
    apps = build_endpoints(engine, redis, "127.0.0.1", ports, ["https://console.example"], 0.9)
    async with contextlib.AsyncExitStack() as stack:
        for name, app in apps.items():
            await stack.enter_async_context(serving(app, lifespan="on", port=ports[name]))
        async with start_hearth(
            tmp_path, redis_url, scripted_llm.base_url, scripted_llm, memory=engine
        ) as hearth:
            await hearth.arq.hset(keys.PERSON_MAP, mapping={ZHANG_DEVICE: "zhang", LI_DEVICE: "li"})
            urls = {name: f"http://127.0.0.1:{port}/mcp" for name, port in ports.items()}
            yield Rig(hearth, urls, McpTokens(redis), engine)
    store.close()


@contextlib.asynccontextmanager
async def mcp_client(url: str, token: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def payload(result: Any) -> Any:
    """A tool result's content: structured when the tool returns a dict, else its text."""
    if result.structured_content is not None:
        structured = result.structured_content
        return structured.get("result", structured)
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_endpoints_expose_their_tools_and_bind_the_token_person(rig: Rig) -> None:
    zhang = await rig.tokens.create("claude-code", "zhang", "claude-code", "agent")
    device = await rig.tokens.create("kitchen", "zhang", "device", "device")
    async with mcp_client(rig.urls["agent"], zhang) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {"memory_search", "memory_add", "check_safety"}
        found = payload(await client.call_tool("memory_search", {"query": "订个海鲜礼包送我老婆"}))
        assert any("海鲜过敏" in m["text"] for m in found["memories"])
        assert "[安全约束]" in found["prompt_block"]
    async with mcp_client(rig.urls["device"], device) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"check_safety"}
        safety = payload(await client.call_tool("check_safety", {"topic": "推荐个餐厅"}))
        assert "我老婆对海鲜过敏" in safety


async def test_an_agents_search_limit_is_not_the_device_prompts_budget(rig: Rig) -> None:
    """The device prompt carries four related lines with the embedded model; an agent asking
    for ten gets ten (the prompt block it is also handed keeps to the budget)."""
    about_her = ("老婆最喜欢的花是向日葵", "老婆喜欢看悬疑小说", "老婆的小名叫芳芳",
                 "老婆在市一医院当护士", "老婆周末喜欢去西湖边散步",
                 "老婆的瑜伽课在每周二晚上")  # fmt: skip
    memories = [Memory(t, PersonId("zhang"), subject="老婆", entities=("老婆",)) for t in about_her]
    rig.engine.store.upsert(memories, rig.engine.embedder.embed(list(about_her)))
    question = "我老婆平时喜欢什么？"
    recall = await rig.engine.read_path.recall(PersonId("zhang"), question)
    assert recall.beyond, "the budget left nothing out: the test shows nothing"
    zhang = await rig.tokens.create("claude-code", "zhang", "claude-code", "agent")
    async with mcp_client(rig.urls["agent"], zhang) as client:
        found = payload(await client.call_tool("memory_search", {"query": question, "limit": 10}))
    every = [r.memory.text for r in (*recall.safety, *recall.related, *recall.beyond)]
    assert [m["text"] for m in found["memories"]] == every[:10]
    assert found["prompt_block"].count("\n- ") == len(recall.safety) + len(recall.related)


async def test_other_persons_memories_are_never_read_or_written(rig: Rig) -> None:
    li = await rig.tokens.create("li-agent", "li", "claude-code", "agent")
    async with mcp_client(rig.urls["agent"], li) as client:
        found = payload(await client.call_tool("memory_search", {"query": "我老婆对什么过敏"}))
        texts = [m["text"] for m in found["memories"]]
        assert not any("海鲜" in t for t in texts), texts  # zhang's, not li's
        safety = payload(await client.call_tool("check_safety", {"topic": "推荐个餐厅"}))
        assert "海鲜" not in safety and "小橙子" not in safety
        added = payload(await client.call_tool("memory_add", {"text": "李家的猫叫团团"}))
        assert added["status"] == "stored"
    zhang_hits = await rig.engine.read_path.recall(PersonId("zhang"), "猫叫什么名字")
    assert not any("团团" in r.memory.text for r in zhang_hits.safety + zhang_hits.related)


async def test_memory_added_over_mcp_reaches_that_persons_device_turns_only(rig: Rig) -> None:
    zhang = await rig.tokens.create("claude-code", "zhang", "claude-code", "agent")
    await Speakers(rig.hearth.arq).register(PersonId("zhang"), "张伟", 50)
    async with mcp_client(rig.urls["agent"], zhang) as client:
        # the API's speaker rules: registered names and `me` only (issue 20)
        stranger = await client.call_tool("memory_add", {"text": "我家住在月球", "speaker": "路人"})
        fake_me = await client.call_tool("memory_add", {"text": "我家住在月球", "speaker": "ME"})
        assert stranger.is_error and "not registered" in str(stranger.content)
        assert fake_me.is_error and "'me'" in str(fake_me.content)
        added = payload(await client.call_tool(
            "memory_add", {"text": "小橙子的钢琴老师姓王", "speaker": "张伟"}
        ))  # fmt: skip
        again = payload(await client.call_tool("memory_add", {"text": "小橙子的钢琴老师姓王"}))
    assert added["status"] == "stored" and again["status"] == "duplicate"
    [stored] = await asyncio.to_thread(rig.engine.store.get, PersonId("zhang"), [added["id"]])
    assert (stored.source, stored.speaker, stored.tags_pending) == ("claude-code", "张伟", True)
    assert await rig.hearth.arq.sismember(keys.retag("zhang"), added["id"])

    rig.hearth.llm.responder = lambda req: Reply("王老师。")
    for device_id, expected in ((ZHANG_DEVICE, True), (LI_DEVICE, False)):
        device = rig.hearth.device(device_id)
        await device.connect()
        await device.ask("小橙子的钢琴老师姓什么")
        await device.close()
        assert ("钢琴老师姓王" in system_prompt(rig.hearth.llm)) is expected, device_id


async def test_refusals_no_token_wrong_scope_foreign_origin(rig: Rig) -> None:
    device = await rig.tokens.create("kitchen", "zhang", "device", "device")
    agent = await rig.tokens.create("claude-code", "zhang", "claude-code", "agent")
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    url = rig.urls["agent"]

    def auth(token: str, **extra: str) -> dict[str, str]:
        return {**headers, "Authorization": f"Bearer {token}", **extra}

    async with httpx.AsyncClient(timeout=10) as http:
        none = await http.post(url, content=body, headers=headers)
        wrong = await http.post(url, content=body, headers=auth("hmcp_nope"))
        scope = await http.post(url, content=body, headers=auth(device))
        origin = await http.post(url, content=body,
                                 headers=auth(agent, Origin="https://evil.example"))  # fmt: skip
    assert none.status_code == 401 and wrong.status_code == 401
    assert scope.status_code == 403
    assert origin.status_code == 403
    assert await rig.tokens.revoke((await rig.tokens.all())[0]["id"])


async def test_stdio_transport_serves_the_configured_person(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    import sys

    from mcp import StdioServerParameters

    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", PersonId("zhang"), embedder, store)
    import_file(FIXTURES / "household_li.jsonl", PersonId("li"), embedder, store)
    store.close()  # the stdio server opens the embedded store itself
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "server.cli", "mcp", "stdio"], cwd=tmp_path,
        env={"HEARTH_DATA_DIR": str(tmp_path), "HEARTH_MCP__STDIO_PERSON": "li",
             "HEARTH_LOG_LEVEL": "debug"},  # logs must not reach the protocol's stdout
    )  # fmt: skip
    async with asyncio.timeout(60), Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        found = payload(await client.call_tool("memory_search", {"query": "我对什么过敏"}))
    assert names == {"memory_search", "memory_add", "check_safety"}
    texts = [m["text"] for m in found["memories"]]
    assert any("猫毛" in t for t in texts) and not any("海鲜" in t for t in texts)
