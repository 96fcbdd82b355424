"""Jobs the worker runs. Plain typed ``async def job(ctx, …)``; resources come in ``ctx``.

Failure policy: the record is validated against the job contract first. Transient errors only
(LLM unreachable or 5xx, an unusable LLM reply, Redis, the memory store's I/O, a person lock
held too long, the job's own time budget) retry with exponential backoff through arq's
``Retry``; once tries run out — or at once for anything else (a malformed record, an LLM 4xx
such as a bad key, and any other exception: a bug is not retried five times) — the job goes to
the dead-letter hash with its record and the traceback, and re-raises so arq records it too.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import orjson
import structlog
from arq import Retry
from qdrant_client.http.exceptions import ApiException
from redis.asyncio import Redis
from redis.exceptions import RedisError

from config import keys
from memory.schema import PersonId
from providers.errors import ProviderError, TransientProviderError
from workers.context import worker_context
from workers.contract import SessionJob
from workers.failures import DeadLetters
from workers.gate import LLMGate
from workers.tag_requests import retry_cues
from workers.writepath import Outcome, WritePath, parse_job

log = structlog.get_logger(__name__)
TRANSCRIPT_ARCHIVE_LIMIT = 1000
TRANSIENT: tuple[type[BaseException], ...] = (
    TransientProviderError, RedisError, TimeoutError, OSError, ApiException,
)  # fmt: skip


async def archive(redis: Redis, job: SessionJob) -> int:
    """Keep the raw transcript under its person (idempotent per session)."""
    person, session_id, count = job.person, job.session_id, len(job.transcript)
    record = job.model_dump(mode="json")
    marker = f"{keys.PREFIX}archived:{session_id}"
    if not await redis.set(marker, "1", nx=True, ex=keys.CHECKPOINT_TTL_S):
        return count
    pipe = redis.pipeline(transaction=True)
    pipe.lpush(keys.transcripts(person), orjson.dumps(record))
    pipe.ltrim(keys.transcripts(person), 0, TRANSCRIPT_ARCHIVE_LIMIT - 1)
    await pipe.execute()
    log.info("job.archived", session=session_id, person=person, utterances=count)
    return count


async def remember_session(ctx: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """Archive the transcript, then run the write path (when memory is enabled)."""
    redis: Redis = ctx["redis"]
    hearth = worker_context(ctx)
    job_id = str(ctx.get("job_id", record.get("session_id", "?")))
    tries = int(ctx.get("job_try", 1))
    max_tries = hearth.max_tries
    if tries > max_tries:
        # tries spent by workers that died mid-job (arq counts a restart as a try): arq itself
        # would drop the job silently past its own limit, so it is given up here, on the record
        exc = RuntimeError(f"{tries - 1} tries ended without a result (worker restarts)")
        await _give_up(redis, job_id, record, exc, "exhausted", tries)
        return {"session_id": record.get("session_id"), "dead_letter": "exhausted"}
    try:
        job = parse_job(record)
        utterances = await archive(redis, job)
        write_path = hearth.write_path
        if write_path is None:
            return {"session_id": job.session_id, "archived": utterances}
        async with asyncio.timeout(hearth.budget_s):
            outcome = await _remember_when_llm_up(write_path, job, hearth.llm_gate, job_id)
        if outcome.cues_deferred is not None:
            await retry_cues(redis, PersonId(job.person), 1)
        return outcome.as_json()
    except TRANSIENT as exc:
        if tries < max_tries:
            delay = hearth.retry_base_s * 2 ** (tries - 1)
            log.warning("job.retry", job=job_id, tries=tries, in_s=delay, error=repr(exc))
            raise Retry(defer=delay) from exc
        await _give_up(redis, job_id, record, exc, "exhausted", tries)
        raise
    except Exception as exc:  # permanent: a bad record, an LLM 4xx, or a bug
        await _give_up(redis, job_id, record, exc, "permanent", tries)
        raise


async def tag_pending(ctx: dict[str, Any], person: str) -> dict[str, Any]:
    """Tag what any entry point stored for ``person`` with default tags (memory.writes). A
    failure leaves them pending in the retag set, where the next job (this or a session's)
    finds them: nothing is lost, so no retries and no dead letter."""
    hearth = worker_context(ctx)
    write_path = hearth.write_path
    if write_path is None:
        return {"person": person, "tagged": 0, "skipped": "write path disabled"}
    try:
        async with asyncio.timeout(hearth.budget_s):
            await hearth.llm_gate.wait_up()
            outcome = await write_path.tag_pending(PersonId(person))
    except (ProviderError, RedisError, TimeoutError) as exc:
        log.warning("job.tagging_deferred", person=person, error=repr(exc))
        return {"person": person, "tagged": 0, "deferred": repr(exc)}
    if outcome.cues_deferred is not None:
        await retry_cues(ctx["redis"], PersonId(person), 1)
    return {"person": person, "tagged": outcome.tagged, "tags_pending": outcome.tags_pending,
            "cued": outcome.cued, "cues_pending": outcome.cues_pending}  # fmt: skip


async def cue_pending(ctx: dict[str, Any], person: str, attempt: int = 1) -> dict[str, Any]:
    """Retry the person's pending cues (a cue call failed or gave nothing usable); failing
    again asks for attempt + 1, later. Nothing is lost meanwhile: the memories are stored and
    recalled as before, only without cues."""
    hearth = worker_context(ctx)
    write_path = hearth.write_path
    if write_path is None:
        return {"person": person, "cued": 0, "skipped": "write path disabled"}
    outcome: Outcome | None = None
    try:
        async with asyncio.timeout(hearth.budget_s):
            await hearth.llm_gate.wait_up()
            outcome = await write_path.cue_pending(PersonId(person))
        deferred = outcome.cues_deferred
    except (ProviderError, RedisError, TimeoutError) as exc:
        deferred = repr(exc)
    again = deferred is not None and await retry_cues(ctx["redis"], PersonId(person), attempt + 1)
    log.info("job.cues", person=person, attempt=attempt, deferred=deferred, again=again)
    return {"person": person, "cued": outcome.cued if outcome else 0, "attempt": attempt,
            "deferred": deferred, "retry": again}  # fmt: skip


async def _remember_when_llm_up(
    write_path: WritePath, job: SessionJob, gate: LLMGate, job_id: str
) -> Outcome:
    """Runs the (checkpointed, idempotent) write path once the LLM serves. An LLM known to be down
    — its process died and is being restarted — costs no try: the job waits for it and runs
    again inside the same try. Any other failure follows the retry policy."""
    while True:
        if not gate.is_up():
            log.warning("job.waiting_for_llm", job=job_id)
            await gate.wait_up()
        try:
            return await write_path.remember(job)
        except TransientProviderError:
            if gate.is_up():
                raise
            log.warning("job.llm_went_down", job=job_id)


async def _give_up(
    redis: Redis, job_id: str, record: dict[str, Any], exc: BaseException, kind: str, tries: int
) -> None:
    trace = "".join(traceback.format_exception(exc)).strip()
    await DeadLetters(redis).add(
        job_id, record, trace if kind == "permanent" else repr(exc), kind, tries
    )
    log.error("job.failed", job=job_id, kind=kind, tries=tries, error=repr(exc))
