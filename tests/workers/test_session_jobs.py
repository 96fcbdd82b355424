"""Session end → arq job → worker, against a real Redis and a real in-process arq worker."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
from arq.connections import ArqRedis, create_pool
from redis.asyncio import Redis

from config import keys
from server.device.session import SessionRecord
from server.device.session_end import EnqueueOnSessionEnd
from workers.contract import Said
from workers.settings import build_worker, redis_settings


def record(session_id: str = "s-1") -> SessionRecord:
    now = time.time()
    return SessionRecord(
        session_id=session_id,
        device_id="aa:bb:cc:dd:ee:ff",
        client_id="c",
        person="alice",
        started_at=now - 30,
        ended_at=now,
        end_reason="closed_by_device",
        transcript=[
            Said(role="user", text="我老婆对海鲜过敏，尤其是虾", at=now - 20),
            Said(role="assistant", text="记住了。", at=now - 18),
        ],
    )


async def run_worker(redis_url: str) -> int:
    worker = build_worker(redis_url, burst=True, handle_signals=False)
    try:
        await worker.main()
        return worker.jobs_complete
    finally:
        await worker.close()


async def test_transcript_is_archived_once_even_if_enqueued_twice(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    arq = await create_pool(redis_settings(redis_url))
    hook = EnqueueOnSessionEnd(arq, tmp_path / "spool")
    await hook.session_ended(record())
    await hook.session_ended(record())  # same session id: deduplicated by _job_id
    assert await run_worker(redis_url) == 1
    stored = await redis.lrange(keys.transcripts("alice"), 0, -1)
    assert len(stored) == 1
    archived = orjson.loads(stored[0])
    assert archived["transcript"][0]["text"] == "我老婆对海鲜过敏，尤其是虾"
    assert archived["device_id"] == "aa:bb:cc:dd:ee:ff"
    await arq.aclose()


async def test_redelivered_job_stores_nothing_twice(redis: Redis, redis_url: str) -> None:
    from server.device.session_end import record_payload
    from workers.jobs import remember_session

    payload = record_payload(record("s-2"))
    ctx = {"redis": redis}
    assert (await remember_session(ctx, payload))["archived"] == 2
    again = await remember_session(ctx, payload)  # at-least-once delivery, run again
    assert again["archived"] == 2
    assert await redis.llen(keys.transcripts("alice")) == 1


async def test_redis_down_spools_and_drains_later(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    dead = ArqRedis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    spool = tmp_path / "spool"
    down = EnqueueOnSessionEnd(dead, spool)
    await down.session_ended(record("s-3"))
    assert [p.name for p in down.spooled()] == ["s-3.json"]
    await dead.aclose()

    arq = await create_pool(redis_settings(redis_url))
    up = EnqueueOnSessionEnd(arq, spool)
    assert await up.drain_spool() == 1
    assert up.spooled() == []
    assert await run_worker(redis_url) == 1
    stored = await redis.lrange(keys.transcripts("alice"), 0, -1)
    assert orjson.loads(stored[0])["session_id"] == "s-3"
    await arq.aclose()


async def test_a_job_whose_tries_went_to_dead_workers_lands_in_the_dead_letters(
    redis: Redis,
) -> None:
    """Issue 20: arq dropped a job past its max_tries (restarts count) without running it, so it
    never reached the dead letters. The job now sees that try and gives up on the record."""
    from server.device.session_end import record_payload
    from workers.context import KEY, WorkerContext
    from workers.failures import DeadLetters
    from workers.gate import AlwaysUp
    from workers.jobs import remember_session

    payload = record_payload(record("s-killed"))
    ctx = {"redis": redis, "job_id": "s-killed", "job_try": 6,
           KEY: WorkerContext(max_tries=5, budget_s=60, llm_gate=AlwaysUp())}  # fmt: skip
    result = await remember_session(ctx, payload)
    assert result["dead_letter"] == "exhausted"
    [letter] = [d for d in await DeadLetters(redis).all() if d.job_id == "s-killed"]
    assert letter.kind == "exhausted" and letter.record["session_id"] == "s-killed"


async def test_a_queued_session_outlives_a_long_weekend_without_a_worker(
    redis: Redis, redis_url: str
) -> None:
    from workers.contract import SessionJob, enqueue_session

    arq = await create_pool(redis_settings(redis_url))
    try:
        from server.device.session_end import record_payload

        job = SessionJob.model_validate(record_payload(record("s-weekend")))
        assert await enqueue_session(arq, job)
        ttl_days = await redis.ttl("arq:job:s-weekend") / 86400
        assert ttl_days > 30  # arq's default was one day
    finally:
        await arq.aclose()
