"""The admin import: under the person's write lock, and with Redis unreachable a clear error
before anything is stored (README "Bad input")."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
from redis.asyncio import Redis
from starlette.applications import Starlette

from config.settings import load_settings
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.admin import admin_routes
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath

HEADERS = {"Authorization": "Bearer admin-token"}


async def test_an_import_with_redis_unreachable_says_so_and_stores_nothing(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "edge", embedder.dim)
    memory = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    dead = Redis(host="127.0.0.1", port=1, socket_connect_timeout=2)
    app = Starlette(routes=admin_routes(memory, "admin-token", dead))
    line = orjson.dumps({"text": "我对青霉素过敏", "cls": "safety"}).decode()
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://hearth"
        ) as client:
            response = await client.post(
                "/admin/memory/import", json={"person": "zhang", "jsonl": line}, headers=HEADERS
            )
        assert response.status_code == 503
        assert "nothing was imported" in response.json()["error"]
        assert store.count(PersonId("zhang")) == 0
        without = Starlette(routes=admin_routes(memory, "admin-token", None))  # no worker
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=without), base_url="http://hearth"
        ) as client:
            response = await client.post(
                "/admin/memory/import", json={"person": "zhang", "jsonl": line}, headers=HEADERS
            )
        assert response.json()["imported"] == 1 and store.count(PersonId("zhang")) == 1
    finally:
        await dead.aclose()
        store.close()


async def test_an_import_refreshes_the_households_names_for_the_read_path(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """Names an import brings are known to the next turn's round 1 without waiting for the
    names' refresh interval."""
    from server.memory.household import HouseholdNames
    from tests.support.waiting import wait_until

    store = EdgeMemoryStore(tmp_path / "edge", embedder.dim)
    names = HouseholdNames(store, 0)
    read_path = ReadPath(embedder, store, load_settings().memory, names=names.members)
    memory = MemoryEngine(embedder, store, read_path, names=names)
    who = PersonId("zhang")
    await names.read(who)  # read once: nothing yet, fresh for the refresh interval
    assert names.members(who) == ()
    app = Starlette(routes=admin_routes(memory, "admin-token", None))
    line = orjson.dumps({"text": "玉芳骨质疏松，不能搬重东西", "cls": "safety", "subject": "玉芳"})
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://hearth"
        ) as client:
            response = await client.post(
                "/admin/memory/import",
                json={"person": "zhang", "jsonl": line.decode()},
                headers=HEADERS,
            )
        assert response.json()["imported"] == 1
        await wait_until(lambda: "玉芳" in names.members(who))
    finally:
        store.close()
