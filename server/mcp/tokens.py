"""MCP tokens: each bound to a person, an endpoint (agent: every tool; device: only
``check_safety``) and a source; stored in Redis as a SHA-256 digest only (the console and the
CLI manage them without importing the MCP endpoints)."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from redis.asyncio import Redis

from config import keys
from memory.identity import person_id
from memory.schema import PersonId

Endpoint = Literal["agent", "device"]
TOKEN_PREFIX = "hmcp_"
ENDPOINTS: tuple[Endpoint, ...] = ("agent", "device")
TOKEN_PREFIX = "hmcp_"


@dataclass(frozen=True, slots=True)
class McpIdentity:
    name: str
    person: PersonId
    source: str
    endpoint: Endpoint


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class McpTokens:
    """Tokens in Redis, stored only as SHA-256; the secret is shown once at creation."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def create(self, name: str, person: str, source: str, endpoint: Endpoint) -> str:
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint is one of {ENDPOINTS}")
        if not person.strip() or not source.strip():
            raise ValueError("person and source are required")
        person = person_id(person.strip())  # one person whatever the case (IdentityError)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        record = {"name": name, "person": person, "source": source, "endpoint": endpoint,
                  "created_at": time.time()}  # fmt: skip
        value = orjson.dumps(record).decode()
        await self.redis.hset(keys.MCP_TOKENS, _digest(token), value)  # type: ignore[misc]
        return token

    async def identity(self, token: str) -> McpIdentity | None:
        raw = await self.redis.hget(keys.MCP_TOKENS, _digest(token))  # type: ignore[misc]
        if raw is None:
            return None
        record = orjson.loads(raw)
        person = PersonId(str(record["person"]).lower())  # checked by create(); older: folded
        return McpIdentity(record["name"], person, record["source"], record["endpoint"])

    async def all(self) -> list[dict[str, Any]]:
        raw = await self.redis.hgetall(keys.MCP_TOKENS)  # type: ignore[misc]
        return [{"id": k.decode()[:12], **orjson.loads(v)} for k, v in raw.items()]

    async def revoke(self, token_id: str) -> bool:
        raw = await self.redis.hkeys(keys.MCP_TOKENS)  # type: ignore[misc]
        matches = [k for k in raw if k.decode().startswith(token_id) and len(token_id) >= 8]
        if len(matches) != 1:
            return False
        return bool(await self.redis.hdel(keys.MCP_TOKENS, matches[0]))  # type: ignore[misc]
