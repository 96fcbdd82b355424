"""Approve a (device, client) pair the way an operator's ``hearth device approve`` would, from
code that mints its own tokens (benches, tests): under ``auth.enrollment: approve`` the device
server refuses a valid token whose pair is not approved."""

from __future__ import annotations

import time

import orjson
import redis

from config import keys
from server.devices import pair


def approve_pair(redis_url: str, device_id: str, client_id: str) -> None:
    record = orjson.dumps({"client_id": client_id, "approved_at": time.time()})
    with redis.Redis.from_url(redis_url) as sync:
        sync.hset(keys.APPROVED_DEVICES, pair(device_id, client_id), record)
