"""Issue 20, medium: write-path jobs are JSON in Redis, never pickle — write access to Redis is not
code execution in the worker. Jobs an older Hearth pickled are converted at worker start by an
unpickler that refuses every class (real Redis, a real arq worker)."""

from __future__ import annotations

import asyncio
import os
import pickle
from pathlib import Path

import orjson
from arq.connections import ArqRedis
from redis.asyncio import Redis

from config import keys
from server.device.session_end import record_payload
from tests.workers.test_session_jobs import record, run_worker
from workers.codec import JOB_KEY_PREFIX, UNREADABLE, dump, job_pool, load, migrate_queued
from workers.contract import REMEMBER_SESSION, SessionJob, enqueue_session
from workers.settings import QUEUE


async def test_jobs_are_written_as_json(redis: Redis) -> None:
    job = SessionJob.model_validate(record_payload(record("s-json")))
    assert await enqueue_session(redis, job)
    raw = await redis.get(JOB_KEY_PREFIX + "s-json")
    stored = orjson.loads(raw)
    assert stored["f"] == REMEMBER_SESSION and stored["a"][0]["session_id"] == "s-json"


class Boom:
    """What an attacker with Redis access would queue: a pickle that runs a command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


async def test_an_old_pickled_job_runs_and_a_hostile_one_never_does(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    old = ArqRedis(connection_pool=redis.connection_pool)  # arq's default: pickle
    await old.enqueue_job(REMEMBER_SESSION, record_payload(record("s-old")), _job_id="s-old",
                          _queue_name=QUEUE)  # fmt: skip
    marker = tmp_path / "pwned"
    hostile = pickle.dumps({"t": 1, "f": REMEMBER_SESSION, "a": [Boom(marker)], "k": {}, "et": 1})
    await redis.set(JOB_KEY_PREFIX + "s-evil", hostile)
    await redis.zadd(QUEUE, {"s-evil": 1})
    assert await run_worker(redis_url) == 1  # the old job, converted and run
    assert not await asyncio.to_thread(marker.exists)
    assert await redis.hexists(UNREADABLE, "s-evil")  # moved aside, kept, never run
    archived = [orjson.loads(r)["session_id"] for r in await redis.lrange(
        keys.transcripts("alice"), 0, -1)]  # fmt: skip
    assert "s-old" in archived
    assert await migrate_queued(redis) == 0  # nothing left to convert


async def test_the_producers_and_the_worker_agree(redis: Redis) -> None:
    pool = job_pool(redis)
    queued = await pool.enqueue_job("tag_pending", "alice", _job_id="t-1", _queue_name=QUEUE)
    assert queued is not None and (await queued.info()) is not None  # JSON read back


def test_a_failed_jobs_error_is_stored_as_text() -> None:
    """arq stores a failed job's exception as its result; JSON keeps its type and message."""
    stored = load(dump({"s": False, "r": IndexError("index 0 is out of bounds")}))
    assert stored["r"] == "IndexError: index 0 is out of bounds"
