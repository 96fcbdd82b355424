"""Tagging requests as arq jobs: ``memory.writes`` asks, the worker's ``tag_pending`` job tags
the person's retag set (one LLM call for all of them). Each request is its own job (a job id
kept as a result for an hour would swallow a second request); a job with nothing pending makes
no LLM call."""

from __future__ import annotations

import uuid

from redis.asyncio import Redis

from config.keys import QUEUE
from memory.schema import PersonId
from workers.codec import job_pool

TAG_PENDING = "tag_pending"
CUE_PENDING = "cue_pending"
CUE_ATTEMPTS = 5  # a cue call that keeps failing is retried this often, then by the next job
CUE_RETRY_S = 60.0  # first retry after a minute, then ×4 (4 min, 16 min, ~1 h)


class ArqTagRequests:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def request(self, person: PersonId) -> None:
        arq = job_pool(self.redis)
        job_id = f"tag:{person}:{uuid.uuid4().hex}"
        await arq.enqueue_job(TAG_PENDING, str(person), _job_id=job_id, _queue_name=QUEUE)


async def retry_cues(redis: Redis, person: PersonId, attempt: int) -> bool:
    """Ask for the person's pending cues again later (``attempt`` ≥ 1); False once attempts
    are spent — the memories then wait for the person's next write or tag job."""
    if attempt > CUE_ATTEMPTS:
        return False
    arq = job_pool(redis)
    await arq.enqueue_job(
        CUE_PENDING, str(person), attempt,
        _job_id=f"cues:{person}:{uuid.uuid4().hex}", _queue_name=QUEUE,
        _defer_by=CUE_RETRY_S * 4 ** (attempt - 1),
    )  # fmt: skip
    return True
