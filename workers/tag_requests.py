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


class ArqTagRequests:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def request(self, person: PersonId) -> None:
        arq = job_pool(self.redis)
        job_id = f"tag:{person}:{uuid.uuid4().hex}"
        await arq.enqueue_job(TAG_PENDING, str(person), _job_id=job_id, _queue_name=QUEUE)
