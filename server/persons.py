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

from redis.asyncio import Redis

from config import keys
from memory.identity import IdentityError, person_id, registrable
from memory.registry import Stores
from memory.schema import PersonId
from server.auth import MAC_PATTERN, normalise_mac

BENCH_PERSON = "bench"


class PersonMapError(IdentityError):
    """A device id that is not a MAC address (person ids and speaker names raise the
    IdentityError of their rule)."""


def default_person(device_id: str) -> PersonId:
    return PersonId(f"device-{normalise_mac(device_id).replace(':', '')}")


class PersonMap:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def resolve(self, device_id: str) -> PersonId:
        """The person for a connecting device (one Redis read, every time)."""
        mapped = await self.redis.hget(keys.PERSON_MAP, normalise_mac(device_id))
        return PersonId(mapped.decode()) if mapped else default_person(device_id)

    async def map(self, device_id: str, person: str) -> str:
        device = normalise_mac(device_id)
        if not MAC_PATTERN.match(device):
            raise PersonMapError("device ids are MAC addresses like aa:bb:cc:dd:ee:ff")
        person = person_id(person)
        await self.redis.hset(keys.PERSON_MAP, device, person)
        await Stores(self.redis).create(person, person)  # a mapped person is a memory API store
        return person

    async def speaker_of(self, person: str) -> str:
        """The speaker name a person's own words are stored under (default: the person id)."""
        name = await self.redis.hget(keys.PERSON_SPEAKERS, person)
        return name.decode() if name else person

    async def name_speaker(self, person: str, speaker: str) -> str:
        name = registrable(speaker)  # trimmed, NFC, ≤ 80, never 'me'
        await self.redis.hset(keys.PERSON_SPEAKERS, person_id(person), name)
        return name

    async def speakers(self) -> dict[str, str]:
        raw = await self.redis.hgetall(keys.PERSON_SPEAKERS)
        return {k.decode(): v.decode() for k, v in raw.items()}

    async def unmap(self, device_id: str) -> bool:
        return bool(await self.redis.hdel(keys.PERSON_MAP, normalise_mac(device_id)))

    async def all(self) -> dict[str, str]:
        raw = await self.redis.hgetall(keys.PERSON_MAP)
        return {k.decode(): v.decode() for k, v in raw.items()}
