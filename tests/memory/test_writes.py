"""The one write (memory.writes.MemoryWriter) on a real Redis, a real Qdrant Edge shard and the
real embedder: the duplicate check, the retag mark, a revision's history, and the person lock's
bounded wait — the behaviour the API, MCP, an import and the write path's merge now share."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from config import keys
from memory.locks import PersonBusyError
from memory.schema import MemoryId, PersonId
from memory.store import EdgeMemoryStore
from memory.writes import Duplicate, MemoryWriter, Stored
from providers.embedder import UseEmbedder, embed_async

ZHANG = PersonId("zhang")
POINT = MemoryId("3f9a0c1e-8d55-4c1b-9a8e-2f0b6c7d1e42")


class CountingTags:
    def __init__(self) -> None:
        self.requests: list[PersonId] = []

    async def request(self, person: PersonId) -> None:
        self.requests.append(person)


@pytest.fixture
def empty_store(tmp_path: Path, embedder: UseEmbedder) -> Iterator[EdgeMemoryStore]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    yield store
    store.close()


@pytest.fixture
async def writer(embedder: UseEmbedder, empty_store: EdgeMemoryStore, redis: Redis) -> MemoryWriter:
    await redis.delete(keys.retag(ZHANG), keys.person_lock(ZHANG))
    return MemoryWriter(embedder, empty_store, redis, CountingTags(), duplicate_threshold=0.9)


async def test_remember_stores_marks_for_tagging_and_asks_once(
    writer: MemoryWriter, redis: Redis
) -> None:
    written = await writer.remember(ZHANG, "女儿对芒果过敏", source="api", speaker="妈妈")
    assert isinstance(written, Stored)
    memory = written.memory
    assert memory.tags_pending and memory.speaker == "妈妈" and memory.source == "api"
    assert await redis.smembers(keys.retag(ZHANG)) == {memory.key.encode()}
    assert isinstance(writer.tags, CountingTags) and writer.tags.requests == [ZHANG]
    again = await writer.remember(ZHANG, "女儿对芒果过敏", source="mcp:x", speaker=None)
    assert isinstance(again, Duplicate) and again.existing.key == memory.key
    assert writer.tags.requests == [ZHANG]  # nothing new, nothing to tag


async def test_add_with_an_id_writes_that_point(
    writer: MemoryWriter, embedder: UseEmbedder
) -> None:
    [vector] = await embed_async(embedder, ["每周五下午上钢琴课"])
    async with writer.locked(ZHANG):
        written = await writer.add(
            ZHANG, "每周五下午上钢琴课", vector, source="device", speaker=None, now=100.0,
            memory_id=POINT,
        )  # fmt: skip
    assert isinstance(written, Stored)
    assert written.memory.key == POINT and written.memory.created_at == 100.0


async def test_revise_keeps_history_and_is_tagged_again(
    writer: MemoryWriter, embedder: UseEmbedder, redis: Redis
) -> None:
    written = await writer.remember(ZHANG, "我家住在西湖区", source="api", speaker=None)
    assert isinstance(written, Stored)
    await redis.delete(keys.retag(ZHANG))  # as if tagged
    [vector] = await embed_async(embedder, ["我家住在滨江区"])
    async with writer.locked(ZHANG):
        new = await writer.revise(written.memory, "我家住在滨江区", vector, now=200.0)
    assert new.key == written.memory.key and new.text == "我家住在滨江区"
    assert new.history == (("我家住在西湖区", 200.0),) and new.tags_pending
    assert await redis.smembers(keys.retag(ZHANG)) == {new.key.encode()}
    [stored] = writer.store.get(ZHANG, [new.key])
    assert stored.text == "我家住在滨江区"


async def test_a_held_person_is_a_bounded_wait_then_busy(writer: MemoryWriter) -> None:
    other = MemoryWriter(writer.embedder, writer.store, writer.redis, CountingTags(), 0.9)
    async with writer.locked(ZHANG):
        with pytest.raises(PersonBusyError):  # another process (its own writer): the Redis lease
            async with other.locked(ZHANG, wait_s=0.2):
                pass
        with pytest.raises(PersonBusyError):  # the same process: the local lock, also bounded
            async with writer.locked(ZHANG, wait_s=0.2):
                pass
    async with asyncio.timeout(5):
        async with other.locked(ZHANG, wait_s=1):  # released: taken at once
            pass
