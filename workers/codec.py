"""How write-path jobs are stored in Redis: JSON, never pickle.

arq's default serializer is pickle: anyone who can write to Redis could make the worker run any
code. Every producer (``job_pool``) and the worker use these JSON functions instead — a job is a
function name, a JSON record and timestamps, nothing more. Jobs queued by an older Hearth
(pickled) are converted once at worker start by ``migrate_queued``, with an unpickler that
refuses every class (a pickle of plain dicts, lists, strings and numbers loads; anything else is
moved aside to ``hearth:jobs:unreadable`` and logged, never executed).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import orjson
import structlog
from arq.connections import ArqRedis
from redis.asyncio import Redis

from config.keys import PREFIX, QUEUE

log = structlog.get_logger(__name__)
JOB_KEY_PREFIX = "arq:job:"
UNREADABLE = PREFIX + "jobs:unreadable"  # hash job id -> the raw bytes of a job not converted


def dump(job: dict[str, Any]) -> bytes:
    return orjson.dumps(job, default=_plain)


def load(raw: bytes) -> dict[str, Any]:
    found: dict[str, Any] = orjson.loads(raw)
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if isinstance(value, BaseException):  # a failed job's result: kept readable, as text
        return f"{type(value).__name__}: {value}"[:500]
    raise TypeError(f"{type(value).__name__} is not part of a job")


def job_pool(redis: Redis) -> ArqRedis:
    """An arq handle on ``redis``'s connections that writes jobs as JSON."""
    return ArqRedis(connection_pool=redis.connection_pool, job_serializer=dump,
                    job_deserializer=load)  # fmt: skip


class _NoClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a job")


async def migrate_queued(redis: Redis) -> int:
    """Rewrite pickled queued jobs as JSON (keeping their expiry); returns how many."""
    converted = 0
    for job_id in await redis.zrange(QUEUE, 0, -1):
        key = JOB_KEY_PREFIX + job_id.decode()
        raw = await redis.get(key)
        if raw is None:
            continue
        try:
            orjson.loads(raw)
            continue  # already JSON
        except orjson.JSONDecodeError:
            pass
        try:
            job = _NoClasses(io.BytesIO(raw)).load()
            body = dump(job)
        except (pickle.UnpicklingError, TypeError, ValueError, EOFError) as exc:
            await redis.hset(UNREADABLE, job_id, raw)
            await redis.zrem(QUEUE, job_id)
            await redis.delete(key)
            log.error("jobs.unreadable_moved", job=job_id.decode(), error=str(exc)[:200])
            continue
        ttl = await redis.pttl(key)
        await redis.set(key, body, px=ttl if ttl > 0 else None)
        converted += 1
    if converted:
        log.info("jobs.migrated_to_json", jobs=converted)
    return converted
