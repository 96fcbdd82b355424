"""The device server's session-ended hook: hands a transcript to the worker through arq, as the
job contract says (``workers.contract``).

If Redis cannot take the job — down, refusing, or hung past ``ENQUEUE_TIMEOUT_S`` — the
transcript is spooled to disk (0600, fsynced, renamed into place) and enqueued later by
``drain_spool`` — a disconnect never loses a conversation. The drain keeps going past a file it
cannot read (moved to ``quarantine/``, logged, kept for an operator) and past a record Redis
refuses (tried again next round); it stops a round only when Redis itself is unreachable.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson
import structlog
from arq.connections import ArqRedis
from pydantic import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memory.identity import ME
from server.device.session import SessionRecord
from server.persons import PersonMap
from workers.contract import SessionJob, enqueue_session

log = structlog.get_logger(__name__)
SPOOL_RETRY_S = 5.0
ENQUEUE_TIMEOUT_S = 5.0  # a hung (not dead) Redis must not hold the hook: spool instead
QUARANTINE = "quarantine"
_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError)


SOURCE = "device"


def session_job(record: SessionRecord, speaker: str | None = None) -> SessionJob:
    """The job for a session: each utterance carries its speaker — the person's speaker name for
    the user's words, ``me`` for the assistant's own."""
    user = speaker or record.person
    said = [
        u.model_copy(update={"speaker": ME if u.role == "assistant" else user})
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
            async with asyncio.timeout(ENQUEUE_TIMEOUT_S):
                speaker = await PersonMap(self.arq).speaker_of(record.person)
        except (RedisError, OSError, TimeoutError):
            speaker = None  # the worker falls back to the person id
        payload = record_payload(record, speaker)
        try:
            await self._enqueue(payload)
        except (RedisError, OSError, TimeoutError) as exc:
            path = await asyncio.to_thread(self._spool, payload)
            log.error("session.spooled", session=record.session_id, path=str(path),
                      error=repr(exc))  # fmt: skip

    async def _enqueue(self, payload: dict[str, Any]) -> None:
        job = SessionJob.model_validate(payload)
        async with asyncio.timeout(ENQUEUE_TIMEOUT_S):
            new = await enqueue_session(self.arq, job)
        log.info("session.enqueued", session=job.session_id, new=new)

    def _spool(self, payload: dict[str, Any]) -> Path:
        """Durable before it returns: a private file, flushed to disk, renamed into place."""
        self.spool_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.spool_dir / f"{payload['session_id']}.json"
        partial = path.with_suffix(".tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(orjson.dumps(payload))
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(path)
        directory = os.open(self.spool_dir, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a power cut
        finally:
            os.close(directory)
        return path

    def spooled(self) -> list[Path]:
        return sorted(self.spool_dir.glob("*.json")) if self.spool_dir.exists() else []

    async def drain_spool(self) -> int:
        """Enqueue every spooled transcript. A file that is not a session record goes to
        quarantine; a record Redis refuses stays for the next round; an unreachable Redis ends
        the round. Returns how many were enqueued."""
        done = 0
        for path in self.spooled():
            try:
                payload = orjson.loads(path.read_bytes())
                SessionJob.model_validate(payload)
            except (orjson.JSONDecodeError, ValidationError, OSError) as exc:
                self._quarantine(path, exc)
                continue
            try:
                await self._enqueue(payload)
            except _UNREACHABLE as exc:
                log.warning("spool.redis_unavailable", error=repr(exc), waiting=len(self.spooled()))
                break
            except RedisError as exc:  # Redis answered, but refused this one: keep it, go on
                log.error("spool.record_refused", path=str(path), error=repr(exc))
                continue
            path.unlink()
            done += 1
        return done

    def _quarantine(self, path: Path, exc: Exception) -> None:
        folder = self.spool_dir / QUARANTINE
        folder.mkdir(mode=0o700, exist_ok=True)
        path.replace(folder / path.name)
        log.error("spool.quarantined", path=str(folder / path.name), error=repr(exc)[:300])

    async def drain_forever(self) -> None:
        """Every SPOOL_RETRY_S, whatever a round ran into (it is logged, never the end)."""
        while True:
            try:
                await self.drain_spool()
            except Exception:
                log.exception("spool.drain_failed")
            await asyncio.sleep(SPOOL_RETRY_S)
