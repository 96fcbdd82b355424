"""The per-person write lock, shared by every process through Redis (keys.person_lock).

A duplicate check and the write it guards must not interleave with another writer for the same
person — the API's ``store``, MCP, the console and the write path's merge all take it, through
``memory.writes.MemoryWriter.locked`` (the one entry point). The lock is a lease renewed while
the block runs (an API store holds it for milliseconds, a write job for minutes of LLM calls); a
holder that dies (a killed worker) stops renewing it and it expires, so a crash never blocks a
person for long.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.exceptions import LockError

from config import keys


class PersonBusyError(TimeoutError):
    """Another writer held the person for longer than we were willing to wait (transient)."""


POLL_S = 0.005  # a contended API store waits a few ms, not redis-py's default 100 ms
LEASE_S = 30.0


@contextlib.asynccontextmanager
async def holding_person(
    redis: Redis, person: str, wait_s: float, lease_s: float = LEASE_S, key: str | None = None
) -> AsyncIterator[None]:
    """Hold the lock (``keys.person_lock``, or ``key``) for as long as the block runs, renewing
    the lease every third of it; if this process dies the lease runs out within ``lease_s``."""
    lock = redis.lock(key or keys.person_lock(person), timeout=lease_s, blocking_timeout=wait_s,
                      sleep=POLL_S)  # fmt: skip
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
