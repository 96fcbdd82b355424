"""person_map: which person (memory store) a device speaks for.

The person — not the MAC — is the isolation key of memory. The map lives in Redis and is read at
every connection, never cached in the process: an admin edit applies to the next connection of
that device on every server process, with no restart and no cache to flush (the original system
cached it and silently served stale values until someone cleared Redis by hand).

Policy for a device with no mapping: it is its own person, ``device-<mac without colons>``, so
two unmapped devices never share memories. Test devices mapped to ``bench`` share the bench
person and nothing else; real persons never see it, and it never sees them.
"""

from __future__ import annotations

import re

from redis.asyncio import Redis

from config import keys
from server.auth import MAC_PATTERN, normalise_mac

BENCH_PERSON = "bench"
PERSON_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class PersonMapError(ValueError):
    pass


def default_person(device_id: str) -> str:
    return f"device-{normalise_mac(device_id).replace(':', '')}"


def check_person(person: str) -> str:
    if not PERSON_PATTERN.match(person):
        raise PersonMapError(
            "person ids are 1-64 ASCII letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return person.lower()  # ids that differ only by case name one person


class PersonMap:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def resolve(self, device_id: str) -> str:
        """The person for a connecting device (one Redis read, every time)."""
        mapped = await self.redis.hget(keys.PERSON_MAP, normalise_mac(device_id))
        return mapped.decode() if mapped else default_person(device_id)

    async def map(self, device_id: str, person: str) -> str:
        device = normalise_mac(device_id)
        if not MAC_PATTERN.match(device):
            raise PersonMapError("device ids are MAC addresses like aa:bb:cc:dd:ee:ff")
        person = check_person(person)
        await self.redis.hset(keys.PERSON_MAP, device, person)
        from server.api.registry import Stores  # a mapped person is a memory API store

        await Stores(self.redis).create(person, person)
        return person

    async def speaker_of(self, person: str) -> str:
        """The speaker name a person's own words are stored under (default: the person id)."""
        name = await self.redis.hget(keys.PERSON_SPEAKERS, person)
        return name.decode() if name else person

    async def name_speaker(self, person: str, speaker: str) -> str:
        from server.api.names import registrable

        name = registrable(speaker)  # the API's rules: trimmed, NFC, ≤ 80, never 'me'
        await self.redis.hset(keys.PERSON_SPEAKERS, check_person(person), name)
        return name

    async def speakers(self) -> dict[str, str]:
        raw = await self.redis.hgetall(keys.PERSON_SPEAKERS)
        return {k.decode(): v.decode() for k, v in raw.items()}

    async def unmap(self, device_id: str) -> bool:
        return bool(await self.redis.hdel(keys.PERSON_MAP, normalise_mac(device_id)))

    async def all(self) -> dict[str, str]:
        raw = await self.redis.hgetall(keys.PERSON_MAP)
        return {k.decode(): v.decode() for k, v in raw.items()}
