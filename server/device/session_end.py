"""The device server's session-ended hook: hands a transcript to the worker through arq, as the
job contract says (``workers.contract``).

If Redis cannot take the job, the transcript is spooled to disk and enqueued later by
``drain_spool`` — a disconnect never loses a conversation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import structlog
from arq.connections import ArqRedis
from redis.exceptions import RedisError

from memory.identity import ME
from server.device.session import SessionRecord
from server.persons import PersonMap
from workers.contract import Said, SessionJob, enqueue_session

log = structlog.get_logger(__name__)
SPOOL_RETRY_S = 5.0


SOURCE = "device"


def session_job(record: SessionRecord, speaker: str | None = None) -> SessionJob:
    """The job for a session: each utterance carries its speaker — the person's speaker name for
    the user's words, ``me`` for the assistant's own."""
    user = speaker or record.person
    said = [
        Said.model_validate({**u.as_json(), "speaker": ME if u.role == "assistant" else user})
        for u in record.transcript
    ]
    return SessionJob(
        session_id=record.session_id, person=record.person, device_id=record.device_id,
        client_id=record.client_id, source=SOURCE, started_at=record.started_at,
        ended_at=record.ended_at, end_reason=record.end_reason, transcript=said,
    )  # fmt: skip


def record_payload(record: SessionRecord, speaker: str | None = None) -> dict[str, Any]:
    """The job's record as it travels (JSON)."""
    return session_job(record, speaker).model_dump(mode="json")


class EnqueueOnSessionEnd:
    """One job per session, ``_job_id`` = session id, so a repeated enqueue is a no-op."""

    def __init__(self, arq: ArqRedis, spool_dir: Path) -> None:
        self.arq = arq
        self.spool_dir = spool_dir

    async def session_ended(self, record: SessionRecord) -> None:
        if not record.transcript:
            return
        try:
            speaker = await PersonMap(self.arq).speaker_of(record.person)
        except (RedisError, OSError):
            speaker = None  # the worker falls back to the person id
        payload = record_payload(record, speaker)
        try:
            await self._enqueue(payload)
        except (RedisError, OSError) as exc:
            path = self._spool(payload)
            log.error("session.spooled", session=record.session_id, path=str(path), error=str(exc))

    async def _enqueue(self, payload: dict[str, Any]) -> None:
        job = SessionJob.model_validate(payload)
        new = await enqueue_session(self.arq, job)
        log.info("session.enqueued", session=job.session_id, new=new)

    def _spool(self, payload: dict[str, Any]) -> Path:
        self.spool_dir.mkdir(parents=True, exist_ok=True)
        path = self.spool_dir / f"{payload['session_id']}.json"
        partial = path.with_suffix(".tmp")
        partial.write_bytes(orjson.dumps(payload))
        partial.replace(path)
        return path

    def spooled(self) -> list[Path]:
        return sorted(self.spool_dir.glob("*.json")) if self.spool_dir.exists() else []

    async def drain_spool(self) -> int:
        """Enqueue every spooled transcript; stop at the first Redis failure. Returns count."""
        done = 0
        for path in self.spooled():
            payload = orjson.loads(path.read_bytes())
            try:
                await self._enqueue(payload)
            except (RedisError, OSError) as exc:
                log.warning("spool.redis_unavailable", error=str(exc), waiting=len(self.spooled()))
                break
            path.unlink()
            done += 1
        return done

    async def drain_forever(self) -> None:
        while True:
            await self.drain_spool()
            await asyncio.sleep(SPOOL_RETRY_S)
