"""``POST /store-turn`` and ``GET /turns/{id}``.

One exchange goes through the same two-stage extraction and merge as a device session —
asynchronously, as a write-path job — and its outcome can be read back: which memories it
stored, updated or found already known.

The job is a ``workers.contract.SessionJob`` with source ``api``; its id (``turn-…``) is the
turn id. Reading an outcome checks the job belongs to the caller's store (404 otherwise, as for
any store the key may not touch)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from arq.jobs import Job, JobStatus
from redis.asyncio import Redis

from config.keys import QUEUE
from memory.identity import ME
from memory.schema import PersonId
from server.api import errors
from workers.codec import load
from workers.contract import SessionJob, enqueue_session

SOURCE = "api"
TURN_PREFIX = "turn-"


async def queue_turn(
    redis: Redis, store: PersonId, user: str, assistant: str | None, speaker: str | None,
    at: float | None,
) -> dict[str, Any]:  # fmt: skip
    turn_id = f"{TURN_PREFIX}{uuid.uuid4().hex}"
    when = at or time.time()
    said = [{"role": "user", "text": user, "speaker": speaker or str(store), "at": when}]
    if assistant:
        said.append({"role": "assistant", "text": assistant, "speaker": ME, "at": when})
    job = SessionJob.model_validate({
        "session_id": turn_id, "person": store, "source": SOURCE, "started_at": when,
        "ended_at": when, "end_reason": "api_turn", "transcript": said,
    })  # fmt: skip
    await enqueue_session(redis, job)
    return {"status": "queued", "turn_id": turn_id, "outcome": f"/api/v1/memory/turns/{turn_id}"}


async def turn_outcome(redis: Redis, store: PersonId, turn_id: str) -> dict[str, Any]:
    if not turn_id.startswith(TURN_PREFIX):
        raise errors.not_found(f"turn '{turn_id}' not found in this store.", turn_id=turn_id)
    job = Job(turn_id, redis, _queue_name=QUEUE, _deserializer=load)
    info = await job.info()
    record = info.args[0] if info is not None and info.args else None
    if not isinstance(record, dict) or record.get("person") != store:
        raise errors.not_found(f"turn '{turn_id}' not found in this store.", turn_id=turn_id)
    status = await job.status()
    if status is not JobStatus.complete:
        return {"turn_id": turn_id, "status": "queued" if status is JobStatus.queued else "running"}
    result = await job.result_info()
    outcome = result.result if result is not None else None
    if result is None or not result.success or not isinstance(outcome, dict):
        return {"turn_id": turn_id, "status": "failed", "note": "see hearth jobs failed"}
    memories = [{"id": i, "status": "stored"} for i in outcome.get("added", [])]
    memories += [{"id": i, "status": "updated"} for i in outcome.get("updated", [])]
    memories += [{"text": t, "status": "duplicate"} for t in outcome.get("duplicates", [])]
    return {"turn_id": turn_id, "status": "done", "facts": outcome.get("facts", 0),
            "memories": memories}  # fmt: skip
