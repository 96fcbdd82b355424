"""Device enrollment: which devices may receive a token from the OTA endpoint.

Stock firmware supports an activation step: when the OTA answer carries ``activation``, the
device shows and speaks a 6-digit code and polls ``/xiaozhi/ota/activate``. With
``auth.enrollment: approve`` an unknown device gets such a code, and an operator approves it with
``hearth device approve CODE``; only then does OTA hand out a token. Nothing is trusted by
source address.
"""

from __future__ import annotations

import secrets
import time

import orjson
from redis.asyncio import Redis

from config import keys


class DeviceRegistry:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def is_approved(self, device_id: str) -> bool:
        return bool(await self.redis.hexists(keys.APPROVED_DEVICES, device_id))

    async def approve(self, device_id: str, client_id: str) -> None:
        record = orjson.dumps({"client_id": client_id, "approved_at": time.time()}).decode()
        await self.redis.hset(keys.APPROVED_DEVICES, device_id, record)
        code = await self.redis.get(keys.activation_device(device_id))
        if code:
            await self.redis.delete(
                keys.activation_code(code.decode()), keys.activation_device(device_id)
            )

    async def revoke(self, device_id: str) -> bool:
        return bool(await self.redis.hdel(keys.APPROVED_DEVICES, device_id))

    async def approved(self) -> dict[str, dict[str, object]]:
        raw = await self.redis.hgetall(keys.APPROVED_DEVICES)
        return {k.decode(): orjson.loads(v) for k, v in raw.items()}

    async def pending_code(self, device_id: str, client_id: str) -> str:
        """The device's activation code, created on first request and stable until approved."""
        existing = await self.redis.get(keys.activation_device(device_id))
        if existing:
            return str(existing.decode())
        while True:
            code = f"{secrets.randbelow(1_000_000):06d}"
            claimed = await self.redis.set(
                keys.activation_code(code),
                f"{device_id}|{client_id}",
                nx=True,
                ex=keys.ACTIVATION_TTL_S,
            )
            if claimed:
                await self.redis.set(
                    keys.activation_device(device_id), code, ex=keys.ACTIVATION_TTL_S
                )
                return code

    async def approve_code(self, code: str) -> str | None:
        """Approve the device waiting with ``code``; returns its id, or None if no such code."""
        raw = await self.redis.get(keys.activation_code(code.strip()))
        if raw is None:
            return None
        device_id, _, client_id = raw.decode().partition("|")
        await self.approve(device_id, client_id)
        return str(device_id)
