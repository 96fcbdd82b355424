"""Device enrollment: which (device, client) pairs may receive a token and connect.

Stock firmware supports an activation step: when the OTA answer carries ``activation``, the
device shows and speaks a 6-digit code and polls ``/xiaozhi/ota/activate``. With
``auth.enrollment: approve`` an unknown device gets such a code, and an operator approves it with
``hearth device approve CODE``; only then does OTA hand out a token. What is approved is the
pair (Device-Id, Client-Id): a MAC address is visible to anyone on the LAN, so the same MAC with
a new Client-Id goes through activation again. The device server checks at every handshake that
the pair is still approved, and ``revoke`` (CLI, console) takes effect on the next connection and
closes the open ones (``watch_revocations``). Nothing is trusted by source address.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson
import structlog
from redis.asyncio import Redis

from config import keys

log = structlog.get_logger(__name__)
OnRevoke = Callable[[str, str | None], Awaitable[int]]
CODE_TRIES = 20


class ActivationBusy(Exception):
    """Every code tried was taken (a flood of pending activations): try again later (503)."""


@dataclass(frozen=True, slots=True)
class Approval:
    device_id: str
    client_id: str
    approved_at: float


def pair(device_id: str, client_id: str) -> str:
    return f"{device_id}|{client_id}"


class DeviceRegistry:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def is_approved(self, device_id: str, client_id: str) -> bool:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hexists(keys.APPROVED_DEVICES, pair(device_id, client_id))
        pipe.hget(keys.APPROVED_DEVICES, device_id)  # an approval from before pairs
        exact, legacy = await pipe.execute()
        return bool(exact) or (legacy is not None and _client_of(legacy) == client_id)

    async def approve(self, device_id: str, client_id: str) -> None:
        record = orjson.dumps({"client_id": client_id, "approved_at": time.time()}).decode()
        key = pair(device_id, client_id)
        await self.redis.hset(keys.APPROVED_DEVICES, key, record)
        code = await self.redis.get(keys.activation_device(key))
        if code:
            await self.redis.delete(
                keys.activation_code(code.decode()), keys.activation_device(key)
            )

    async def revoke(self, device_id: str, client_id: str | None = None) -> list[Approval]:
        """Withdraw the device's approvals (every client id, or one); open connections of what
        was revoked are closed by the running server. Returns what was revoked."""
        revoked = [
            a
            for a in await self.approved()
            if a.device_id == device_id and client_id in (None, a.client_id)
        ]
        fields = [pair(a.device_id, a.client_id) for a in revoked] + [device_id]
        legacy = await self.redis.hget(keys.APPROVED_DEVICES, device_id)
        if legacy is not None and client_id not in (None, _client_of(legacy)):
            fields.remove(device_id)  # the old record approves another client: keep it
        if fields:
            await self.redis.hdel(keys.APPROVED_DEVICES, *fields)
        message = orjson.dumps({"device": device_id, "client": client_id})
        await self.redis.publish(keys.DEVICES_REVOKED, message)
        log.info("device.revoked", device=device_id, client=client_id, approvals=len(revoked))
        return revoked

    async def approved(self) -> list[Approval]:
        raw = await self.redis.hgetall(keys.APPROVED_DEVICES)
        found = []
        for field, value in raw.items():
            record = orjson.loads(value)
            device = field.decode().partition("|")[0]
            client = str(record.get("client_id", ""))
            found.append(Approval(device, client, float(record.get("approved_at", 0))))
        return sorted(found, key=lambda a: (a.device_id, a.client_id))

    async def pending_code(self, device_id: str, client_id: str) -> str:
        """The pair's activation code, created on first request and stable until approved."""
        key = pair(device_id, client_id)
        existing = await self.redis.get(keys.activation_device(key))
        if existing:
            return str(existing.decode())
        for _ in range(CODE_TRIES):  # bounded: a flood of pending pairs cannot spin us forever
            code = f"{secrets.randbelow(1_000_000):06d}"
            claimed = await self.redis.set(
                keys.activation_code(code), key, nx=True, ex=keys.ACTIVATION_TTL_S
            )
            if claimed:
                await self.redis.set(keys.activation_device(key), code, ex=keys.ACTIVATION_TTL_S)
                return code
        raise ActivationBusy("no free activation code: too many devices are waiting")

    async def approve_code(self, code: str) -> Approval | None:
        """Approve the pair waiting with ``code``; None if no such code."""
        raw = await self.redis.get(keys.activation_code(code.strip()))
        if raw is None:
            return None
        device_id, _, client_id = raw.decode().partition("|")
        await self.approve(device_id, client_id)
        return Approval(device_id, client_id, time.time())

    async def watch_revocations(self, on_revoke: OnRevoke) -> None:
        """Until cancelled: every revoke published by any process calls ``on_revoke(device,
        client or None)`` (the device server closes those connections)."""
        pubsub = self.redis.pubsub()
        await pubsub.subscribe(keys.DEVICES_REVOKED)
        try:
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                event = orjson.loads(message["data"])
                closed = await on_revoke(str(event["device"]), event.get("client"))
                log.info("device.revocation_applied", closed=closed, **event)
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]


def _client_of(record: bytes) -> str:
    return str(orjson.loads(record).get("client_id", ""))
