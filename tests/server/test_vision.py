"""Issue 21, item 8: the vision endpoint our MCP ``initialize`` announces, over real HTTP on
loopback, built as ``hearth up`` builds it (``runtime.vision_services``): the firmware's multipart
(chunked, Device-Id/Client-Id + bearer), a scripted OpenAI-compatible vision model, the photo kept
as an image memory in the real store, listed / fetched / searched / expanded / removed through the
memory API — and every refusal clear, with nothing kept."""

from __future__ import annotations

import base64
import io
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from redis.asyncio import Redis

from memory.registry import ApiKeys
from providers.embedder import UseEmbedder
from server.auth import ClientId, DeviceCredentials, DeviceId
from server.devices import DeviceRegistry
from server.http_app import HttpServices, build_http_app
from server.memory.engine import MemoryEngine, build_memory
from server.runtime import authority_for, vision_services
from server.vision import VISION_PATH, vision_token
from tests.conftest import RunningHearth, make_settings
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.serving import serving

MAC = "aa:bb:cc:dd:ee:42"
CLIENT = "client-cam"
BOUNDARY = "----ESP32_CAMERA_BOUNDARY"
ANSWER = "桌上有一盒牛奶和两个苹果。"


def jpeg(color: tuple[int, int, int] = (200, 120, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 24), color).save(out, "JPEG")
    return out.getvalue()


def firmware_body(question: str, photo: bytes) -> bytes:
    """The multipart body exactly as the firmware's ``Explain`` writes it."""
    return (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="question"\r\n\r\n{question}\r\n'
            f"--{BOUNDARY}\r\n"
            'Content-Disposition: form-data; name="file"; filename="camera.jpg"\r\n'
            "Content-Type: image/jpeg\r\n\r\n"
        ).encode()
        + photo
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


async def chunked(body: bytes) -> AsyncIterator[bytes]:
    """No Content-Length: the firmware sends ``Transfer-Encoding: chunked``."""
    for i in range(0, len(body), 4096):
        yield body[i : i + 4096]


