"""``POST /store-turn`` (issue 21): one exchange goes through the write path's extraction, merge
and tagging as a device session does, and its outcome can be read back by turn id — real Redis,
a real arq worker, the scripted write-path LLM."""

from __future__ import annotations

import httpx
import pytest

from memory.registry import ApiKeys, Speakers
from server.api.app import ApiContext, build_api
from server.api.service import MemoryService
from tests.workers.conftest import DAY_TS, WriteRig
from workers.tag_requests import ArqTagRequests

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
MOVE = "我们家上个月从西湖区搬到了滨江区"


def _client(rig: WriteRig) -> httpx.AsyncClient:
    """The memory API on the rig's Redis, store and worker queue, in process."""
    service = MemoryService(rig.memory.embedder, rig.memory.store, Speakers(rig.redis),
                            rig.settings.api, ArqTagRequests(rig.redis))  # fmt: skip
    app = build_api(ApiContext(rig.redis, service, rig.settings.api))
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://h/api/v1/memory")


async def _key(rig: WriteRig) -> str:
    key, _ = await ApiKeys(rig.redis).create("ws", ["*"])
    return key


async def test_a_turn_is_extracted_merged_and_its_outcome_read_back(rig: WriteRig) -> None:
    rig.script.facts = {MOVE: ["家住在滨江区"]}
    rig.script.tags = {"家住在滨江区": ("fact", "volume", None, "我")}
    headers = {"X-API-Key": await _key(rig)}
    async with _client(rig) as c:
        await c.post("/collection", json={"user_id": "zhang"}, headers=headers)
        turn = {"user_id": "zhang", "user": MOVE, "assistant": "好的。", "timestamp": DAY_TS}
        queued = await c.post(
            "/store-turn", headers={**headers, "Idempotency-Key": "t-1"}, json=turn
        )
        assert queued.status_code == 202, queued.text
        turn_id = queued.json()["turn_id"]
        assert queued.json()["outcome"].endswith(turn_id)
        waiting = await c.get(f"/turns/{turn_id}", params={"user_id": "zhang"}, headers=headers)
        assert waiting.json()["status"] == "queued"
        assert await rig.run_worker() >= 1
        done = await c.get(f"/turns/{turn_id}", params={"user_id": "zhang"}, headers=headers)
        other = await c.get(f"/turns/{turn_id}", params={"user_id": "default"}, headers=headers)
        refused = await c.post("/store-turn", headers=headers,
                               json={"user_id": "zhang", "user": "x",
                                     "metadata": {"speaker": "陌生人"}})  # fmt: skip
    outcome = done.json()
    assert outcome["status"] == "done" and outcome["facts"] == 1
    [stored] = outcome["memories"]
    assert stored["status"] == "stored"
    assert "家住在滨江区" in rig.texts()
    [memory] = rig.memory.store.get("zhang", [stored["id"]])  # type: ignore[arg-type]
    assert memory.source == "api" and not memory.tags_pending
    assert other.status_code == 404  # another store's turn does not exist for this caller
    assert refused.status_code == 400  # an unregistered speaker, as on /store


async def test_expand_says_which_conversation_a_memory_came_from(rig: WriteRig) -> None:
    rig.script.facts = {MOVE: ["家住在滨江区"]}
    headers = {"X-API-Key": await _key(rig)}
    async with _client(rig) as c:
        await c.post("/collection", json={"user_id": "zhang"}, headers=headers)
        turn = {"user_id": "zhang", "user": MOVE, "assistant": "好的。", "timestamp": DAY_TS}
        queued = (await c.post("/store-turn", headers=headers, json=turn)).json()
        await rig.run_worker()
        done = (await c.get(f"/turns/{queued['turn_id']}", params={"user_id": "zhang"},
                            headers=headers)).json()  # fmt: skip
        [stored] = done["memories"]
        why = await c.post("/expand", headers=headers,
                           json={"user_id": "zhang", "memory_id": stored["id"]})  # fmt: skip
        direct = (
            await c.post(
                "/store",
                headers=headers,
                json={"user_id": "zhang", "content": "我每周四晚上有吉他课"},
            )
        ).json()
        called = await c.post("/expand", headers=headers,
                              json={"user_id": "zhang", "memory_id": direct["id"]})  # fmt: skip
    origin = why.json()["origin"]
    assert origin["kind"] == "session" and origin["session_id"] == queued["turn_id"]
    assert [(u["role"], u["text"]) for u in origin["passage"]] == [
        ("user", MOVE), ("assistant", "好的。"),
    ]  # fmt: skip
    assert called.json()["origin"] == {
        "kind": "call", "source": "api", "speaker": None,
        "stored_at": called.json()["memory"]["created_at"], "text": "我每周四晚上有吉他课",
    }  # fmt: skip
