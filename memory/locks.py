"""The per-person write lock, shared by every process through Redis (keys.person_lock).

A duplicate check and the write it guards must not interleave with another writer for the same
person — the API's ``store`` and the write path's merge both take it. The lock is a lease: a
holder that dies (a killed worker) stops renewing it and it expires, so a crash never blocks
a person for long.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError

from config import keys


class PersonBusyError(TimeoutError):
    """Another writer held the person for longer than we were willing to wait (transient)."""


POLL_S = 0.005  # a contended API store waits a few ms, not redis-py's default 100 ms
LEASE_S = 30.0


def person_lock(redis: Redis, person: str, hold_s: float, wait_s: float) -> Lock:
    """A short, non-renewed hold (API writes take milliseconds)."""
    return redis.lock(
        keys.person_lock(person), timeout=hold_s, blocking_timeout=wait_s, sleep=POLL_S
    )


@contextlib.asynccontextmanager
async def holding_person(
    redis: Redis, person: str, wait_s: float, lease_s: float = LEASE_S
) -> AsyncIterator[None]:
    """Hold the lock for as long as the block runs (minutes, with LLM calls), renewing the
    lease every third of it; if this process dies the lease runs out within ``lease_s``."""
    lock = redis.lock(keys.person_lock(person), timeout=lease_s, blocking_timeout=wait_s,
                      sleep=0.02)  # fmt: skip
    if not await lock.acquire():
        raise PersonBusyError(f"person {person!r} stayed locked for {wait_s:.0f} s")

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease_s / 3)
            await lock.reacquire()

    renewing = asyncio.create_task(renew())
    try:
        yield
    finally:
        renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError, LockError):
            await renewing
        with contextlib.suppress(LockError):
            await lock.release()
