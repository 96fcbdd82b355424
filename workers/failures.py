"""Dead letters: jobs that failed for good, kept for an operator (`hearth jobs failed`,
`hearth jobs retry ID`). Nothing the write path gives up on disappears silently."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson
from redis.asyncio import Redis

from config import keys


@dataclass(frozen=True, slots=True)
class FailedJob:
    job_id: str
    record: dict[str, Any]
    error: str
    kind: str  # "permanent" (not retried) or "exhausted" (transient, out of tries)
    tries: int
    failed_at: float

    def as_json(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "record": self.record,
            "error": self.error,
            "kind": self.kind,
            "tries": self.tries,
            "failed_at": self.failed_at,
        }


class DeadLetters:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def add(
        self, job_id: str, record: dict[str, Any], error: str, kind: str, tries: int
    ) -> None:
        failed = FailedJob(job_id, record, error, kind, tries, time.time())
        await self.redis.hset(keys.FAILED_JOBS, job_id, orjson.dumps(failed.as_json()).decode())

    async def all(self) -> list[FailedJob]:
        raw = await self.redis.hgetall(keys.FAILED_JOBS)
        jobs = [FailedJob(**orjson.loads(value)) for value in raw.values()]
        return sorted(jobs, key=lambda j: j.failed_at)

    async def take(self, job_id: str) -> FailedJob | None:
        """Remove and return one failed job (to enqueue it again)."""
        raw = await self.redis.hget(keys.FAILED_JOBS, job_id)
        if raw is None or not await self.redis.hdel(keys.FAILED_JOBS, job_id):
            return None
        return FailedJob(**orjson.loads(raw))
