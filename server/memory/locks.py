"""The per-person write lock, shared by every process through Redis (keys.person_lock).

A duplicate check and the write it guards must not interleave with another writer for the same
person — the API's ``store`` and the write path's merge both take it. The lock expires on its
own (``timeout_s``) if its holder dies, so a crashed worker never blocks a person forever.
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.lock import Lock

from config import keys

HOLD_S = 120.0  # longer than any write-path merge (LLM calls included)
WAIT_S = 150.0


POLL_S = 0.005  # a contended API store waits a few ms, not redis-py's default 100 ms


def person_lock(redis: Redis, person: str, hold_s: float = HOLD_S, wait_s: float = WAIT_S) -> Lock:
    return redis.lock(
        keys.person_lock(person), timeout=hold_s, blocking_timeout=wait_s, sleep=POLL_S
    )
