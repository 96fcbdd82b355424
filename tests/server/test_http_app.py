"""OTA, activation, health and metrics over real HTTP on loopback."""

from __future__ import annotations

import time

import httpx
import pytest
from redis.asyncio import Redis

from config import keys
from server.auth import DeviceCredentials
from tests.conftest import RunningHearth, RunningHttp

MAC = "aa:bb:cc:dd:ee:01"
HEADERS = {"Device-Id": MAC, "Client-Id": "client-1", "User-Agent": "bread-compact-wifi/2.0.3"}


async def test_unknown_device_gets_an_activation_code_not_a_token(http_app: RunningHttp) -> None:
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        first = (await client.post("/xiaozhi/ota/", headers=HEADERS, json={})).json()
        again = (await client.post("/xiaozhi/ota/", headers=HEADERS, json={})).json()
        waiting = await client.post("/xiaozhi/ota/activate", headers=HEADERS, json={})
    assert "token" not in first["websocket"]
    code = first["activation"]["code"]
    assert len(code) == 6 and code.isdigit()
    assert again["activation"]["code"] == code  # stable until approved
    assert waiting.status_code == 202
    assert first["server_time"]["timestamp"] > 0
    assert first["firmware"] == {"version": "2.0.3", "url": ""}


async def test_approved_device_gets_a_working_token(
    http_app: RunningHttp, hearth: RunningHearth
) -> None:
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        code = (await client.post("/xiaozhi/ota/", headers=HEADERS)).json()["activation"]["code"]
        approval = await http_app.services.devices.approve_code(code)
        assert approval is not None and (approval.device_id, approval.client_id) == (
            MAC,
            "client-1",
        )
        activated = await client.post("/xiaozhi/ota/activate", headers=HEADERS, json={})
        answer = (await client.post("/xiaozhi/ota/", headers=HEADERS, json={})).json()
    assert activated.status_code == 200
    assert "activation" not in answer
    assert answer["websocket"]["url"] == f"ws://127.0.0.1:{hearth.port}/xiaozhi/v1/"
    creds = DeviceCredentials(MAC, "client-1", answer["websocket"]["token"], 1)  # type: ignore[arg-type]
    hearth.authority.verify(creds, time.time())  # raises if the token were not valid


@pytest.mark.parametrize(
    ("headers", "status", "body"),
    [
        ({"Client-Id": "c"}, 400, {"success": False, "message": "request error."}),
        ({"Device-Id": MAC}, 400, {"success": False, "message": "request error."}),
        ({"Device-Id": "zz", "Client-Id": "c"}, 400, {"error": "Invalid device ID"}),
    ],
)
async def test_ota_rejects_incomplete_requests(
    http_app: RunningHttp, headers: dict[str, str], status: int, body: dict[str, object]
) -> None:
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        response = await client.post("/xiaozhi/ota/", headers=headers)
    assert response.status_code == status and response.json() == body


async def test_metrics_need_the_bearer_token(http_app: RunningHttp, redis: Redis) -> None:
    await redis.sadd(keys.retag("zhang"), "m1", "m2")  # two memories waiting for tags
    await redis.sadd(keys.retag("li"), "m3")
    await redis.sadd(keys.recue("li"), "m3", "m4")  # two waiting for their cues
    async with httpx.AsyncClient(base_url=http_app.base_url) as client:
        refused = await client.get("/metrics")
        wrong = await client.get("/metrics", headers={"Authorization": "Bearer nope"})
        allowed = await client.get("/metrics", headers={"Authorization": "Bearer metrics-secret"})
        health = await client.get("/health")
    assert refused.status_code == 401 and wrong.status_code == 401
    assert allowed.status_code == 200 and "hearth_device_connections" in allowed.text
    assert "hearth_memory_tags_pending 3.0" in allowed.text
    assert "hearth_memory_cues_pending 2.0" in allowed.text
    assert health.json() == {"status": "ok"}
