"""Issue 21, items 1-4: what a new user trips on first — JSON bodies sent with curl's form
content type, the by-speaker cursor sent back under its own names, the envelope on unknown
routes and methods, and Sunset on every answer a scheduled model serves (errors included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from memory.registry import ApiKeys
from memory.schema import Memory, PersonId
from providers.embedder import UseEmbedder
from tests.server.api.conftest import Api, serve_api

FORM = {"Content-Type": "application/x-www-form-urlencoded"}  # what `curl -d` declares


async def test_a_json_body_is_read_whatever_content_type_curl_declared(api: Api) -> None:
    body = orjson.dumps({"user_id": "alice", "content": "我每周四晚上有吉他课"})
    sent = await api.client.post(
        "/api/v1/memory/store", content=body, headers={"X-API-Key": api.workspace, **FORM}
    )
    assert sent.status_code == 200, sent.text
    assert sent.json()["status"].startswith("stored")
    broken = await api.client.post(
        "/api/v1/memory/store",
        content=b"user_id=alice",
        headers={"X-API-Key": api.workspace, **FORM},
    )
    assert broken.status_code == 400 and broken.json()["type"] == "error"


async def test_the_by_speaker_cursor_goes_back_under_the_names_it_came_with(api: Api) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    for n, hobby in enumerate(["Bob swims", "Bob plays chess", "Bob cooks"]):
        memory = Memory(text=hobby, person=PersonId("alice"), speaker="Bob", source="api",
                        created_at=1000.0 + n)  # fmt: skip
        api.store.upsert([memory], [[0.01] * api.store.dim])
    first = await api.ok("POST", "by-speaker", {"user_id": "alice", "speaker": "Bob", "limit": 2})
    cursor = {"next_before": first["next_before"], "next_skip_ids": first["next_skip_ids"]}
    echoed = {"user_id": "alice", "speaker": "Bob", "limit": 2, **cursor}
    second = await api.ok("POST", "by-speaker", echoed)
    ids = [m["id"] for m in first["memories"] + second["memories"]]
    assert len(ids) == 3 and len(set(ids)) == 3


async def test_unknown_routes_and_methods_answer_the_envelope(api: Api) -> None:
    headers = {"X-API-Key": api.workspace}
    missing = await api.client.post("/api/v1/memory/nope", json={}, headers=headers)
    wrong = await api.client.get("/api/v1/memory/store", headers=headers)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    assert wrong.status_code == 405 and wrong.json()["type"] == "error"
    assert "detail" not in missing.json() and "detail" not in wrong.json()


async def test_sunset_is_on_every_answer_of_a_scheduled_model(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    models = [{"id": "old", "retires_at": "2020-01-01"}, {"id": "soon", "retires_at": "2099-12-31"}]
    async for base_url, _ in serve_api(tmp_path, redis, embedder, models=models):
        key, _ = await ApiKeys(redis).create("ws", ["*"])
        async with httpx.AsyncClient(base_url=base_url) as c:
            soon = {"X-API-Key": key, "X-WOS-Model": "soon"}
            error = await c.post("/api/v1/memory/search", json={"user_id": "x y"}, headers=soon)
            listed = await c.get("/api/v1/models", headers=soon)
            gone = await c.post("/api/v1/memory/search", json={"user_id": "default", "query": "q"},
                                headers={"X-API-Key": key, "X-WOS-Model": "old"})  # fmt: skip
    assert error.status_code == 400 and error.headers["Sunset"] == "Thu, 31 Dec 2099 00:00:00 GMT"
    assert listed.status_code == 200 and "Sunset" in listed.headers
    assert gone.status_code == 410 and gone.headers["Sunset"] == "Wed, 01 Jan 2020 00:00:00 GMT"


async def test_bulk_store_answers_each_items_fate(api: Api) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    items = [
        {"content": "Bob 对花生过敏", "metadata": {"speaker": "Bob"}},
        {"content": "我每周二晚上打羽毛球"},
        {"content": "Bob 对花生过敏"},  # the first item, again: a duplicate
        {"content": "谁说的？", "metadata": {"speaker": "Stranger"}},  # not registered
        {"content": "   "},  # empty
    ]
    sent = await api.call(
        "POST", "bulk-store", {"user_id": "alice", "items": items},
        headers={"Idempotency-Key": "bulk-1"},
    )  # fmt: skip
    assert sent.status_code == 200, sent.text
    body = sent.json()
    statuses = [r["status"] for r in body["results"]]
    assert statuses == ["stored", "stored", "duplicate", "refused", "refused"]
    assert body["results"][2]["duplicate_of"] == body["results"][0]["id"]
    assert "Stranger" in body["results"][3]["reason"]
    assert body["counts"]["stored"] == 2 and body["status"] == "done"
    again = await api.call(
        "POST", "bulk-store", {"user_id": "alice", "items": items},
        headers={"Idempotency-Key": "bulk-1"},
    )  # fmt: skip
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json() == body
    too_many = await api.call("POST", "bulk-store",
                              {"user_id": "alice", "items": [{"content": "x"}] * 101})  # fmt: skip
    assert too_many.status_code == 400


async def test_bulk_store_says_what_was_and_was_not_written_when_the_engine_fails(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.writes import MemoryWriter

    real = MemoryWriter.remember
    calls = 0

    async def failing_second(self: MemoryWriter, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("engine down")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(MemoryWriter, "remember", failing_second)
    items = [{"content": "第一条：我家住在滨江区"}, {"content": "第二条：我喜欢喝美式"},
             {"content": "第三条：女儿叫小橙子"}]  # fmt: skip
    body = await api.ok("POST", "bulk-store", {"user_id": "alice", "items": items})
    assert body["status"] == "partial"
    assert [r["status"] for r in body["results"]] == ["stored", "failed", "not_attempted"]
