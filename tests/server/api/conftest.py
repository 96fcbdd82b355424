"""The memory API on loopback: real uvicorn, real Redis, a real Qdrant Edge shard, the real
embedder. ``workspace`` is a key for every store; ``alice_key`` may touch only ``alice``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from memory.photos import PhotoFiles
from memory.registry import ApiKeys, Speakers
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.api.app import ApiContext, build_api
from server.api.service import MemoryService
from tests.conftest import make_settings
from tests.support.serving import serving


@dataclass
class Api:
    base_url: str
    client: httpx.AsyncClient
    workspace: str
    alice_key: str
    store: EdgeMemoryStore
    redis: Redis

    async def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        key: str | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> httpx.Response:
        sent = {"X-API-Key": key if key is not None else self.workspace, **(headers or {})}
        return await self.client.request(
            method, f"/api/v1/memory/{path}", json=body, headers=sent, params=params
        )

    async def ok(
        self, method: str, path: str, body: dict[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        response = await self.call(method, path, body, **kw)
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data


async def serve_api(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder, **api: Any
) -> AsyncIterator[tuple[str, EdgeMemoryStore]]:
    settings = make_settings(tmp_path, api=api) if api else make_settings(tmp_path)
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    photos = PhotoFiles(settings.resolve(settings.vision.photo_dir))
    service = MemoryService(embedder, store, Speakers(redis), settings.api, photos=photos)
    app = build_api(ApiContext(redis, service, settings.api))
    try:
        async with serving(app) as url:
            yield url, store
    finally:
        store.close()


@pytest.fixture
async def api(tmp_path: Path, redis: Redis, embedder: UseEmbedder) -> AsyncIterator[Api]:
    async for base_url, store in serve_api(tmp_path, redis, embedder):
        workspace, _ = await ApiKeys(redis).create("workspace", ["*"])
        alice_key, _ = await ApiKeys(redis).create("alice only", ["alice"])
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            created = await client.post(
                "/api/v1/memory/collection",
                json={"user_id": "alice"},
                headers={"X-API-Key": workspace},
            )
            assert created.status_code == 200, created.text
            yield Api(base_url, client, workspace, alice_key, store, redis)