@dataclass
class Rig:
    http: httpx.AsyncClient
    memory: MemoryEngine
    token: str
    api_key: str
    photo_dir: Path
    llm: ScriptedLLM

    async def send(
        self, body: bytes, *, token: str | None = None, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        bearer = token if token is not None else self.token
        sent = {
            "Device-Id": MAC,
            "Client-Id": CLIENT,
            **({"Authorization": f"Bearer {bearer}"} if bearer else {}),
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
            **(headers or {}),
        }
        return await self.http.post(VISION_PATH, content=chunked(body), headers=sent)

    async def api(self, method: str, path: str, body: dict[str, Any] | None = None,
                  **kw: Any) -> httpx.Response:  # fmt: skip
        headers = {"X-API-Key": self.api_key, **kw.pop("headers", {})}
        return await self.http.request(
            method, f"/api/v1/memory/{path}", json=body, headers=headers, **kw
        )


async def _rig(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder, llm: ScriptedLLM, **vision: Any
) -> AsyncIterator[Rig]:
    settings = make_settings(tmp_path, vision={"base_url": llm.base_url, "model": "vl", **vision})
    memory = build_memory(settings, embedder)
    services = HttpServices(
        settings, authority_for(settings), DeviceRegistry(redis), "metrics-secret",
        memory=memory, vision=vision_services(settings, redis, memory),
    )  # fmt: skip
    await DeviceRegistry(redis).approve(MAC, CLIENT)
    creds = DeviceCredentials(DeviceId(MAC), ClientId(CLIENT), None, 1)
    token = vision_token(authority_for(settings), creds, time.time())
    api_key, _ = await ApiKeys(redis).create("workspace", ["*"])
    try:
        async with (
            serving(build_http_app(services)) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            person = "device-aabbccddee42"
            await http.post("/api/v1/memory/collection", json={"user_id": person},
                            headers={"X-API-Key": api_key})  # fmt: skip
            yield Rig(
                http, memory, token, api_key, settings.resolve(settings.vision.photo_dir), llm
            )
    finally:
        memory.close()


@pytest.fixture
async def rig(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder, scripted_llm: ScriptedLLM
) -> AsyncIterator[Rig]:
    scripted_llm.responder = lambda req: Reply(ANSWER)
    async for running in _rig(tmp_path, redis, embedder, scripted_llm):
        yield running


PERSON = "device-aabbccddee42"  # an unmapped device is its own person


async def test_a_firmware_photo_is_answered_and_kept_as_an_image_memory(rig: Rig) -> None:
    photo = jpeg()
    answered = await rig.send(firmware_body("桌上有什么？", photo))
    assert answered.status_code == 200, answered.text
    assert answered.json() == {"success": True, "action": "RESPONSE", "response": ANSWER}
    # the vision model saw the photo itself and the question
    [asked] = [r for r in rig.llm.requests if r["model"] == "vl"]
    parts = asked["messages"][-1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert url == f"data:image/jpeg;base64,{base64.b64encode(photo).decode()}"
    assert {"type": "text", "text": "桌上有什么？"} in parts

    listed = (await rig.api("POST", "images", {"user_id": PERSON})).json()
    [image] = listed["images"]
    assert image["description"] == ANSWER and image["question"] == "桌上有什么？"
    assert image["content_type"] == "image/jpeg" and image["bytes"] == len(photo)
    assert image["device"] == MAC and listed["next_before"] is None

    fetched = await rig.api("GET", f"images/{image['id']}/file", params={"user_id": PERSON})
    assert fetched.status_code == 200 and fetched.content == photo
    assert fetched.headers["content-type"] == "image/jpeg"
    [kept] = list((rig.photo_dir / PERSON).iterdir())
    assert kept.stat().st_mode & 0o777 == 0o600

    found = (await rig.api("POST", "search", {"user_id": PERSON, "query": "家里的牛奶"})).json()
    assert found["memories"][0]["id"] == image["id"]
    assert found["memories"][0]["image"]["question"] == "桌上有什么？"
    why = (await rig.api("POST", "expand", {"user_id": PERSON, "memory_id": image["id"]})).json()
    assert why["origin"]["kind"] == "photo" and why["origin"]["device"] == MAC


async def test_the_same_photo_again_is_one_memory_and_paging_follows_the_cursor(rig: Rig) -> None:
    for color in [(10, 10, 10), (80, 80, 80), (160, 160, 160)]:
        assert (await rig.send(firmware_body("这是什么？", jpeg(color)))).status_code == 200
    again = await rig.send(firmware_body("再看看这是什么？", jpeg((10, 10, 10))))
    assert again.status_code == 200
    first = (await rig.api("POST", "images", {"user_id": PERSON, "limit": 2})).json()
    cursor = {"next_before": first["next_before"], "next_skip_ids": first["next_skip_ids"]}
    second = (await rig.api("POST", "images", {"user_id": PERSON, "limit": 2, **cursor})).json()
    ids = [i["id"] for i in first["images"] + second["images"]]
    assert len(ids) == 3 and len(set(ids)) == 3 and second["next_before"] is None
    assert len(list((rig.photo_dir / PERSON).iterdir())) == 3


async def test_delete_image_removes_the_memory_and_the_photo_under_an_idempotency_key(
    rig: Rig,
) -> None:
    assert (await rig.send(firmware_body("这是什么？", jpeg()))).status_code == 200
    [image] = (await rig.api("POST", "images", {"user_id": PERSON})).json()["images"]
    body = {"user_id": PERSON, "image_id": image["id"]}
    headers = {"Idempotency-Key": f"delete-image:{image['id']}"}
    gone = await rig.api("DELETE", "image", body, headers=headers)
    replayed = await rig.api("DELETE", "image", body, headers=headers)
    assert gone.status_code == 200 and gone.json() == {"status": "deleted", "id": image["id"]}
    assert replayed.status_code == 200 and replayed.headers["Idempotent-Replayed"] == "true"
    assert (await rig.api("POST", "images", {"user_id": PERSON})).json()["images"] == []
    assert list((rig.photo_dir / PERSON).iterdir()) == []
    missing = await rig.api("DELETE", "image", body)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    file = await rig.api("GET", f"images/{image['id']}/file", params={"user_id": PERSON})
    assert file.status_code == 404


async def test_forgetting_the_store_removes_its_photos(rig: Rig) -> None:
    assert (await rig.send(firmware_body("这是什么？", jpeg()))).status_code == 200
    assert (rig.photo_dir / PERSON).is_dir()
    forgot = await rig.api("POST", "forget", {"user_id": PERSON, "all": True})
    assert forgot.status_code == 200, forgot.text
    assert not (rig.photo_dir / PERSON).exists()


async def test_a_client_sending_only_the_bearer_is_identified_by_it(rig: Rig) -> None:
    """xiaozhi-sdk posts with the Authorization header alone."""
    sent = {"Authorization": f"Bearer {rig.token}",
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}  # fmt: skip
    answered = await rig.http.post(VISION_PATH, content=firmware_body("q", jpeg()), headers=sent)
    assert answered.status_code == 200 and answered.json()["response"] == ANSWER


@pytest.mark.parametrize(
    ("token", "headers", "why"),
    [
        ("", {}, "missing Authorization"),
        ("not-a-token", {}, "malformed token"),
        (None, {"Device-Id": "aa:bb:cc:dd:ee:43"}, "not valid for this device"),
        (None, {"Client-Id": "someone-else"}, "not valid for this device"),
    ],
)
async def test_a_photo_without_this_devices_token_is_refused_and_nothing_kept(
    rig: Rig, token: str | None, headers: dict[str, str], why: str
) -> None:
    refused = await rig.send(firmware_body("q", jpeg()), token=token, headers=headers)
    assert refused.status_code == 401
    assert refused.json()["success"] is False and why in refused.json()["message"]
    assert rig.llm.requests == []
    assert not (rig.photo_dir / PERSON).exists()


async def test_a_revoked_device_is_refused(rig: Rig, redis: Redis) -> None:
    await DeviceRegistry(redis).revoke(MAC)
    refused = await rig.send(firmware_body("q", jpeg()))
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (firmware_body("q", b"GIF89a not a photo"), 415, "not a JPEG"),
        (b"--x--\r\n", 400, "multipart/form-data"),
        (firmware_body("q", b"").replace(b'name="file"', b'name="other"'), 400, "missing"),
        (firmware_body("q", b"\xff\xd8\xff" + b"0" * 210_000), 413, "at most 200000 bytes"),
    ],
)
async def test_bad_photos_get_a_clear_error(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder, scripted_llm: ScriptedLLM,
    body: bytes, status: int, words: str,
) -> None:  # fmt: skip
    async for rig in _rig(tmp_path, redis, embedder, scripted_llm, max_image_bytes=200_000):
        refused = await rig.send(body)
        assert refused.status_code == status, refused.text
        assert refused.json()["success"] is False and words in refused.json()["message"]
        assert rig.llm.requests == []
        assert not (rig.photo_dir / PERSON).exists()


async def test_a_body_far_past_the_cap_is_cut_while_it_streams(rig: Rig) -> None:
    """Past photo cap + multipart slack the body guard answers 413 without holding the body."""
    huge = firmware_body("q", b"\xff\xd8\xff" + b"0" * 6_000_000)
    refused = await rig.send(huge)
    assert refused.status_code == 413 and "at most" in refused.text
    assert rig.llm.requests == []


async def test_without_a_vision_model_the_device_is_told_so_and_nothing_is_kept(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder, scripted_llm: ScriptedLLM
) -> None:
    async for rig in _rig(tmp_path, redis, embedder, scripted_llm, base_url=None):
        refused = await rig.send(firmware_body("q", jpeg()))
        assert refused.status_code == 503
        assert "vision.base_url" in refused.json()["message"]
        assert not (rig.photo_dir / PERSON).exists()


async def test_a_failing_vision_model_is_a_503_not_a_guess(rig: Rig) -> None:
    rig.llm.responder = lambda req: Reply(status=500)
    refused = await rig.send(firmware_body("q", jpeg()))
    assert refused.status_code == 503 and refused.json()["success"] is False
    assert not (rig.photo_dir / PERSON).exists()


async def test_the_announced_url_names_the_host_the_device_reached(hearth: RunningHearth) -> None:
    """No public_host configured: the vision URL carries the host from the device's own
    WebSocket request (a device on the LAN reached us by that name), with the HTTP port."""
    device = hearth.device("aa:bb:cc:dd:ee:44")
    device.url = device.url.replace("127.0.0.1", "localhost")
    await device.connect()
    try:
        await device.ask("你好")
    finally:
        await device.close()
    assert device.mcp_initialize is not None
    vision = device.mcp_initialize["capabilities"]["vision"]
    port = hearth.settings.server.http_port
    assert vision["url"] == f"http://localhost:{port}{VISION_PATH}"
    assert vision["token"].count(".") == 2  # identity . signature . time
