"""The client: one class for synchronous code (``Client``) and one for asyncio
(``AsyncClient``), the same calls on both, typed answers as plain dicts (the API's own shapes).

Writes carry an Idempotency-Key — the caller's, or one derived from what is written (so a retry
of the same write by a re-run job is replayed, never stored twice); a 409 that carries
``retry_after_ms`` (the same key still running) is retried after that wait, a few times."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from hearth_memory.errors import Conflict, from_answer

PREFIX = "/api/v1/memory"
RETRIES_ON_409 = 5
Json = dict[str, Any]


def derived_key(method: str, path: str, body: Json | None) -> str:
    """An Idempotency-Key made of what is written: the same write → the same key."""
    raw = json.dumps([method, path, body], sort_keys=True, ensure_ascii=False)
    return "hm:" + hashlib.sha256(raw.encode()).hexdigest()[:40]


def _metadata(speaker: str | None) -> Json:
    return {"metadata": {"speaker": speaker}} if speaker is not None else {}


class _Calls:
    """The request bodies, shared by both clients (one home for the API's shapes)."""

    @staticmethod
    def add(store: str, content: str, speaker: str | None) -> Json:
        return {"user_id": store, "content": content, **_metadata(speaker)}

    @staticmethod
    def add_turn(store: str, user: str, assistant: str | None, speaker: str | None,
                 timestamp: float | None) -> Json:  # fmt: skip
        body: Json = {"user_id": store, "user": user, **_metadata(speaker)}
        if assistant is not None:
            body["assistant"] = assistant
        if timestamp is not None:
            body["timestamp"] = timestamp
        return body

    @staticmethod
    def add_many(store: str, items: list[tuple[str, str | None]]) -> Json:
        return {"user_id": store,
                "items": [{"content": c, **_metadata(s)} for c, s in items]}  # fmt: skip

    @staticmethod
    def next_page(body: Json, answer: Json) -> Json | None:
        """The request for the page after ``answer`` (None: that was the last): the cursor goes
        back as ``next_before`` + ``next_skip_ids`` (memories may share a timestamp)."""
        if answer.get("next_before") is None:
            return None
        return {**body, "next_before": answer["next_before"],
                "next_skip_ids": answer["next_skip_ids"]}  # fmt: skip


class Client:
    """Synchronous client: ``Client(base_url, api_key)``; use as a context manager or close()."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 30.0,
                 model: str | None = None) -> None:  # fmt: skip
        headers = {"X-API-Key": api_key, **({"X-WOS-Model": model} if model else {})}
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: Json | None = None, *,
              write: bool = False, key: str | None = None,
              params: Json | None = None) -> Json:  # fmt: skip
        headers = {}
        if write:
            headers["Idempotency-Key"] = key or derived_key(method, path, body)
        for attempt in range(RETRIES_ON_409 + 1):
            answer = self._http.request(method, PREFIX + path, json=body, headers=headers,
                                        params=params)  # fmt: skip
            if answer.is_success:
                found: Json = answer.json()
                return found
            error = from_answer(answer.status_code, _json(answer))
            if isinstance(error, Conflict) and error.retry_after_ms and attempt < RETRIES_ON_409:
                time.sleep(error.retry_after_ms / 1000)
                continue
            raise error
        raise AssertionError("unreachable")

    # ---- stores and speakers ---------------------------------------------------------------

    def create_store(self, store: str, *, key: str | None = None) -> Json:
        return self._call("POST", "/collection", {"user_id": store}, write=True, key=key)

    def add_speaker(self, store: str, speaker: str, *, key: str | None = None) -> Json:
        body = {"user_id": store, "speaker": speaker}
        return self._call("POST", "/speakers", body, write=True, key=key)

    def list_speakers(self, store: str) -> Json:
        return self._call("GET", "/speakers", params={"user_id": store})

    def remove_speaker(self, store: str, speaker: str, *, key: str | None = None) -> Json:
        body = {"user_id": store, "speaker": speaker}
        return self._call("DELETE", "/speakers", body, write=True, key=key)

    # ---- memories --------------------------------------------------------------------------

    def add(self, store: str, content: str, *, speaker: str | None = None,
            key: str | None = None) -> Json:  # fmt: skip
        return self._call("POST", "/store", _Calls.add(store, content, speaker), write=True,
                          key=key)  # fmt: skip

    def add_turn(self, store: str, user: str, assistant: str | None = None, *,
                 speaker: str | None = None, timestamp: float | None = None,
                 key: str | None = None) -> Json:  # fmt: skip
        body = _Calls.add_turn(store, user, assistant, speaker, timestamp)
        return self._call("POST", "/store-turn", body, write=True, key=key)

    def turn(self, store: str, turn_id: str) -> Json:
        return self._call("GET", f"/turns/{turn_id}", params={"user_id": store})

    def add_many(self, store: str, items: list[tuple[str, str | None]], *,
                 key: str | None = None) -> Json:  # fmt: skip
        return self._call("POST", "/bulk-store", _Calls.add_many(store, items), write=True,
                          key=key)  # fmt: skip

    def search(self, store: str, query: str, *, speaker: str | None = None,
               limit: int = 10) -> Json:  # fmt: skip
        body: Json = {"user_id": store, "query": query, "limit": limit}
        if speaker is not None:
            body["speaker"] = speaker
        return self._call("POST", "/search", body)

    def by_speaker(self, store: str, speaker: str, *, page: int = 50) -> Iterator[Json]:
        """Every memory the speaker said, newest first, across pages (the cursor handled)."""
        yield from self._pages("/by-speaker", {"user_id": store, "speaker": speaker,
                                               "limit": page}, "memories")  # fmt: skip

    def _pages(self, path: str, first: Json, field: str) -> Iterator[Json]:
        body: Json | None = first
        while body is not None:
            answer = self._call("POST", path, body)
            yield from answer[field]
            body = _Calls.next_page(body, answer)

    def supersede(self, store: str, memory_id: str, content: str, *,
                  key: str | None = None) -> Json:  # fmt: skip
        body = {"user_id": store, "memory_id": memory_id, "content": content}
        return self._call("POST", "/supersede", body, write=True, key=key)

    def forget(self, store: str, memory_id: str | None = None, *, everything: bool = False,
               key: str | None = None) -> Json:  # fmt: skip
        body: Json = {"user_id": store, "all": True} if everything else {
            "user_id": store, "memory_id": memory_id}  # fmt: skip
        return self._call("POST", "/forget", body, write=True, key=key)

    def expand(self, store: str, memory_id: str) -> Json:
        return self._call("POST", "/expand", {"user_id": store, "memory_id": memory_id})

    # ---- images (photos camera boards sent) ------------------------------------------------

    def images(self, store: str, *, page: int = 20) -> Iterator[Json]:
        """Every image memory of the store, newest first, across pages."""
        yield from self._pages("/images", {"user_id": store, "limit": page}, "images")

    def image_file(self, store: str, image_id: str) -> bytes:
        """The photo itself (its content type is the image's ``content_type``)."""
        answer = self._http.get(f"{PREFIX}/images/{image_id}/file", params={"user_id": store})
        if not answer.is_success:
            raise from_answer(answer.status_code, _json(answer))
        return answer.content

    def delete_image(self, store: str, image_id: str, *, key: str | None = None) -> Json:
        body = {"user_id": store, "image_id": image_id}
        return self._call("DELETE", "/image", body, write=True, key=key)


class AsyncClient:
    """The same calls for asyncio: ``async with AsyncClient(base_url, api_key) as memory:``."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 30.0,
                 model: str | None = None) -> None:  # fmt: skip
        headers = {"X-API-Key": api_key, **({"X-WOS-Model": model} if model else {})}
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=headers,
                                       timeout=timeout)  # fmt: skip

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, body: Json | None = None, *,
                    write: bool = False, key: str | None = None,
                    params: Json | None = None) -> Json:  # fmt: skip
        headers = {}
        if write:
            headers["Idempotency-Key"] = key or derived_key(method, path, body)
        for attempt in range(RETRIES_ON_409 + 1):
            answer = await self._http.request(method, PREFIX + path, json=body, headers=headers,
                                              params=params)  # fmt: skip
            if answer.is_success:
                found: Json = answer.json()
                return found
            error = from_answer(answer.status_code, _json(answer))
            if isinstance(error, Conflict) and error.retry_after_ms and attempt < RETRIES_ON_409:
                await asyncio.sleep(error.retry_after_ms / 1000)
                continue
            raise error
        raise AssertionError("unreachable")

    async def create_store(self, store: str, *, key: str | None = None) -> Json:
        return await self._call("POST", "/collection", {"user_id": store}, write=True, key=key)

    async def add_speaker(self, store: str, speaker: str, *, key: str | None = None) -> Json:
        body = {"user_id": store, "speaker": speaker}
        return await self._call("POST", "/speakers", body, write=True, key=key)

    async def list_speakers(self, store: str) -> Json:
        return await self._call("GET", "/speakers", params={"user_id": store})

    async def remove_speaker(self, store: str, speaker: str, *, key: str | None = None) -> Json:
        body = {"user_id": store, "speaker": speaker}
        return await self._call("DELETE", "/speakers", body, write=True, key=key)

    async def add(self, store: str, content: str, *, speaker: str | None = None,
                  key: str | None = None) -> Json:  # fmt: skip
        return await self._call("POST", "/store", _Calls.add(store, content, speaker),
                                write=True, key=key)  # fmt: skip

    async def add_turn(self, store: str, user: str, assistant: str | None = None, *,
                       speaker: str | None = None, timestamp: float | None = None,
                       key: str | None = None) -> Json:  # fmt: skip
        body = _Calls.add_turn(store, user, assistant, speaker, timestamp)
        return await self._call("POST", "/store-turn", body, write=True, key=key)

    async def turn(self, store: str, turn_id: str) -> Json:
        return await self._call("GET", f"/turns/{turn_id}", params={"user_id": store})

    async def add_many(self, store: str, items: list[tuple[str, str | None]], *,
                       key: str | None = None) -> Json:  # fmt: skip
        return await self._call("POST", "/bulk-store", _Calls.add_many(store, items),
                                write=True, key=key)  # fmt: skip

    async def search(self, store: str, query: str, *, speaker: str | None = None,
                     limit: int = 10) -> Json:  # fmt: skip
        body: Json = {"user_id": store, "query": query, "limit": limit}
        if speaker is not None:
            body["speaker"] = speaker
        return await self._call("POST", "/search", body)

    async def by_speaker(self, store: str, speaker: str, *, page: int = 50) -> AsyncIterator[Json]:
        first: Json = {"user_id": store, "speaker": speaker, "limit": page}
        async for memory in self._pages("/by-speaker", first, "memories"):
            yield memory

    async def _pages(self, path: str, first: Json, field: str) -> AsyncIterator[Json]:
        body: Json | None = first
        while body is not None:
            answer = await self._call("POST", path, body)
            for item in answer[field]:
                yield item
            body = _Calls.next_page(body, answer)

    async def supersede(self, store: str, memory_id: str, content: str, *,
                        key: str | None = None) -> Json:  # fmt: skip
        body = {"user_id": store, "memory_id": memory_id, "content": content}
        return await self._call("POST", "/supersede", body, write=True, key=key)

    async def forget(self, store: str, memory_id: str | None = None, *,
                     everything: bool = False, key: str | None = None) -> Json:  # fmt: skip
        body: Json = {"user_id": store, "all": True} if everything else {
            "user_id": store, "memory_id": memory_id}  # fmt: skip
        return await self._call("POST", "/forget", body, write=True, key=key)

    async def expand(self, store: str, memory_id: str) -> Json:
        return await self._call("POST", "/expand", {"user_id": store, "memory_id": memory_id})

    async def images(self, store: str, *, page: int = 20) -> AsyncIterator[Json]:
        async for image in self._pages("/images", {"user_id": store, "limit": page}, "images"):
            yield image

    async def image_file(self, store: str, image_id: str) -> bytes:
        answer = await self._http.get(f"{PREFIX}/images/{image_id}/file",
                                      params={"user_id": store})  # fmt: skip
        if not answer.is_success:
            raise from_answer(answer.status_code, _json(answer))
        return answer.content

    async def delete_image(self, store: str, image_id: str, *, key: str | None = None) -> Json:
        body = {"user_id": store, "image_id": image_id}
        return await self._call("DELETE", "/image", body, write=True, key=key)


def _json(answer: httpx.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return answer.text
