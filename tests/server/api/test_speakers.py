"""Seed 000, "who said it": registration, limits, reserved 'me', verbatim error bodies."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from redis.asyncio import Redis

from memory.registry import ApiKeys
from memory.schema import Memory, PersonId
from providers.embedder import UseEmbedder
from tests.server.api.conftest import Api, serve_api


async def test_register_store_and_search_by_speaker(api: Api) -> None:
    registered = await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    assert registered["status"] == "registered" and registered["speaker"] == "Bob"
    stored = await api.ok(
        "POST",
        "store",
        {
            "user_id": "alice",
            "content": "Bob said the deadline moved to Tuesday",
            "metadata": {"speaker": "Bob"},
        },
    )
    assert stored["status"].startswith("stored") and stored["id"]
    mine = await api.ok(
        "POST",
        "store",
        {
            "user_id": "alice",
            "content": "I promised the summary by Friday",
            "metadata": {"speaker": "me"},
        },
    )
    assert mine["status"].startswith("stored")
    hits = await api.ok(
        "POST",
        "search",
        {"user_id": "alice", "query": "what did Bob say about the deadline?", "speaker": "Bob"},
    )
    assert [m["content"] for m in hits["memories"]] == ["Bob said the deadline moved to Tuesday"]
    assert hits["memories"][0]["speaker"] == "Bob"
    every = await api.ok("POST", "search", {"user_id": "alice", "query": "deadline summary"})
    assert {m["speaker"] for m in every["memories"]} == {"Bob", "me"}  # every read carries it


async def test_unregistered_speaker_errors_are_verbatim(api: Api) -> None:
    store = await api.call(
        "POST",
        "store",
        {"user_id": "alice", "content": "the plan changed", "metadata": {"speaker": "Bob"}},
    )
    assert store.status_code == 400
    body = store.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["speaker"] == "Bob"
    assert body["error"]["message"].startswith(
        "speaker 'Bob' is not registered in this store. Register it first: "
    )
    assert api.store.count("alice") == 0  # nothing stored
    search = await api.call(
        "POST", "search", {"user_id": "alice", "query": "plan", "speaker": "Bob"}
    )
    assert search.status_code == 404
    assert search.json() == {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "speaker 'Bob' is not registered in this store.",
            "speaker": "Bob",
        },
    }


async def test_me_is_reserved_and_lowercase_only(api: Api) -> None:
    for bad in ("Me", "ME"):
        response = await api.call(
            "POST",
            "store",
            {"user_id": "alice", "content": "hello there", "metadata": {"speaker": bad}},
        )
        assert response.status_code == 400
        assert response.json()["error"]["type"] == "invalid_request_error"
    register_me = await api.call("POST", "speakers", {"user_id": "alice", "speaker": "me"})
    assert register_me.status_code == 400
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed == {"user_id": "alice", "speakers": [], "count": 0, "limit": 50}


async def test_names_are_unicode_trimmed_normalised_case_sensitive(api: Api) -> None:
    for name in ("さくら", "Иван", "하늘", "Bob", "bob"):
        await api.ok("POST", "speakers", {"user_id": "alice", "speaker": name})
    again = await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "  Bob  "})
    assert again["status"] == "exists"
    decomposed = "Jose\u0301"  # NFD: é as e + combining accent
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": decomposed})
    same = await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Jos\u00e9"})
    assert same["status"] == "exists"
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed["count"] == 6
    too_long = await api.call("POST", "speakers", {"user_id": "alice", "speaker": "x" * 81})
    assert too_long.status_code == 400
    assert (
        await api.call("POST", "speakers", {"user_id": "alice", "speaker": "y" * 80})
    ).status_code == 200


async def test_limit_counts_only_at_registration(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    async for base_url, _ in serve_api(tmp_path, redis, embedder, speaker_limit=3):
        key, _ = await ApiKeys(redis).create("ws", ["*"])
        headers = {"X-API-Key": key}
        async with httpx.AsyncClient(base_url=base_url + "/api/v1/memory", headers=headers) as c:
            results = await asyncio.gather(
                *[
                    c.post("/speakers", json={"user_id": "default", "speaker": f"p{i}"})
                    for i in range(6)
                ]
            )
            assert sorted(r.status_code for r in results) == [200, 200, 200, 400, 400, 400]
            refused = next(r for r in results if r.status_code == 400).json()
            assert refused["error"]["type"] == "invalid_request_error"
            assert refused["error"]["speaker_limit"] == 3
            assert refused["error"]["message"].startswith(
                "This store already has 3 registered speakers, "
            )
            # 'me' never counts, and store never answers the limit error
            winner = next(r.json()["speaker"] for r in results if r.status_code == 200)
            for i in range(3):
                stored = await c.post(
                    "/store",
                    json={
                        "user_id": "default",
                        "content": f"当天第{i}件完全不同的事：{['买菜', '修车', '看牙'][i]}",
                        "metadata": {"speaker": "me" if i else winner},
                    },
                )
                assert stored.status_code == 200, stored.text
            listed = (await c.get("/speakers")).json()
            assert listed["count"] == 3 and listed["limit"] == 3


async def test_remove_speaker_keeps_memories_drops_tag(api: Api) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    stored = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob owns a red bicycle", "metadata": {"speaker": "Bob"}},
    )
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed["speakers"][0]["speaker"] == "Bob" and listed["speakers"][0]["memories"] == 1
    removed = await api.ok("DELETE", "speakers", {"user_id": "alice", "speaker": "Bob"})
    assert removed["memories_untagged"] == 1
    [memory] = api.store.get("alice", [stored["id"]])
    assert memory.text == "Bob owns a red bicycle" and memory.speaker is None
    again = await api.call(
        "POST", "search", {"user_id": "alice", "query": "bike", "speaker": "Bob"}
    )
    assert again.status_code == 404


async def test_by_speaker_pages_newest_first_with_ties(api: Api) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    texts = [
        "Bob likes jazz",
        "Bob's car is a blue Volvo",
        "Bob is learning Japanese",
        "Bob runs every Sunday morning",
        "Bob's sister lives in Lyon",
    ]
    times = iter([1000.0, 2000.0, 2000.0, 2000.0, 3000.0])  # three share one timestamp
    for text in texts:
        memory = Memory(
            text=text, person=PersonId("alice"), speaker="Bob", source="api", created_at=next(times)
        )
        api.store.upsert([memory], [[0.01] * api.store.dim])
    unlabelled = Memory(text="no speaker here", person=PersonId("alice"), created_at=4000.0)
    api.store.upsert([unlabelled], [[0.02] * api.store.dim])
    seen: list[str] = []
    body: dict[str, object] = {"user_id": "alice", "speaker": "Bob", "limit": 2}
    for _ in range(5):
        page = await api.ok("POST", "by-speaker", body)
        seen += [m["content"] for m in page["memories"]]
        assert len(page["chunks"]) == len(page["memories"])
        assert page["points_to_delete"] == [m["id"] for m in page["memories"]]
        if page["next_before"] is None:
            break
        body = {**body, "before": page["next_before"], "skip_ids": page["next_skip_ids"]}
    assert seen[0] == "Bob's sister lives in Lyon" and seen[-1] == "Bob likes jazz"
    assert sorted(seen) == sorted(texts)  # every memory once, ties included, no unlabelled one
    mine = await api.ok("POST", "by-speaker", {"user_id": "alice", "speaker": "me"})
    assert mine["memories"] == []
