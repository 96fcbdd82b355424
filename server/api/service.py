"""The memory operations behind the HTTP API, over the same store and embedder the device
read path uses (one vector space, one payload schema). A store id is the memory person."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from typing import Any

import structlog

from config.settings import ApiSettings
from memory import schema
from memory.forgetting import forget_person
from memory.identity import ME, IdentityError, speaker_name
from memory.photos import PhotoFiles
from memory.registry import Speakers
from memory.schema import Memory, MemoryId, PersonId
from memory.store import MemoryStore, Search, search_async, store_call
from memory.writes import Duplicate, MemoryWriter, NoTagging, TagRequests
from providers.embedder import Embedder, embed_async
from server.api import errors
from server.api.errors import ApiError
from server.api.idempotency import WriteTracker
from server.api.turns import queue_turn, turn_outcome
from server.memory.origins import iso, origin_of

log = structlog.get_logger(__name__)
SOURCE = "api"
TIE = 5e-7  # timestamps are kept to the microsecond


def parse_iso(raw: str) -> float:
    try:
        return dt.datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError as exc:
        raise errors.invalid(
            "before must be an ISO-8601 time (a next_before value).", param="before"
        ) from exc


def memory_json(memory: Memory, score: float | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": memory.key,
        "content": memory.text,
        "speaker": memory.speaker,
        "created_at": iso(memory.created_at),
        "updated_at": iso(memory.updated_at),
        "metadata": {
            "cls": memory.cls.value,
            "decay": memory.decay.value,
            "expires_at": iso(memory.expires_at),
            "subject": memory.subject,
            "source": memory.source,
        },
    }
    if memory.history:
        body["history"] = [{"content": t, "replaced_at": iso(at)} for t, at in memory.history]
    if memory.photo is not None:
        body["image"] = {"question": memory.photo.question, "content_type":
                         memory.photo.content_type, "bytes": memory.photo.size}  # fmt: skip
    if score is not None:
        body["score"] = round(score, 4)
    return body


def image_json(memory: Memory) -> dict[str, Any]:
    """An image memory as the image listing shows it (``GET …/images/{id}/file`` has the
    photo)."""
    assert memory.photo is not None
    return {
        "id": memory.key,
        "description": memory.photo.answer,
        "question": memory.photo.question,
        "content_type": memory.photo.content_type,
        "bytes": memory.photo.size,
        "device": memory.photo.device,
        "created_at": iso(memory.created_at),
        "updated_at": iso(memory.updated_at),
    }


class MemoryService:
    def __init__(
        self,
        embedder: Embedder,
        store: MemoryStore,
        speakers: Speakers,
        settings: ApiSettings,
        tags: TagRequests | None = None,
        photos: PhotoFiles | None = None,
    ) -> None:
        self.embedder = embedder
        self.photos = photos  # where image memories keep their photos (None: no photos here)
        self.store = store
        self.speakers = speakers
        self.settings = settings
        self.writer = MemoryWriter(
            embedder, store, speakers.redis, tags or NoTagging(), settings.duplicate_threshold
        )

    @property
    def clock(self) -> Callable[[], float]:
        return self.writer.clock

    def _lock(self, store: PersonId) -> contextlib.AbstractAsyncContextManager[None]:
        """The duplicate check and the write it guards run as one step per store, across every
        server process and the write path's workers (memory.writes: the one lock entry point)."""
        return self.writer.locked(store)

    async def _check_speaker(self, store: PersonId, speaker: str | None, *, for_read: bool) -> None:
        if speaker is None or speaker == ME or await self.speakers.registered(store, speaker):
            return
        raise (
            errors.speaker_unknown(speaker) if for_read else errors.speaker_not_registered(speaker)
        )

    def _content(self, raw: str) -> str:
        text = raw.strip()
        if not text:
            raise errors.invalid("content must not be empty.", param="content")
        if len(text) > self.settings.max_content_chars:
            raise errors.invalid(
                f"content is at most {self.settings.max_content_chars} characters.",
                param="content",
            )
        return text

    # ---- writes -----------------------------------------------------------------------------

    async def store_memory(
        self, store: PersonId, content: str, speaker: str | None, tracker: WriteTracker
    ) -> dict[str, Any]:
        text = self._content(content)
        await self._check_speaker(store, speaker, for_read=False)
        written = await self.writer.remember(
            store, text, source=SOURCE, speaker=speaker, before_write=tracker.begin
        )
        if isinstance(written, Duplicate):
            return self._duplicate(written.existing, written.score, speaker)
        return {"id": written.memory.key, "status": "stored (1 chunks)"}

    async def store_turn(
        self, store: PersonId, user: str, assistant: str | None, speaker: str | None,
        at: float | None, tracker: WriteTracker,
    ) -> dict[str, Any]:  # fmt: skip
        """Queue one exchange for the write path (the device session's two stages and tagging);
        the answer names the turn and where its outcome can be read."""
        text = self._content(user)
        await self._check_speaker(store, speaker, for_read=False)
        tracker.begin()
        return await queue_turn(self.speakers.redis, store, text, assistant, speaker, at)

    async def turn(self, store: PersonId, turn_id: str) -> dict[str, Any]:
        return await turn_outcome(self.speakers.redis, store, turn_id)

    async def expand(self, store: PersonId, memory_id: str) -> dict[str, Any]:
        """Why Hearth remembers this: the conversation it was extracted from (who said what,
        when — from the archived transcript), or the call that stored it."""
        memory = await self._one(store, memory_id)
        return {"memory": memory_json(memory),
                "origin": await origin_of(self.speakers.redis, memory)}  # fmt: skip

    async def bulk_store(
        self, store: PersonId, items: list[tuple[str, str | None]], tracker: WriteTracker
    ) -> dict[str, Any]:
        """Each item through the one write, in order, with its own status: ``stored``,
        ``duplicate`` (of a stored memory or of an earlier item) or ``refused`` with the reason
        (an invalid text or speaker: the others still go). If the engine fails part-way, the
        answer says which items were written (``stored``), which failed (``failed``, the error)
        and which were not tried (``not_attempted``) — nothing is left unknown."""
        results: list[dict[str, Any]] = []
        failed = False
        for index, (content, raw_speaker) in enumerate(items):
            if failed:
                results.append({"index": index, "status": "not_attempted"})
                continue
            try:
                speaker = speaker_name(raw_speaker) if raw_speaker is not None else None
                text = self._content(content)
                await self._check_speaker(store, speaker, for_read=False)
            except (ApiError, IdentityError) as exc:
                reason = exc.message
                results.append({"index": index, "status": "refused", "reason": reason})
                continue
            try:
                written = await self.writer.remember(
                    store, text, source=SOURCE, speaker=speaker, before_write=tracker.begin
                )
            except Exception as exc:  # the engine or Redis: say exactly what was written
                log.error("api.bulk_store_failed", store=store, index=index, error=repr(exc))
                results.append({"index": index, "status": "failed", "error": "engine failure"})
                failed = True
                continue
            if isinstance(written, Duplicate):
                results.append({"index": index, "status": "duplicate",
                                "duplicate_of": written.existing.key})  # fmt: skip
            else:
                results.append({"index": index, "status": "stored", "id": written.memory.key})
        statuses = ("stored", "duplicate", "refused", "failed", "not_attempted")
        counts = {s: sum(r["status"] == s for r in results) for s in statuses}
        return {"status": "partial" if failed else "done", "counts": counts, "results": results}

    @staticmethod
    def _duplicate(existing: Memory, score: float, speaker: str | None) -> dict[str, Any]:
        note = (
            f"A memory close enough in meaning already exists (id {existing.key}, "
            f"similarity {score:.2f}): nothing was stored"
        )
        note += f", and the speaker tag '{speaker}' was not attached." if speaker else "."
        return {"id": "", "status": "duplicate", "note": note, "duplicate_of": existing.key}

    async def supersede(
        self, store: PersonId, memory_id: str, content: str, tracker: WriteTracker
    ) -> dict[str, Any]:
        text = self._content(content)
        person = store
        [vector] = await embed_async(self.embedder, [text])
        async with self._lock(store):
            old = await self._one(person, memory_id)
            now = round(self.clock(), 6)
            new = await self.writer.revise(old, text, vector, now=now, before_write=tracker.begin)
        await self.writer.request_tags(person)
        return {"id": new.key, "status": "superseded", "memory": memory_json(new)}

    async def forget(
        self, store: PersonId, memory_id: str | None, everything: bool, tracker: WriteTracker
    ) -> dict[str, Any]:
        person = store
        async with self._lock(store):
            if everything:
                tracker.begin()
                gone = await forget_person(self.speakers.redis, self.store, person, self.photos)
                return {"status": "forgotten", "deleted": gone.memories, "user_id": store}
            assert memory_id is not None
            memory = await self._one(person, memory_id)
            tracker.begin()
            await store_call(self.store, self.store.delete, person, [memory.key])
            self._drop_photo(memory)
        return {"status": "forgotten", "deleted": 1, "id": memory.key}

    async def _one(self, person: PersonId, memory_id: str, *, image: bool = False) -> Memory:
        """The store's memory (an image memory when ``image``), or the 404 of that kind."""
        found = await store_call(self.store, self.store.get, person, [MemoryId(memory_id)])
        if found and (not image or found[0].photo is not None):
            return found[0]
        kind, field = ("image", "image_id") if image else ("memory", "memory_id")
        raise errors.not_found(f"{kind} '{memory_id}' not found in this store.",
                               **{field: memory_id})  # fmt: skip

    async def untag(self, store: PersonId, speaker: str) -> int:
        """Remove a speaker's tag from every memory that carries it (the memories stay)."""
        person, untagged = store, 0
        while True:
            select = Search([], 0, speaker=speaker)
            batch = await store_call(self.store, self.store.newest, person, select, None, 256)
            if not batch:
                return untagged
            await store_call(
                self.store, self.store.unset, person, [m.key for m in batch], [schema.SPEAKER]
            )
            untagged += len(batch)

    # ---- reads ------------------------------------------------------------------------------

    async def search(
        self, store: PersonId, query: str, speaker: str | None, limit: int
    ) -> dict[str, Any]:
        text = self._content(query)
        await self._check_speaker(store, speaker, for_read=True)
        [vector] = await embed_async(self.embedder, [text])
        search = Search(vector, limit, speaker=speaker)
        [hits] = await search_async(self.store, store, [search], self.clock())
        return {"memories": [memory_json(h.memory, h.score) for h in hits]}

    async def by_speaker(
        self, store: PersonId, speaker: str, limit: int, before: str | None, skip_ids: list[str]
    ) -> dict[str, Any]:
        await self._check_speaker(store, speaker, for_read=True)
        select = Search([], 0, speaker=speaker)
        page, cursor = await self._newest(store, select, limit, before, skip_ids)
        chunks = [{"id": m.key, "memory_id": m.key, "content": m.text} for m in page]
        return {
            "memories": [memory_json(m) for m in page],
            "chunks": chunks,
            "points_to_delete": [c["id"] for c in chunks],
            **cursor,
        }

    async def images(
        self, store: PersonId, limit: int, before: str | None, skip_ids: list[str]
    ) -> dict[str, Any]:
        """The store's image memories, newest first, paged like by-speaker."""
        select = Search([], 0, source=schema.CAMERA)
        page, cursor = await self._newest(store, select, limit, before, skip_ids)
        return {"images": [image_json(m) for m in page if m.photo is not None], **cursor}

    async def image_file(self, store: PersonId, image_id: str) -> tuple[bytes, str]:
        """A kept photo's bytes and content type."""
        memory = await self._one(store, image_id, image=True)
        assert memory.photo is not None
        data = None if self.photos is None else self.photos.read(store, memory.photo.file)
        if data is None:
            raise errors.not_found(f"the photo of image '{image_id}' is no longer kept.",
                                   image_id=image_id)  # fmt: skip
        return data, memory.photo.content_type

    async def delete_image(
        self, store: PersonId, image_id: str, tracker: WriteTracker
    ) -> dict[str, Any]:
        """The image memory and its photo file."""
        async with self._lock(store):
            memory = await self._one(store, image_id, image=True)
            tracker.begin()
            await store_call(self.store, self.store.delete, store, [memory.key])
            self._drop_photo(memory)
        return {"status": "deleted", "id": memory.key}

    def _drop_photo(self, memory: Memory) -> None:
        if self.photos is not None:
            self.photos.drop(memory)

    async def _newest(
        self, store: PersonId, select: Search, limit: int, before: str | None,
        skip_ids: list[str],
    ) -> tuple[list[Memory], dict[str, Any]]:  # fmt: skip
        """One page of the memories ``select`` picks, newest first, and the cursor to the next:
        ``next_before`` (a time) with ``next_skip_ids`` (the ids at exactly that time already
        shown — memories may share a timestamp)."""
        cutoff = parse_iso(before) if before else None
        skip = set(skip_ids)
        fetched = await store_call(
            self.store,
            self.store.newest,
            store,
            select,
            None if cutoff is None else cutoff + 1e-6,
            limit + len(skip) + 1,
        )
        fresh = [
            m
            for m in fetched
            if m.key not in skip and (cutoff is None or m.created_at <= cutoff + TIE)
        ]
        page, more = fresh[:limit], len(fresh) > limit
        next_before: str | None = None
        next_skip: list[str] = []
        if page and more:
            last = page[-1].created_at
            next_before = iso(last)
            next_skip = [m.key for m in page if abs(m.created_at - last) <= TIE]
            if cutoff is not None and abs(cutoff - last) <= TIE:
                next_skip = [*skip_ids, *next_skip]
        return page, {"next_before": next_before, "next_skip_ids": next_skip}

    async def speaker_counts(self, store: PersonId, names: list[str]) -> dict[str, int]:
        person = store
        return {
            name: await store_call(self.store, self.store.count, person, name) for name in names
        }
