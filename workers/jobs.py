"""Jobs the worker runs. Plain typed ``async def job(ctx, …)``; resources come in ``ctx``."""

from __future__ import annotations

from typing import Any

import orjson
import structlog
from redis.asyncio import Redis

from config import keys

log = structlog.get_logger(__name__)
TRANSCRIPT_ARCHIVE_LIMIT = 1000
REMEMBER_SESSION = "remember_session"


async def remember_session(ctx: dict[str, Any], record: dict[str, Any]) -> int:
    """Archive a finished session's transcript under its person; returns the utterance count.

    Idempotent per session: a re-delivered job (arq is at-least-once) finds its marker and
    stores nothing twice.
    """
    redis: Redis = ctx["redis"]
    person = str(record["person"])
    session_id = str(record["session_id"])
    marker = f"{keys.PREFIX}archived:{session_id}"
    if not await redis.set(marker, "1", nx=True, ex=7 * 24 * 3600):
        log.info("job.remember_session.already_done", session=session_id)
        return len(record.get("transcript", []))
    pipe = redis.pipeline(transaction=True)
    pipe.lpush(keys.transcripts(person), orjson.dumps(record))
    pipe.ltrim(keys.transcripts(person), 0, TRANSCRIPT_ARCHIVE_LIMIT - 1)
    await pipe.execute()
    count = len(record.get("transcript", []))
    log.info("job.remember_session", session=session_id, person=person, utterances=count)
    return count
