"""Forgetting a person completely: not only the memories, but every other place Hearth keeps
the words they said — the archived transcripts, each of those sessions' write-path checkpoints
(the extracted facts) and turn traces, the conflict log, the retag and cue sets (the cues
themselves go with the memories), the dead letters of their jobs, and the photos of their image
memories. ``forget all`` and ``DELETE /collection``
run this, under the person's store lock.

A session of that person still queued for the worker (not yet archived) is not reached here;
its job writes its memories when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from redis.asyncio import Redis

from config import keys
from memory.photos import PhotoFiles
from memory.schema import PersonId
from memory.store import MemoryStore, store_call


@dataclass(frozen=True, slots=True)
class Forgotten:
    memories: int
    sessions: int
    dead_letters: int


async def forget_person(
    redis: Redis, store: MemoryStore, person: PersonId, photos: PhotoFiles | None = None
) -> Forgotten:
    memories = await store_call(store, store.count, person)
    sessions = {
        s for s in map(_session_of, await redis.lrange(keys.transcripts(person), 0, -1)) if s
    }
    letters = []
    for job_id, raw in (await redis.hgetall(keys.FAILED_JOBS)).items():
        record = _json(raw).get("record")
        if isinstance(record, dict) and record.get("person") == person:
            letters.append(job_id)
            if record.get("session_id"):
                sessions.add(str(record["session_id"]))
    await store_call(store, store.delete_person, person)
    if photos is not None:
        photos.delete_person(person)
    pipe = redis.pipeline(transaction=True)
    pipe.delete(
        keys.transcripts(person), keys.conflicts(person), keys.retag(person), keys.recue(person)
    )
    for session in sessions:
        pipe.delete(keys.write_checkpoint(session), keys.turn_traces(session))
    if letters:
        pipe.hdel(keys.FAILED_JOBS, *letters)
    await pipe.execute()
    return Forgotten(memories, len(sessions), len(letters))


def _json(raw: bytes) -> dict[str, object]:
    try:
        found = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def _session_of(raw: bytes) -> str:
    return str(_json(raw).get("session_id", ""))
