"""One write, every entry point: embed → person lock → duplicate search → build → upsert →
queue its tagging.

The memory API, MCP ``memory_add`` and the console call ``MemoryWriter.remember``; the same
person lock (``locked``) guards every read-decide-write of a person's memories, across processes
(Redis) and within one (an asyncio lock first, so writers queue fairly). Every memory written
here starts with safe default tags (``tags_pending``) and is put in the person's retag set, and
a tagging request goes out at once (``TagRequests``: an arq job in Hearth), so a safety sentence
stored by any entry point reaches the safety group as soon as the worker has tagged it — not at
the person's next device session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import structlog
from redis.asyncio import Redis

from config import keys
from memory import entities
from memory.locks import person_lock
from memory.schema import Memory, MemoryId, PersonId
from memory.store import MemoryStore, Search, search_async, store_call
from providers.embedder import Embedder, embed_async

log = structlog.get_logger(__name__)
LOCK_HOLD_S = 30.0
LOCK_WAIT_S = 30.0


class TagRequests(Protocol):
    """Asks for the person's pending memories to be tagged (cls, decay, subject)."""

    async def request(self, person: PersonId) -> None: ...


class NoTagging:
    """No worker to ask (MCP over stdio without Redis): tags keep their safe defaults."""

    async def request(self, person: PersonId) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Stored:
    memory: Memory


@dataclass(frozen=True, slots=True)
class Duplicate:
    existing: Memory
    score: float


@dataclass
class MemoryWriter:
    embedder: Embedder
    store: MemoryStore
    redis: Redis | None
    tags: TagRequests
    duplicate_threshold: float
    clock: Callable[[], float] = time.time
    _local: dict[str, asyncio.Lock] = field(default_factory=dict)

    @contextlib.asynccontextmanager
    async def locked(self, person: PersonId) -> AsyncIterator[None]:
        """The one lock entry point for a person's read-decide-write."""
        local = self._local.setdefault(person, asyncio.Lock())
        async with local, contextlib.AsyncExitStack() as stack:
            if self.redis is not None:
                await stack.enter_async_context(
                    person_lock(self.redis, person, hold_s=LOCK_HOLD_S, wait_s=LOCK_WAIT_S)
                )
            yield

    async def remember(
        self,
        person: PersonId,
        text: str,
        *,
        source: str,
        speaker: str | None,
        before_write: Callable[[], None] | None = None,
    ) -> Stored | Duplicate:
        """Store ``text`` for ``person`` unless a memory close enough in meaning exists."""
        [vector] = await embed_async(self.embedder, [text])  # outside the lock: ms of CPU
        async with self.locked(person):
            now = self.clock()
            search = Search(vector, 1, threshold=self.duplicate_threshold)
            [hits] = await search_async(self.store, person, [search], now)
            if hits:
                return Duplicate(hits[0].memory, hits[0].score)
            memory = Memory(
                text=text,
                person=person,
                entities=entities.entities_for(text, None),
                speaker=speaker,
                source=source,
                created_at=round(now, 6),
                id=MemoryId(str(uuid.uuid4())),
                tags_pending=True,
            )
            if before_write is not None:
                before_write()
            await store_call(self.store, self.store.upsert, [memory], [vector])
            await self._mark_for_tagging(person, memory.key)
        await self.request_tags(person)
        log.info("memory.stored", person=person, source=source, speaker=speaker, text=text)
        return Stored(memory)

    async def _mark_for_tagging(self, person: PersonId, key: str) -> None:
        if self.redis is not None:
            await mark_for_tagging(self.redis, person, [key])

    async def changed(self, person: PersonId, key: str) -> None:
        """A memory whose text changed (supersede): tag it again, as a new one."""
        await self._mark_for_tagging(person, key)
        await self.request_tags(person)

    async def request_tags(self, person: PersonId) -> None:
        await request_tags(self.tags, person)


async def mark_for_tagging(redis: Redis, person: PersonId, memory_keys: Sequence[str]) -> None:
    """Put memories written with default tags in the person's retag set."""
    if memory_keys:
        await redis.sadd(keys.retag(person), *memory_keys)


async def request_tags(tags: TagRequests, person: PersonId) -> None:
    try:
        await tags.request(person)
    except Exception as exc:  # the memory stays in the retag set: the next job tags it
        log.warning("memory.tag_request_failed", person=person, error=repr(exc))
