"""Idempotency-Key exactly as seed 002 describes it, shared through Redis."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import orjson
import pytest
from redis.asyncio import Redis

from config import keys
from memory.registry import ApiKeys
from providers.embedder import UseEmbedder
from server.api.errors import ApiError, invalid
from server.api.idempotency import Idempotency, Outcome, WriteTracker, fingerprint
from tests.server.api.conftest import Api, serve_api


async def test_repeat_replays_first_answer(api: Api) -> None:
    body = {"user_id": "alice", "content": "我老婆对海鲜过敏"}
    headers = {"Idempotency-Key": "import:row-42"}
    first = await api.call("POST", "store", body, headers=headers)
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    again = await api.call("POST", "store", body, headers=headers)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()  # the first answer, not "duplicate"
    assert api.store.count("alice") == 1
    other_body = await api.call("POST", "store", {**body, "content": "我喜欢喝茶"}, headers=headers)
    assert other_body.status_code == 422
    assert other_body.json()["error"]["type"] == "invalid_request_error"
    # a different API key has its own key space
    own = await api.call(
        "POST",
        "store",
        {**body, "user_id": "alice", "content": "我家狗叫旺财"},
        key=api.alice_key,
        headers=headers,
    )
    assert own.status_code == 200 and "Idempotent-Replayed" not in own.headers


async def test_concurrent_identical_writes_store_once(api: Api) -> None:
    body = {"user_id": "alice", "content": "儿子每周三下午踢足球"}
    headers = {"Idempotency-Key": "session-7:fact-1"}
    responses = await asyncio.gather(
        *[api.call("POST", "store", body, headers=headers) for _ in range(16)]
    )
    assert api.store.count("alice") == 1
    stored = [r for r in responses if r.status_code == 200]
    assert stored and all(r.json()["status"].startswith("stored") for r in stored)
    assert len({r.json()["id"] for r in stored}) == 1
    for r in responses:
        if r.status_code == 409:
            assert r.json()["error"]["retry_after_ms"] > 0  # still running: wait and resend
        else:
            assert r.status_code == 200
    assert sum("Idempotent-Replayed" not in r.headers for r in stored) == 1


async def test_failed_attempts_are_not_kept(api: Api) -> None:
    headers = {"Idempotency-Key": "speaker-first"}
    body = {"user_id": "alice", "content": "Bob prefers email", "metadata": {"speaker": "Bob"}}
    refused = await api.call("POST", "store", body, headers=headers)
    assert refused.status_code == 400  # Bob not registered yet
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    retried = await api.call("POST", "store", body, headers=headers)
    assert retried.status_code == 200 and "Idempotent-Replayed" not in retried.headers


async def test_vanished_first_attempt_is_unknown(api: Api) -> None:
    """The first attempt's process died with the lease held: 409 without retry_after_ms."""
    body = {"user_id": "alice", "content": "爸爸每天早上吃降压药"}
    key_id = (await ApiKeys(api.redis).lookup(api.workspace)).id  # type: ignore[union-attr]
    print_ = fingerprint("POST", "/api/v1/memory/store", orjson.dumps(body))
    record = {"state": "running", "fingerprint": print_, "lease_until": time.time() - 1}
    await api.redis.set(keys.idempotency(key_id, "k-dead"), orjson.dumps(record), ex=60)
    response = await api.call("POST", "store", body, headers={"Idempotency-Key": "k-dead"})
    assert response.status_code == 409
    assert "retry_after_ms" not in response.json()["error"]
    assert api.store.count("alice") == 0


