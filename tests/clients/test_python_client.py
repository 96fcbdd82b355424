"""The Python client (``clients/python``, package ``hearth_memory``) against a live memory API on
loopback — real Redis, real Qdrant Edge, the real embedder; not a mock. Sync and async."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hearth_memory import AsyncClient, Client, NotFound, derived_key
from hearth_memory.errors import Conflict, InvalidRequest
from redis.asyncio import Redis

from memory.photos import PhotoFiles
from memory.registry import ApiKeys
from memory.schema import PersonId, Photo
from memory.writes import MemoryWriter, NoTagging
from providers.embedder import UseEmbedder
from server.vision import photo_text
from tests.server.api.conftest import Api


@pytest.fixture
async def key(api: Api, redis: Redis) -> str:
    secret, _ = await ApiKeys(redis).create("client", ["*"])
    return secret


def _sync_walk(base_url: str, key: str) -> dict[str, object]:
    with Client(base_url, key) as memory:
        memory.add_speaker("alice", "Bob")
        first = memory.add("alice", "Bob 对花生过敏", speaker="Bob")
        again = memory.add("alice", "Bob 对花生过敏", speaker="Bob")  # same derived key: replay
        memory.add("alice", "Bob 每周三去游泳", speaker="Bob")
        memory.add("alice", "Bob 喜欢下棋", speaker="Bob")
        said = list(memory.by_speaker("alice", "Bob", page=2))  # three memories, two pages
        found = memory.search("alice", "花生", speaker="Bob", limit=3)
        many = memory.add_many("alice", [("我家住在滨江区", None), ("   ", None)])
        why = memory.expand("alice", first["id"])
        memory.supersede("alice", first["id"], "Bob 对花生和芒果过敏")
        speakers = memory.list_speakers("alice")
        try:
            memory.add("alice", "x", speaker="Stranger")
            refused: Exception | None = None
        except InvalidRequest as exc:
            refused = exc
        try:
            memory.search("nobody-here", "x")
            missing: Exception | None = None
        except NotFound as exc:
            missing = exc
        gone = memory.forget("alice", first["id"])
    return {"first": first, "again": again, "said": said, "found": found, "many": many,
            "why": why, "speakers": speakers, "refused": refused, "missing": missing,
            "gone": gone}  # fmt: skip


async def test_the_sync_client_walks_the_seed_calls(api: Api, key: str) -> None:
    seen = await asyncio.to_thread(_sync_walk, api.base_url, key)
    first, again = seen["first"], seen["again"]
    assert isinstance(first, dict) and first["status"].startswith("stored")
    assert again == first  # replayed from the derived Idempotency-Key: stored once
    said = seen["said"]
    assert isinstance(said, list) and len(said) == 3
    assert len({m["id"] for m in said}) == 3
    found = seen["found"]
    assert isinstance(found, dict) and "花生" in str(found)
    many = seen["many"]
    assert isinstance(many, dict)
    assert [r["status"] for r in many["results"]] == ["stored", "refused"]
    why = seen["why"]
    assert isinstance(why, dict) and why["origin"]["kind"] == "call"
    refused, missing = seen["refused"], seen["missing"]
    assert isinstance(refused, InvalidRequest) and refused.fields.get("speaker") == "Stranger"
    assert isinstance(missing, NotFound) and missing.status == 404
    gone = seen["gone"]
    assert isinstance(gone, dict) and gone["status"] == "forgotten"


async def test_the_async_client_and_its_cursor(api: Api, key: str) -> None:
    async with AsyncClient(api.base_url, key) as memory:
        await memory.add_speaker("alice", "Carol")
        for text in ("Carol 养了一只猫", "Carol 在学日语", "Carol 周末去爬山"):
            await memory.add("alice", text, speaker="Carol")
        said = [m async for m in memory.by_speaker("alice", "Carol", page=2)]
        queued = await memory.add_turn("alice", "我们下个月去云南", "好的。")
        outcome = await memory.turn("alice", queued["turn_id"])
        removed = await memory.remove_speaker("alice", "Carol")
    assert said[0]["content"] == "Carol 周末去爬山" and len(said) == 3  # newest first
    assert queued["status"] == "queued" and outcome["status"] == "queued"  # no worker here
    assert removed["status"] == "removed"


async def _photos(api: Api, embedder: UseEmbedder, root: Path, count: int) -> list[bytes]:
    """Image memories as the vision endpoint keeps them (tests/server/test_vision sends real
    firmware requests; here only the API side is under test)."""
    photos = PhotoFiles(root)
    writer = MemoryWriter(embedder, api.store, api.redis, NoTagging(), 0.72)
    kept = []
    for n in range(count):
        data = b"\xff\xd8\xff" + bytes([n]) * 64
        saved = photos.save(PersonId("alice"), data)
        photo = Photo(f"问题{n}", f"照片{n}：桌上的水杯", saved.name, saved.content_type, len(data))
        await writer.keep_photo(PersonId("alice"), photo_text(photo.question, photo.answer), photo)
        kept.append(data)
    return kept


def _sync_images(base_url: str, key: str) -> tuple[list[dict[str, object]], bytes, list[object]]:
    with Client(base_url, key) as memory:
        listed = list(memory.images("alice", page=2))
        data = memory.image_file("alice", str(listed[0]["id"]))
        memory.delete_image("alice", str(listed[0]["id"]))
        after = list(memory.images("alice"))
    return listed, data, after


async def test_images_list_across_pages_fetch_and_delete(
    api: Api, key: str, embedder: UseEmbedder, tmp_path: Path
) -> None:
    kept = await _photos(api, embedder, tmp_path / "photos", 3)  # the API's vision.photo_dir
    listed, data, after = await asyncio.to_thread(_sync_images, api.base_url, key)
    assert len(listed) == 3 and len({i["id"] for i in listed}) == 3
    assert data in kept and len(after) == 2
    async with AsyncClient(api.base_url, key) as memory:
        seen = [i async for i in memory.images("alice", page=1)]
        assert await memory.image_file("alice", str(seen[0]["id"])) in kept
        # the same delete again under its derived key is replayed; under a new key it is a 404
        replayed = await memory.delete_image("alice", str(listed[0]["id"]))
        assert replayed["status"] == "deleted"
        with pytest.raises(NotFound):
            await memory.delete_image("alice", str(listed[0]["id"]), key="a-second-attempt")


def test_derived_keys_follow_what_is_written() -> None:
    a = derived_key("POST", "/store", {"user_id": "a", "content": "x"})
    assert a == derived_key("POST", "/store", {"content": "x", "user_id": "a"})
    assert a != derived_key("POST", "/store", {"user_id": "a", "content": "y"})
    conflict = Conflict(409, "conflict_error", "running", {"retry_after_ms": 250})
    assert conflict.retry_after_ms == 250
