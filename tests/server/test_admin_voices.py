"""The admin API's household voices: enrol from base64 WAV sentences, list, refuse with a
machine-readable reason, remove; nothing without the admin token (real Redis, model, voices)."""

from __future__ import annotations

import base64
import io
import wave
from collections.abc import AsyncIterator

import httpx
import numpy as np
import pytest
from redis.asyncio import Redis
from starlette.applications import Starlette

from bench.voice_recordings import Speaker
from server.admin import voice_routes
from server.voices.store import VoiceStore
from tests.server.voices.conftest import pcm, real_speakers, voice_embedder, weights_path

__all__ = ["real_speakers", "voice_embedder"]  # the shared fixtures, used here by name
TOKEN = "admin-test-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def _b64_wav(wav: np.ndarray) -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm(wav))
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture
async def client(redis: Redis) -> AsyncIterator[httpx.AsyncClient]:
    app = Starlette(routes=voice_routes(redis, weights_path(), TOKEN))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hearth") as c:
        yield c


async def test_enrol_list_and_remove_over_http(
    client: httpx.AsyncClient, real_speakers: list[Speaker]
) -> None:
    body = {"speaker": "妈妈", "sentences": [_b64_wav(w) for w in real_speakers[1].enrol]}
    enrolled = await client.post("/admin/voices/home/mum", json=body, headers=HEADERS)
    assert enrolled.status_code == 200, enrolled.text
    assert enrolled.json()["speaker"] == "妈妈" and enrolled.json()["voiceprints"] == 3
    listed = (await client.get("/admin/voices/home", headers=HEADERS)).json()
    assert [m["member"] for m in listed["members"]] == ["mum"] and 0 < listed["bytes"] < 20_000
    again = await client.post("/admin/voices/home/mother", json=body, headers=HEADERS)
    assert again.status_code == 409
    assert again.json()["reason"] == "same_voice" and again.json()["member"] == "mum"
    removed = await client.request("DELETE", "/admin/voices/home/mum", headers=HEADERS)
    assert removed.json() == {"member": "mum", "removed": True}
    assert (await client.get("/admin/voices/home", headers=HEADERS)).json()["members"] == []


async def test_bad_sentences_are_refused_with_their_reason(client: httpx.AsyncClient) -> None:
    quiet = {"sentences": [_b64_wav(np.zeros(64000, np.float32))] * 3}
    refused = await client.post("/admin/voices/home/kid", json=quiet, headers=HEADERS)
    assert refused.status_code == 422
    assert refused.json()["reason"] == "silence" and refused.json()["sentence"] == 0
    junk = await client.post("/admin/voices/home/kid", json={"sentences": ["%%"]}, headers=HEADERS)
    assert junk.status_code == 400


async def test_nothing_without_the_admin_token(client: httpx.AsyncClient) -> None:
    assert (await client.get("/admin/voices/home")).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert (
        await client.request("DELETE", "/admin/voices/home/x", headers=wrong)
    ).status_code == 401


async def test_a_member_is_marked_private_and_shared_again(
    client: httpx.AsyncClient, redis: Redis
) -> None:
    await VoiceStore(redis).put("home", "teen", "小宇", np.eye(3, 8, dtype=np.float32))
    marked = await client.patch("/admin/voices/home/teen", json={"private": True}, headers=HEADERS)
    assert marked.json() == {"household": "home", "member": "teen", "private": True}
    listed = (await client.get("/admin/voices/home", headers=HEADERS)).json()
    assert listed["members"][0]["private"] is True
    shared = await client.patch("/admin/voices/home/teen", json={"private": False}, headers=HEADERS)
    assert shared.json()["private"] is False
    bad = await client.patch("/admin/voices/home/teen", json={"private": "yes"}, headers=HEADERS)
    assert bad.status_code == 400 and "private" in bad.json()["error"]
    missing = await client.patch(
        "/admin/voices/home/nobody", json={"private": True}, headers=HEADERS
    )
    assert missing.status_code == 404
    assert (
        await client.patch("/admin/voices/home/teen", json={"private": True})
    ).status_code == 401
