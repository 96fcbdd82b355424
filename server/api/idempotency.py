"""Idempotency-Key (seed 002): make repeating THIS EXACT write safe, across server processes.

State per (API key, Idempotency-Key) lives in Redis for ``ttl`` seconds:

- ``running``: the first attempt holds a lease. A repeat answers 409 with ``retry_after_ms``.
  A lease that ran out means the first attempt never answered (its process died): the outcome
  is unknown from then on.
- ``done``: the first 2xx (status + body), replayed with ``Idempotent-Replayed: true``.
- ``unknown``: the engine failed part-way, or the attempt vanished; a repeat answers 409
  *without* ``retry_after_ms`` rather than risk storing twice.

A failed attempt whose failure is known (nothing was written) is not kept: the key is released
and the call can be sent again at once. The same key with a different body answers 422.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from redis.asyncio import Redis

from config import keys
from server.api.errors import ApiError, ErrorType

MAX_KEY_CHARS = 255
REPLAYED_HEADER = "Idempotent-Replayed"


@dataclass
class WriteTracker:
    """Handlers call ``begin()`` right before they change anything: an exception after that
    point leaves the outcome unknown, one before it is a clean failure."""

    started: bool = False

    def begin(self) -> None:
        self.started = True


@dataclass(frozen=True, slots=True)
class Outcome:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def fingerprint(method: str, path: str, body: bytes) -> str:
    """The request a key stands for: method, path and the body's meaning (key order ignored)."""
    try:
        canonical = orjson.dumps(orjson.loads(body or b"null"), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        canonical = body
    return hashlib.sha256(method.encode() + b"\0" + path.encode() + b"\0" + canonical).hexdigest()


class Idempotency:
    def __init__(self, redis: Redis, ttl_s: int, lease_s: float) -> None:
        self.redis = redis
        self.ttl_s = ttl_s
        self.lease_s = lease_s

    async def run(
        self,
        scope: str,
        key: str,
        print_: str,
        attempt: Callable[[WriteTracker], Awaitable[Outcome]],
    ) -> tuple[Outcome, bool]:
        """(outcome, replayed). Raises ``ApiError`` for 409/422 and for the attempt's errors."""
        if not key or len(key) > MAX_KEY_CHARS:
            raise ApiError(
                400,
                ErrorType.INVALID_REQUEST,
                f"Idempotency-Key must be 1-{MAX_KEY_CHARS} characters.",
            )
        slot = keys.idempotency(scope, key)
        running = {
            "state": "running",
            "fingerprint": print_,
            "lease_until": time.time() + self.lease_s,
        }
        if not await self.redis.set(slot, orjson.dumps(running), nx=True, ex=self.ttl_s):
            return self._existing(await self.redis.get(slot), print_), True
        tracker = WriteTracker()
        try:
            outcome = await attempt(tracker)
        except BaseException as exc:
            known = not tracker.started or (isinstance(exc, ApiError) and exc.status < 500)
            if known:
                await self.redis.delete(slot)
            else:
                await self._keep(slot, {"state": "unknown", "fingerprint": print_})
            raise
        if 200 <= outcome.status < 300:
            await self._keep(
                slot,
                {
                    "state": "done",
                    "fingerprint": print_,
                    "status": outcome.status,
                    "body": outcome.body,
                },
            )
        else:
            await self.redis.delete(slot)
        return outcome, False

    async def settled(self, scope: str, key: str, print_: str) -> Outcome | None:
        """What a repeat gets before anything else is checked: the first answer (replayed),
        409 / 422 as ``run`` would raise them, or None when this key has no record yet. Routes
        call this first, so a repeat of a delete replays its 2xx instead of answering 404 for
        what the first request deleted."""
        if not key or len(key) > MAX_KEY_CHARS:
            return None  # ``run`` gives the 400
        raw = await self.redis.get(keys.idempotency(scope, key))
        return None if raw is None else self._existing(raw, print_)

    async def _keep(self, slot: str, record: dict[str, Any]) -> None:
        await self.redis.set(slot, orjson.dumps(record), keepttl=True)

    def _existing(self, raw: bytes | None, print_: str) -> Outcome:
        if raw is None:  # expired between our SET and GET: treat as still running
            raise _in_progress(100)
        record = orjson.loads(raw)
        if record["fingerprint"] != print_:
            raise ApiError(
                422,
                ErrorType.INVALID_REQUEST,
                "This Idempotency-Key was already used with a different request body. "
                "Derive a new key for a different write.",
            )
        if record["state"] == "done":
            return Outcome(int(record["status"]), record["body"])
        if record["state"] == "running" and float(record["lease_until"]) > time.time():
            remaining = float(record["lease_until"]) - time.time()
            raise _in_progress(min(1000, max(50, int(remaining * 1000))))
        raise ApiError(
            409,
            ErrorType.CONFLICT,
            "The first request with this Idempotency-Key did not complete, so whether it was "
            "stored is not known. It will not be repeated; check the store before writing again.",
        )


def _in_progress(retry_after_ms: int) -> ApiError:
    return ApiError(
        409,
        ErrorType.CONFLICT,
        "A request with this Idempotency-Key is still running. Wait, then send it again.",
        retry_after_ms=retry_after_ms,
    )
