"""What the API knows besides memories, all in Redis (shared by every server process):
stores, their registered speakers, and API keys bound to stores."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

import orjson
from redis.asyncio import Redis

from config import keys
from memory.identity import DEFAULT_STORE

ALL_STORES = "*"
KEY_PREFIX = "hk_"


def iso_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class StoreInfo:
    id: str
    created_at: str


class Stores:
    """Explicit stores: the built-in ``default`` plus those created through the API or mapped
    as persons (``hearth persons map``). A store id is the memory person it reads and writes."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def get(self, store: str) -> StoreInfo | None:
        if store == DEFAULT_STORE:
            return StoreInfo(DEFAULT_STORE, "1970-01-01T00:00:00Z")
        raw = await self.redis.hget(keys.STORES, store)
        return None if raw is None else _store(raw)

    async def create(self, store: str, as_given: str) -> tuple[StoreInfo, bool]:
        info = StoreInfo(as_given, iso_now())
        created = await self.redis.hsetnx(
            keys.STORES,
            store,
            orjson.dumps({"id": info.id, "created_at": info.created_at}).decode(),
        )
        if not created:
            existing = await self.get(store)
            assert existing is not None
            return existing, False
        return info, True

    async def delete(self, store: str) -> bool:
        removed = bool(await self.redis.hdel(keys.STORES, store))
        await self.redis.delete(keys.speakers(store))
        return removed

    async def all(self) -> list[StoreInfo]:
        raw = await self.redis.hgetall(keys.STORES)
        found = [StoreInfo(DEFAULT_STORE, "1970-01-01T00:00:00Z"), *map(_store, raw.values())]
        return sorted(found, key=lambda s: s.id.lower())


def _store(raw: bytes) -> StoreInfo:
    data = orjson.loads(raw)
    return StoreInfo(str(data["id"]), str(data["created_at"]))


class Speakers:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def registered(self, store: str, name: str) -> bool:
        return bool(await self.redis.hexists(keys.speakers(store), name))

    async def register(self, store: str, name: str, limit: int) -> tuple[str, bool] | None:
        """(created_at, newly registered); None when the store is at its limit. Atomic: two
        concurrent registrations can never both take the last place."""
        created = iso_now()
        result = await self.redis.eval(
            _REGISTER, 1, keys.speakers(store), name, created, str(limit)
        )
        if result == 0:
            return None
        if result == 1:
            return created, True
        existing = await self.redis.hget(keys.speakers(store), name)
        return (existing.decode() if existing else created), False

    async def remove(self, store: str, name: str) -> bool:
        return bool(await self.redis.hdel(keys.speakers(store), name))

    async def all(self, store: str) -> dict[str, str]:
        raw = await self.redis.hgetall(keys.speakers(store))
        return {k.decode(): v.decode() for k, v in raw.items()}


# 2 = already registered, 1 = registered now, 0 = at the limit
_REGISTER = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 2 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str  # sha256 prefix: names the key in logs and idempotency scopes, never the secret
    name: str
    stores: tuple[str, ...]
    created_at: str

    def may_use(self, store: str) -> bool:
        return ALL_STORES in self.stores or store in self.stores

    @property
    def workspace(self) -> bool:
        """A key for every store: it may also create, list and delete stores."""
        return ALL_STORES in self.stores


KEY_ID_MIN = 8  # characters of a key id (its 16 are listed) needed to revoke it


def _api_key(digest: str, raw: bytes) -> ApiKey:
    data = orjson.loads(raw)
    return ApiKey(digest[:16], str(data["name"]), tuple(data["stores"]), str(data["created_at"]))


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKeys:
    """Keys are stored hashed; the secret is shown once, at creation."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def create(self, name: str, stores: list[str]) -> tuple[str, ApiKey]:
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        digest = _digest(secret)
        key = ApiKey(digest[:16], name, tuple(stores), iso_now())
        record = {"name": name, "stores": stores, "created_at": key.created_at}
        await self.redis.hset(keys.API_KEYS, digest, orjson.dumps(record).decode())
        return secret, key

    async def lookup(self, secret: str) -> ApiKey | None:
        if not secret:
            return None
        digest = _digest(secret)
        raw = await self.redis.hget(keys.API_KEYS, digest)
        return None if raw is None else _api_key(digest, raw)

    async def all(self) -> list[ApiKey]:
        raw = await self.redis.hgetall(keys.API_KEYS)
        found = [_api_key(digest.decode(), value) for digest, value in raw.items()]
        return sorted(found, key=lambda k: k.created_at)

    async def revoke(self, key_id: str) -> bool:
        """Revoke the one key whose id starts with ``key_id`` (at least KEY_ID_MIN characters:
        ``revoke ""`` must not match every key); an ambiguous prefix revokes nothing."""
        key_id = key_id.strip()
        if len(key_id) < KEY_ID_MIN:
            raise ValueError(f"give at least {KEY_ID_MIN} characters of the key id")
        matches = [
            d for d in await self.redis.hkeys(keys.API_KEYS) if d.decode().startswith(key_id)
        ]
        if len(matches) != 1:
            return False
        return bool(await self.redis.hdel(keys.API_KEYS, matches[0]))
