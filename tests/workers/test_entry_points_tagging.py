"""Every entry point queues the same tagging (memory.writes): a safety sentence stored through
the memory API or MCP ``memory_add`` is tagged by the worker's job and
is in the safety group of the next device turn's recall (it used to stay ``fact`` forever when
stored through ``POST /store``), and so is an imported line without a class. The write path's own
sessions are covered in test_writepath; the console writes no memories (it deletes them)."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest
from starlette.applications import Starlette

from config import keys
from memory.registry import Speakers
from memory.schema import MemoryClass, PersonId
from memory.store import Search
from server.admin import admin_routes
from server.api.idempotency import WriteTracker
from server.api.service import MemoryService
from server.mcp.endpoints import AgentMemory
from server.mcp.tokens import McpIdentity
from tests.workers.conftest import WriteRig
from workers.tag_requests import ArqTagRequests

ZHANG = PersonId("zhang")
ALLERGY = "我老婆对海鲜过敏，吃虾会起疹子"
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


async def _tagged_into_the_safety_group(rig: WriteRig) -> None:
    rig.script.day = None  # tagging jobs carry today's date
    stored = {m.text: m for m in rig.memory.store.scroll(ZHANG).memories}
    assert stored[ALLERGY].tags_pending and stored[ALLERGY].cls is MemoryClass.FACT
    assert await rig.redis.sismember(keys.retag(ZHANG), stored[ALLERGY].key)
    assert await rig.run_worker() == 1  # the tagging job the write queued
    memory = {m.text: m for m in rig.memory.store.scroll(ZHANG).memories}[ALLERGY]
    assert memory.cls is MemoryClass.SAFETY and not memory.tags_pending
    assert memory.subject == "老婆"
    assert not await rig.redis.sismember(keys.retag(ZHANG), memory.key)
    recall = await rig.memory.read_path.recall(ZHANG, "订个海鲜礼包送我老婆", time.time())
    assert ALLERGY in [r.memory.text for r in recall.safety], recall.as_json()


async def test_the_memory_api_store_is_tagged_and_reaches_the_safety_group(
    rig: WriteRig,
) -> None:
    rig.script.tags = {ALLERGY: ("safety", "volume", None, "老婆")}
    api = MemoryService(
        rig.memory.embedder, rig.memory.store, Speakers(rig.redis), rig.settings.api,
        ArqTagRequests(rig.redis),
    )  # fmt: skip
    answer = await api.store_memory("zhang", ALLERGY, None, WriteTracker())
    assert answer["status"] == "stored (1 chunks)"
    await _tagged_into_the_safety_group(rig)


async def test_mcp_memory_add_is_tagged_and_reaches_the_safety_group(rig: WriteRig) -> None:
    rig.script.tags = {ALLERGY: ("safety", "volume", None, "老婆")}
    tools = AgentMemory(rig.memory, rig.redis, rig.settings.api.duplicate_threshold)
    who = McpIdentity("claude", "zhang", "mcp", "agent")
    answer = await tools.add(who, ALLERGY, None)
    assert answer["status"] == "stored"
    await _tagged_into_the_safety_group(rig)


async def test_a_tagging_job_with_nothing_pending_calls_no_llm(rig: WriteRig) -> None:
    await ArqTagRequests(rig.redis).request(ZHANG)
    assert await rig.run_worker() == 1
    assert rig.script.calls == []


async def test_an_import_without_classes_is_tagged_and_reaches_the_safety_group(
    rig: WriteRig,
) -> None:
    rig.script.tags = {ALLERGY: ("safety", "volume", None, "老婆")}
    routes = admin_routes(rig.memory, "admin-token", rig.redis, ArqTagRequests(rig.redis))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=Starlette(routes=routes))
    async with httpx.AsyncClient(transport=transport, base_url="http://hearth") as client:
        jsonl = orjson.dumps({"text": ALLERGY}).decode()  # no cls: the worker decides
        response = await client.post(
            "/admin/memory/import", json={"person": "zhang", "jsonl": jsonl},
            headers={"Authorization": "Bearer admin-token"},
        )  # fmt: skip
    assert response.json() == {
        "imported": 1, "person": "zhang", "tags_pending": 1, "cues_pending": 0
    }  # fmt: skip
    await _tagged_into_the_safety_group(rig)


async def test_an_import_with_classes_gets_its_cues_from_the_worker(rig: WriteRig) -> None:
    """Constraints imported with their class and no cues get cues from the worker's job; a line
    that carries its cues keeps them (no call for it)."""
    routes = admin_routes(rig.memory, "admin-token", rig.redis, ArqTagRequests(rig.redis))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=Starlette(routes=routes))
    lines = [{"text": ALLERGY, "cls": "safety", "subject": "老婆"},
             {"text": "我恐高", "cls": "safety", "cues": ["玻璃栈道"]},
             {"text": "我家住在滨江区", "cls": "fact"}]  # fmt: skip
    async with httpx.AsyncClient(transport=transport, base_url="http://hearth") as client:
        response = await client.post(
            "/admin/memory/import", headers={"Authorization": "Bearer admin-token"},
            json={"person": "zhang", "jsonl": "\n".join(orjson.dumps(x).decode() for x in lines)},
        )  # fmt: skip
    assert response.json()["cues_pending"] == 1
    assert await rig.run_worker() == 1
    assert rig.script.calls == ["cue"]  # the allergy's cues; nothing to tag
    [vector] = rig.memory.embedder.embed(["买点零食"])
    [hits] = rig.memory.store.search_batch(
        ZHANG, [Search(vector, 10, None, cues=True, exclude_expired=False)], 0.0
    )
    assert sorted((h.memory.text, h.cue) for h in hits) == sorted(
        [(ALLERGY, "周末带家人出去玩"), (ALLERGY, "买点零食"), ("我恐高", "玻璃栈道")]
    )


async def test_memories_from_before_cues_get_them_on_request(rig: WriteRig) -> None:
    """`hearth memory cues --person`: every constraint and preference of the person is queued,
    and the worker makes their cues; facts get none, other persons are untouched."""
    from memory.schema import Memory

    li = PersonId("li")
    old = [Memory(text=ALLERGY, person=ZHANG, cls=MemoryClass.SAFETY, subject="老婆"),
           Memory(text="我家住在滨江区", person=ZHANG),
           Memory(text="我儿子对芒果过敏", person=li, cls=MemoryClass.SAFETY)]  # fmt: skip
    rig.memory.store.upsert(old, rig.memory.embedder.embed([m.text for m in old]))
    routes = admin_routes(rig.memory, "admin-token", rig.redis, ArqTagRequests(rig.redis))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=Starlette(routes=routes))
    async with httpx.AsyncClient(transport=transport, base_url="http://hearth") as client:
        response = await client.post("/admin/memory/cues", json={"person": "zhang"},
                                     headers={"Authorization": "Bearer admin-token"})  # fmt: skip
        refused = await client.post("/admin/memory/cues", json={"person": "../x"},
                                    headers={"Authorization": "Bearer admin-token"})  # fmt: skip
    assert response.json() == {"person": "zhang", "cues_pending": 1}
    assert refused.status_code == 400
    assert await rig.run_worker() == 1 and rig.script.calls == ["cue"]
    [vector] = rig.memory.embedder.embed(["买点零食"])
    cue_search = Search(vector, 10, None, cues=True, exclude_expired=False)
    [mine] = rig.memory.store.search_batch(ZHANG, [cue_search], 0.0)
    [theirs] = rig.memory.store.search_batch(li, [cue_search], 0.0)
    assert {h.memory.text for h in mine} == {ALLERGY} and theirs == []
