"""Issue 20, critical: an approved MAC address alone is not enough. Approval is of the (Device-Id,
Client-Id) pair; the handshake checks the pair is still approved; a revoke closes open sockets.
Real Redis, real OTA over HTTP, real WebSocket handshakes on loopback."""

from __future__ import annotations

import asyncio
import time

import httpx
import orjson
import pytest
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.device_client import DeviceClient
from config import keys
from server.devices import DeviceRegistry
from tests.conftest import RunningHearth, RunningHttp
from tests.support.waiting import wait_until

MAC = "aa:bb:cc:dd:ee:42"
OWNER = {"Device-Id": MAC, "Client-Id": "owner-client", "User-Agent": "bread-compact-wifi/2.0.3"}


async def _ota(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, object]:
    answer: dict[str, object] = (
        await client.post("/xiaozhi/ota/", headers=headers, json={})
    ).json()
    return answer


async def _approved_owner(http_app: RunningHttp, client: httpx.AsyncClient) -> str:
    pending = await _ota(client, OWNER)
    code = pending["activation"]["code"]  # type: ignore[index]
    assert await http_app.services.devices.approve_code(code) is not None
    token = (await _ota(client, OWNER))["websocket"]["token"]  # type: ignore[index]
    return str(token)


async def test_a_known_mac_with_a_new_client_id_goes_through_activation_again(
    http_app: RunningHttp,
) -> None:
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        await _approved_owner(http_app, client)
        stranger = await _ota(client, {**OWNER, "Client-Id": "attacker-random-uuid"})
        waiting = await client.post(
            "/xiaozhi/ota/activate", headers={**OWNER, "Client-Id": "attacker-random-uuid"}
        )
    assert "token" not in stranger["websocket"]  # type: ignore[operator]
    assert "activation" in stranger
    assert waiting.status_code == 202


async def test_a_valid_token_for_an_unapproved_pair_is_refused_at_the_handshake(
    hearth: RunningHearth,
) -> None:
    device = hearth.device(MAC, approved=False)  # signed with the server's key, never approved
    with pytest.raises(InvalidStatus) as refused:
        await device.connect()
    assert refused.value.response.status_code == 401
    assert b"not approved" in refused.value.response.body


async def test_revoke_refuses_the_next_connection_and_closes_the_open_one(
    hearth: RunningHearth, redis: Redis
) -> None:
    device = hearth.device(MAC)
    await device.connect()
    assert hearth.server.approvals is not None
    watcher = asyncio.create_task(
        hearth.server.approvals.watch_revocations(hearth.server.close_revoked)
    )
    try:
        await wait_until(lambda: _subscribed(redis), within_s=5)
        revoked = await DeviceRegistry(redis).revoke(MAC)
        assert [(a.device_id, a.client_id) for a in revoked] == [(MAC, device.client_id)]
        assert device.ws is not None
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(5):
                while True:
                    await device.recv_json()
        assert device.ws.close_code == 1008
        again = DeviceClient(device.url, MAC, device.client_id, device.token)
        with pytest.raises(InvalidStatus) as refused:
            await again.connect()
        assert refused.value.response.status_code == 401
    finally:
        watcher.cancel()


async def _subscribed(redis: Redis) -> bool:
    counts = await redis.pubsub_numsub(keys.DEVICES_REVOKED)
    return bool(counts and counts[0][1])


async def test_an_approval_from_before_pairs_still_approves_its_own_client_only(
    redis: Redis,
) -> None:
    registry = DeviceRegistry(redis)
    old = orjson.dumps({"client_id": "old-client", "approved_at": time.time()})
    await redis.hset(keys.APPROVED_DEVICES, MAC, old)
    assert await registry.is_approved(MAC, "old-client")
    assert not await registry.is_approved(MAC, "new-client")
    assert [(a.device_id, a.client_id) for a in await registry.approved()] == [(MAC, "old-client")]
    await registry.revoke(MAC, "new-client")  # not its client: the old approval stays
    assert await registry.is_approved(MAC, "old-client")
    await registry.revoke(MAC)
    assert not await registry.is_approved(MAC, "old-client")


async def test_a_dead_redis_refuses_with_503_and_serves_nobody_unchecked(
    hearth: RunningHearth,
) -> None:
    device = hearth.device(MAC)
    assert hearth.server.approvals is not None
    real = hearth.server.approvals.redis
    hearth.server.approvals.redis = Redis.from_url("redis://127.0.0.1:1/0")  # nothing listens
    try:
        with pytest.raises(InvalidStatus) as refused:
            await device.connect()
        assert refused.value.response.status_code == 503
    finally:
        hearth.server.approvals.redis = real
    await device.connect()  # Redis back: served


async def test_activation_codes_running_out_is_a_503_not_a_spin(
    http_app: RunningHttp, monkeypatch: pytest.MonkeyPatch
) -> None:
    import secrets

    from server import devices

    monkeypatch.setattr(secrets, "randbelow", lambda n: 424242)  # every try: the same code
    registry = http_app.services.devices
    assert await registry.pending_code("aa:bb:cc:dd:ee:51", "first") == "424242"
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        busy = await client.post("/xiaozhi/ota/", headers={**OWNER, "Client-Id": "second"})
    assert busy.status_code == 503 and "no free activation code" in busy.json()["message"]
    assert devices.CODE_TRIES == 20
