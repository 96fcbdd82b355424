"""One write, every entry point: embed → person lock → duplicate search → build → upsert →
queue its tagging.

The memory API, MCP ``memory_add``, an import and the console call ``MemoryWriter.remember``; the
write path's merge applies its ADDs and UPDATEs through ``add`` and ``revise`` under one hold of
``locked``. The same person lock guards every read-decide-write of a person's memories, across
processes (Redis) and within one (an asyncio lock first, so writers queue fairly). Every memory
written or revised here starts with safe default tags (``tags_pending``) and is put in the
person's retag set; ``remember`` sends a tagging request at once (``TagRequests``: an arq job in
Hearth) and the write path tags in the same job, so a safety sentence stored by any entry point
reaches the safety group as soon as the worker has tagged it — not at the person's next device
session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import structlog
from redis.asyncio import Redis

from config import keys
from memory import entities
from memory.locks import PersonBusyError, holding_person
from memory.schema import CAMERA, Memory, MemoryClass, MemoryId, PersonId, Photo
from memory.store import MemoryStore, Search, search_async, store_call
from providers.embedder import Embedder, Vector, embed_async

log = structlog.get_logger(__name__)
LOCK_WAIT_S = 30.0
_PHOTO_IDS = uuid.UUID("0b7e4f7a-6a1e-4d55-8f3e-5c2d9e1a7b40")


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
    """The one write. ``remember`` is the whole step for a caller with one text (API, MCP,
    console); a caller that decides many writes under one hold of the lock (the write path's
    merge) takes ``locked`` itself and calls ``add`` / ``revise`` inside it."""

    embedder: Embedder
    store: MemoryStore
    redis: Redis | None
    tags: TagRequests
    duplicate_threshold: float
    clock: Callable[[], float] = time.time
    _local: dict[str, asyncio.Lock] = field(default_factory=dict)

    @contextlib.asynccontextmanager
    async def locked(self, person: PersonId, *, wait_s: float = LOCK_WAIT_S) -> AsyncIterator[None]:
        """The one lock entry point for a person's read-decide-write: an asyncio lock first (so
        writers in one process queue fairly), then the Redis lease every process shares."""
        local = self._local.setdefault(person, asyncio.Lock())
        try:
            async with asyncio.timeout(wait_s):
                await local.acquire()
        except TimeoutError:
            raise PersonBusyError(f"person {person!r} stayed locked for {wait_s:.0f} s") from None
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.redis is not None:
                    await stack.enter_async_context(holding_person(self.redis, person, wait_s))
                yield
        finally:
            local.release()

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
            written = await self.add(
                person, text, vector, source=source, speaker=speaker,
                now=round(self.clock(), 6), before_write=before_write,
            )  # fmt: skip
        if isinstance(written, Stored):
            await self.request_tags(person)
        return written

    async def add(
        self,
        person: PersonId,
        text: str,
        vector: Vector,
        *,
        source: str,
        speaker: str | None,
        now: float,
        memory_id: MemoryId | None = None,
        before_write: Callable[[], None] | None = None,
        origin: str | None = None,
    ) -> Stored | Duplicate:
        """Under ``locked(person)``: the duplicate check on meaning, then a new memory with
        default tags, marked for tagging. ``memory_id`` makes a re-run write the same point."""
        search = Search(vector, 3, threshold=self.duplicate_threshold)
        [found] = await search_async(self.store, person, [search], now)
        hits = [h for h in found if h.memory.photo is None]  # a photo never stands for a fact
        if hits:
            return Duplicate(hits[0].memory, hits[0].score)
        memory = Memory(
            text=text,
            person=person,
            entities=entities.entities_for(text, None),
            speaker=speaker,
            source=source,
            created_at=now,
            id=memory_id or MemoryId(str(uuid.uuid4())),
            tags_pending=True,
            origin=origin,
        )
        if before_write is not None:
            before_write()
        await store_call(self.store, self.store.upsert, [memory], [vector])
        await self._mark_for_tagging(person, memory.key)
        log.info("memory.stored", person=person, source=source, speaker=speaker, text=text)
        return Stored(memory)

    async def revise(
        self,
        old: Memory,
        text: str,
        vector: Vector,
        *,
        now: float,
        before_write: Callable[[], None] | None = None,
        origin: str | None = None,
    ) -> Memory:
        """Under ``locked(old.person)``: ``old`` with a new text (its source and speaker as
        given on ``old``), the previous text kept in its history, tagged again as a new memory
        would be."""
        new = replace(
            old,
            text=text,
            entities=entities.entities_for(text, old.subject),
            updated_at=now,
            history=(*old.history, (old.text, now)),
            tags_pending=True,
            origin=origin,  # a revision comes from where its new text came from
        )
        if before_write is not None:
            before_write()
        await store_call(self.store, self.store.upsert, [new], [vector])
        if new.text != old.text:  # its cues were made for the old text: new ones after tagging
            await store_call(self.store, self.store.drop_cues, old.person, [old.key])
        await self._mark_for_tagging(old.person, new.key)
        log.info("memory.revised", person=old.person, old=old.text, text=text)
        return new

    async def keep_photo(
        self, person: PersonId, text: str, photo: Photo, *, speaker: str | None = None
    ) -> Memory:
        """An image memory: ``text`` (what the photo shows, as the vision model answered) with
        its ``photo``. One point per photo file — the same photo again is the same memory, its
        earlier description kept in the history. Never a duplicate of a text memory (a photo is
        its own thing) and never re-tagged: a photo is an event the person showed, kept until
        removed."""
        [vector] = await embed_async(self.embedder, [text])
        key = MemoryId(str(uuid.uuid5(_PHOTO_IDS, f"{person}\x00{photo.file}")))
        async with self.locked(person):
            now = round(self.clock(), 6)
            found = await store_call(self.store, self.store.get, person, [key])
            old = found[0] if found else None
            history = old.history if old else ()
            if old and old.text != text:
                history = (*history, (old.text, now))
            memory = Memory(
                text=text, person=person, cls=MemoryClass.EVENT, speaker=speaker, source=CAMERA,
                created_at=old.created_at if old else now, updated_at=now, id=key, photo=photo,
                entities=entities.entities_for(text, None),
                history=history,
            )  # fmt: skip
            await store_call(self.store, self.store.upsert, [memory], [vector])
        log.info("memory.photo_kept", person=person, file=photo.file, text=text)
        return memory

    async def _mark_for_tagging(self, person: PersonId, key: str) -> None:
        if self.redis is not None:
            await mark_for_tagging(self.redis, person, [key])

    async def request_tags(self, person: PersonId) -> None:
        await request_tags(self.tags, person)


async def mark_for_tagging(redis: Redis, person: PersonId, memory_keys: Sequence[str]) -> None:
    """Put memories written with default tags in the person's retag set."""
    if memory_keys:
        await redis.sadd(keys.retag(person), *memory_keys)


async def mark_for_cues(redis: Redis, person: PersonId, memory_keys: Sequence[str]) -> None:
    """Put memories whose class is already known (an import with classes) in the person's cue
    set: the worker's next job for the person makes their cues."""
    if memory_keys:
        await redis.sadd(keys.recue(person), *memory_keys)


async def request_tags(tags: TagRequests, person: PersonId) -> None:
    try:
        await tags.request(person)
    except Exception as exc:  # the memory stays in the retag set: the next job tags it
        log.warning("memory.tag_request_failed", person=person, error=repr(exc))
