"""Where a household's voiceprints live: one Redis hash per household (``keys.voices``), beside
person_map, read when needed and never cached in a process (an enrolment or removal applies to
the next utterance on every server process).

A household is the person a device speaks for (person_map); its members are persons of their
own, each with a speaker name. A member's record holds one unit-length voiceprint per enrolment
condition (``augment.CONDITIONS``) as float32 — about 4 KB of JSON, so a household stays far
under 1 MB (``MAX_MEMBERS`` caps it at 16 members, ~64 KB).
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, replace

import numpy as np
import orjson
from redis.asyncio import Redis

from config import keys
from memory.identity import person_id, registrable
from memory.schema import PersonId

MAX_MEMBERS = 16
HOUSEHOLD_BYTES_LIMIT = 1_000_000


class HouseholdFull(Exception):
    """The household already has ``MAX_MEMBERS`` enrolled voices."""

    def __init__(self, household: str) -> None:
        super().__init__(f"household {household} already has {MAX_MEMBERS} enrolled voices")
        self.household = household


@dataclass(frozen=True, slots=True)
class Voice:
    member: PersonId  # the member's own person (memory store)
    speaker: str  # the name the member's words are stored under
    prints: np.ndarray  # (conditions, dim) float32, unit rows
    enrolled_at: float
    # private: nothing of the member's store is read to another voice (not even their
    # constraints); shared (the default): their constraints are the household's too
    private: bool = False


def encode(voice: Voice) -> bytes:
    """The stored record of a voice (what ``size_bytes`` counts)."""
    return orjson.dumps({
        "speaker": voice.speaker,
        "shape": list(voice.prints.shape),
        "prints": base64.b64encode(voice.prints.astype("<f4").tobytes()).decode(),
        "enrolled_at": voice.enrolled_at,
        "private": voice.private,
    })  # fmt: skip


def _decode(member: str, raw: bytes) -> Voice:
    record = orjson.loads(raw)
    prints = np.frombuffer(base64.b64decode(record["prints"]), "<f4").reshape(record["shape"])
    return Voice(PersonId(member), str(record["speaker"]), prints, float(record["enrolled_at"]),
                 bool(record.get("private", False)))  # fmt: skip


class VoiceStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def voices(self, household: str) -> list[Voice]:
        """Every enrolled voice of the household (one Redis read)."""
        raw = await self.redis.hgetall(keys.voices(household))  # type: ignore[misc]
        return sorted((_decode(k.decode(), v) for k, v in raw.items()), key=lambda v: v.member)

    async def put(self, household: str, member: str, speaker: str, prints: np.ndarray) -> Voice:
        """Enrol or re-enrol ``member``: a re-enrolment replaces the voiceprint and nothing else
        (the member's memories live in their person's store, untouched)."""
        voice = Voice(person_id(member), registrable(speaker), prints.astype(np.float32),
                      time.time())  # fmt: skip
        key = keys.voices(household)
        before = await self.redis.hget(key, voice.member)  # type: ignore[misc]
        known = before is not None
        if known:  # a re-enrolment keeps the member's choice of privacy
            voice = replace(voice, private=_decode(voice.member, before).private)
        if not known and await self.redis.hlen(key) >= MAX_MEMBERS:  # type: ignore[misc]
            raise HouseholdFull(household)
        await self.redis.hset(key, voice.member, encode(voice))  # type: ignore[misc,arg-type]
        return voice

    async def set_private(self, household: str, member: str, private: bool) -> Voice | None:
        """Mark ``member`` private or shared; None when they are not enrolled."""
        key = keys.voices(household)
        raw = await self.redis.hget(key, person_id(member))  # type: ignore[misc]
        if raw is None:
            return None
        voice = replace(_decode(person_id(member), raw), private=private)
        await self.redis.hset(key, voice.member, encode(voice))  # type: ignore[misc,arg-type]
        return voice

    async def remove(self, household: str, member: str) -> bool:
        """Delete the member's voice data (their memories are the operator's separate choice)."""
        removed = await self.redis.hdel(keys.voices(household), person_id(member))  # type: ignore[misc]
        return bool(removed)

    async def households(self) -> list[str]:
        found = [k.decode() async for k in self.redis.scan_iter(match=keys.voices("*"))]
        return sorted(k.removeprefix(keys.voices("")) for k in found)

    async def size_bytes(self, household: str) -> int:
        """Bytes of voice data the household holds in Redis (field names and values)."""
        key = keys.voices(household)
        total = 0
        for member in await self.redis.hkeys(key):  # type: ignore[misc]
            total += len(member) + int(await self.redis.hstrlen(key, member))  # type: ignore[misc]
        return total