async def test_engine_failing_part_way_leaves_outcome_unknown(redis: Redis) -> None:
    idem = Idempotency(redis, ttl_s=86400, lease_s=30)
    release = asyncio.Event()

    async def slow(tracker: WriteTracker) -> Outcome:
        tracker.begin()
        await asyncio.wait_for(release.wait(), 10)
        raise RuntimeError("engine died mid-write")

    first = asyncio.create_task(idem.run("scope", "k1", "print", slow))
    await asyncio.sleep(0)  # let the first attempt take the key
    with pytest.raises(ApiError) as running:
        await idem.run("scope", "k1", "print", slow)
    assert running.value.status == 409 and running.value.fields["retry_after_ms"] > 0
    release.set()
    with pytest.raises(RuntimeError):
        await first
    with pytest.raises(ApiError) as unknown:
        await idem.run("scope", "k1", "print", slow)
    assert unknown.value.status == 409 and "retry_after_ms" not in unknown.value.fields
    assert 0 < await redis.ttl(keys.idempotency("scope", "k1")) <= 86400

    async def refused(tracker: WriteTracker) -> Outcome:
        raise invalid("nope")

    with pytest.raises(ApiError):
        await idem.run("scope", "k2", "print", refused)
    assert await redis.exists(keys.idempotency("scope", "k2")) == 0  # not kept


async def test_retired_and_sunset_models(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    models = [{"id": "old", "retires_at": "2020-01-01"}, {"id": "soon", "retires_at": "2099-12-31"}]
    async for base_url, _ in serve_api(tmp_path, redis, embedder, models=models):
        key, _ = await ApiKeys(redis).create("ws", ["*"])
        async with httpx.AsyncClient(base_url=base_url + "/api/v1/memory") as c:
            gone = await c.post(
                "/search",
                json={"user_id": "default", "query": "x"},
                headers={"X-API-Key": key, "X-WOS-Model": "old"},
            )
            assert gone.status_code == 410
            assert (
                gone.json()["error"]["type"] == "gone_error" and gone.json()["error"]["code"] == 0
            )
            # deleting the store works under any model
            delete = await c.request(
                "DELETE",
                "/collection",
                json={"user_id": "default"},
                headers={"X-API-Key": key, "X-WOS-Model": "old"},
            )
            assert delete.status_code == 200
            soon = await c.post(
                "/search",
                json={"user_id": "default", "query": "x"},
                headers={"X-API-Key": key, "X-WOS-Model": "soon"},
            )
            assert (
                soon.status_code == 200
                and soon.headers["Sunset"] == "Thu, 31 Dec 2099 00:00:00 GMT"
            )


async def test_dead_redis_is_a_clear_503(tmp_path: Path, embedder: UseEmbedder) -> None:
    from providers.processes import free_port

    dead = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    async for base_url, _ in serve_api(tmp_path, dead, embedder):
        async with httpx.AsyncClient(base_url=base_url) as c:
            response = await c.post(
                "/api/v1/memory/search",
                json={"user_id": "a", "query": "x"},
                headers={"X-API-Key": "hk_any"},
            )
            assert response.status_code == 503
            assert response.json()["error"]["type"] == "api_error"
    await dead.aclose()


async def test_one_key_is_shared_by_two_server_processes(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    """Two API servers (own stores, one Redis): the same key sent to both stores once."""
    key, _ = await ApiKeys(redis).create("ws", ["*"])
    body = {"user_id": "default", "content": "我老婆对海鲜过敏"}
    headers = {"X-API-Key": key, "Idempotency-Key": "shared:1"}
    async for url_a, store_a in serve_api(tmp_path / "a", redis, embedder):
        async for url_b, store_b in serve_api(tmp_path / "b", redis, embedder):
            async with httpx.AsyncClient() as c:
                answers = await asyncio.gather(
                    *[c.post(f"{url}/api/v1/memory/store", json=body, headers=headers)
                      for url in (url_a, url_b) * 4]
                )  # fmt: skip
            assert store_a.count("default") + store_b.count("default") == 1
            firsts = [a for a in answers if a.status_code == 200
                      and "Idempotent-Replayed" not in a.headers]  # fmt: skip
            assert len(firsts) == 1
            assert all(a.status_code in (200, 409) for a in answers)


async def test_a_failing_memory_engine_answers_the_envelope(api: Api) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("engine down")

    api.store.search_batch = boom  # type: ignore[method-assign,assignment]
    response = await api.call("POST", "search", {"user_id": "alice", "query": "x"})
    assert response.status_code == 500
    assert response.json()["error"]["type"] == "api_error"
    stored = await api.call("POST", "store", {"user_id": "alice", "content": "我喜欢喝茶"},
                            headers={"Idempotency-Key": "k-engine"})  # fmt: skip
    assert stored.status_code == 500 and api.store.count("alice") == 0
