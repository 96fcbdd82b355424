"""The session job, one contract for everyone who enqueues it (the device server's session-end
hook, ``hearth jobs retry``) and the worker that runs it: its function name, its record as one
pydantic model (validated before the job does anything), and ``enqueue_session``."""

from __future__ import annotations

import datetime as dt
import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from redis.asyncio import Redis

from config.keys import QUEUE
from workers.codec import job_pool

REMEMBER_SESSION = "remember_session"


class Said(BaseModel):
    """One utterance, the one shape a transcript has from the device session to the worker: who
    said it (``speaker``: the person's speaker name, ``me`` for the assistant's own words; set
    when the session is handed on), what, when, whether it was cut off, and the household member
    whose words (or the answer to whose words) it is (``person``: None for the device's person)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    role: Literal["user", "assistant", "system"]
    text: str
    speaker: str | None = None
    at: float | None = None
    interrupted: bool = False
    person: str | None = None


class SessionJob(BaseModel):
    """A session's transcript as the write path receives it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    session_id: str = Field(min_length=1)
    person: str = Field(min_length=1)
    device_id: str = ""
    client_id: str = ""
    source: str = "device"
    started_at: float | None = None
    ended_at: float | None = None
    end_reason: str = ""
    transcript: list[Said]

    @property
    def ended(self) -> float:
        return self.ended_at or time.time()


# arq forgets a queued job whose key expires before a worker starts it (default: a day) — with
# Hearth stopped for a long weekend, a conversation would vanish. Kept for 90 days instead.
JOB_EXPIRES = dt.timedelta(days=90)


async def enqueue_session(arq: Redis, job: SessionJob, job_id: str | None = None) -> bool:
    """One job per session (``job_id`` = the session id unless given, e.g. a replay's): a
    repeated enqueue of the same id is a no-op. Returns whether a new job was queued."""
    queued = await job_pool(arq).enqueue_job(
        REMEMBER_SESSION, job.model_dump(mode="json"), _job_id=job_id or job.session_id,
        _queue_name=QUEUE, _expires=JOB_EXPIRES,
    )  # fmt: skip
    return queued is not None
