"""Admin HTTP API for operator commands while the server owns the embedded store.

Qdrant Edge (like Qdrant local mode) lets only one process open its folder, so ``hearth memory …``
talks to the running server here when it is up. Bearer token: ``data_dir/secrets/admin_token``
(or ``auth.admin_token``), readable only by the account that runs Hearth.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memory.identity import IdentityError, person_id
from memory.importer import LineError, MemoryLine, import_memories, parse_lines
from memory.locks import PersonBusyError, holding_person
from memory.schema import CUED_CLASSES, Memory, PersonId
from memory.store import store_call
from memory.writes import (
    LOCK_WAIT_S,
    NoTagging,
    TagRequests,
    mark_for_cues,
    mark_for_tagging,
    request_tags,
)
from server.memory.engine import MemoryEngine
from server.persons import PersonMap
from server.traces import TraceStore
from server.voices.checks import Refusal
from server.voices.embedder import shared_embedder
from server.voices.enrol import enrol_member
from server.voices.store import HouseholdFull, VoiceStore
from server.voices.wav import wav_to_pcm16k
from server.voices.weights import WeightsError

Handler = Callable[[Request], Awaitable[Response]]


def _guarded(token: str, handler: Handler) -> Handler:
    """Every admin endpoint: bearer token first, nothing is trusted by source address."""

    async def guarded(request: Request) -> Response:
        supplied = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(supplied.encode(), token.encode()):
            return JSONResponse(
                {"error": "admin API needs Authorization: Bearer <admin token>"}, 401
            )
        return await handler(request)

    return guarded


async def _import_locked(
    memory: MemoryEngine, redis: Redis | None, lines: list[MemoryLine], who: PersonId
) -> list[Memory]:
    """An import under the person's write lock (what a write job holds: the cue points it
    shares with them are read and written back), off the event loop."""
    async with contextlib.AsyncExitStack() as stack:
        if redis is not None:
            await stack.enter_async_context(holding_person(redis, who, LOCK_WAIT_S))
        return await asyncio.to_thread(import_memories, lines, who, memory.embedder, memory.store)


def admin_routes(
    memory: MemoryEngine | None,
    token: str,
    redis: Redis | None = None,
    tags: TagRequests | None = None,
) -> list[Route]:
    admin = _MemoryAdmin(memory, redis, tags or NoTagging())
    return [
        Route("/admin/memory/recall", _guarded(token, admin.recall), methods=["POST"]),
        Route("/admin/memory/import", _guarded(token, admin.import_), methods=["POST"]),
        Route("/admin/memory/cues", _guarded(token, admin.cues), methods=["POST"]),
    ]


@dataclass(frozen=True, slots=True)
class _MemoryAdmin:
    """The admin API's memory operations: recall as a turn would, import lines, remake cues."""

    memory: MemoryEngine | None
    redis: Redis | None
    tags: TagRequests

    async def recall(self, request: Request) -> Response:
        if self.memory is None:
            return _no_memory()
        body = await request.json()
        person, question = str(body.get("person", "")), str(body.get("question", ""))
        if not person or not question:
            return JSONResponse({"error": "person and question are required"}, 400)
        try:
            who = person_id(person)
        except IdentityError as exc:
            return JSONResponse({"error": exc.message}, 400)
        result = await self.memory.read_path.recall(who, question, time.time())
        return JSONResponse(result.as_json())

    async def import_(self, request: Request) -> Response:
        if self.memory is None:
            return _no_memory()
        body = await request.json()
        person = str(body.get("person", ""))
        if not person:
            return JSONResponse({"error": "person is required"}, 400)
        try:
            lines = parse_lines(str(body.get("jsonl", "")).splitlines())
        except LineError as exc:
            return JSONResponse({"error": str(exc), "line": exc.line}, 400)
        try:
            who = person_id(person)
        except IdentityError as exc:
            return JSONResponse({"error": exc.message}, 400)
        try:
            stored = await _import_locked(self.memory, self.redis, lines, who)
        except RedisError as exc:
            return JSONResponse(
                {"error": f"Redis is unreachable ({exc!r:.120}): an import takes the person's "
                          "write lock there first; nothing was imported"}, 503
            )  # fmt: skip
        except PersonBusyError as exc:
            return JSONResponse({"error": f"{exc}; nothing was imported, try again"}, 409)
        if self.memory.names is not None:  # the names it brings, for the next turn's round 1
            self.memory.names.refresh(who)
        pending = [m.key for m in stored if m.tags_pending]
        # lines with a constraint or preference class and no cues: the worker makes them
        given = {line.text.strip() for line in lines if line.cues}
        cue = [m.key for m in stored
               if not m.tags_pending and m.cls in CUED_CLASSES and m.text not in given]  # fmt: skip
        if (pending or cue) and self.redis is not None:  # lines without a class: tagged there too
            await mark_for_tagging(self.redis, who, pending)
            await mark_for_cues(self.redis, who, cue)
            await request_tags(self.tags, who)
        return JSONResponse(
            {"imported": len(stored), "person": person, "tags_pending": len(pending),
             "cues_pending": len(cue)}
        )  # fmt: skip

    async def cues(self, request: Request) -> Response:
        """(Re)make the cues of every constraint and preference of a person — memories stored
        before cues existed, or after a change of write model. The worker does it."""
        if self.memory is None:
            return _no_memory()
        if self.redis is None:
            return JSONResponse({"error": "cues need the worker (Redis)"}, 409)
        body = await request.json()
        try:
            who = person_id(str(body.get("person", "")))
        except IdentityError as exc:
            return JSONResponse({"error": exc.message}, 400)
        queued: list[str] = []
        offset: str | None = None
        while True:
            page = await store_call(
                self.memory.store, self.memory.store.scroll, who, None, 256, offset
            )
            queued += [m.key for m in page.memories if m.cls in CUED_CLASSES]
            offset = page.next_offset
            if offset is None:
                break
        await mark_for_cues(self.redis, who, queued)
        if queued:
            await request_tags(self.tags, who)  # the tag job makes pending cues too
        return JSONResponse({"person": who, "cues_pending": len(queued)})


def _no_memory() -> Response:
    return JSONResponse({"error": "memory is disabled (memory.enabled: false)"}, 409)


def trace_routes(traces: TraceStore, token: str) -> list[Route]:
    """What each turn of a session recalled, called and answered (kept ``trace_ttl_s``)."""

    async def turns(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        return JSONResponse({"session_id": session_id, "turns": await traces.turns(session_id)})

    return [Route("/admin/sessions/{session_id}/turns", _guarded(token, turns), methods=["GET"])]


def person_routes(persons: PersonMap, token: str) -> list[Route]:
    """person_map edits over HTTP (admins): GET lists, POST maps, DELETE unmaps."""

    async def persons_endpoint(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"person_map": await persons.all()})
        body = await request.json()
        device = str(body.get("device_id", ""))
        if request.method == "DELETE":
            return JSONResponse({"device_id": device, "removed": await persons.unmap(device)})
        try:
            person = await persons.map(device, str(body.get("person", "")))
        except IdentityError as exc:
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"device_id": device, "person": person})

    return [
        Route(
            "/admin/persons", _guarded(token, persons_endpoint), methods=["GET", "POST", "DELETE"]
        )
    ]


def status_routes(status: Callable[[], dict[str, object]], token: str) -> list[Route]:
    """Each child process of ``hearth up``: up or down, restarts, last exit (``hearth status``)."""

    async def status_endpoint(_request: Request) -> Response:
        return JSONResponse(status())

    return [Route("/admin/status", _guarded(token, status_endpoint), methods=["GET"])]


def voice_routes(redis: Redis, weights: Path, token: str) -> list[Route]:
    """A household's voices over HTTP (admins): GET lists the members and the bytes held, POST
    enrols a member from three base64 WAV sentences, PATCH marks a member private or shared,
    DELETE removes a member's voice data."""
    store = VoiceStore(redis)

    async def household_voices(request: Request) -> Response:
        household = request.path_params["household"]
        voices = await store.voices(household)
        members = [
            {"member": v.member, "speaker": v.speaker, "voiceprints": len(v.prints),
             "enrolled_at": v.enrolled_at, "private": v.private}
            for v in voices
        ]  # fmt: skip
        size = await store.size_bytes(household)
        return JSONResponse({"household": household, "members": members, "bytes": size})

    async def member_voice(request: Request) -> Response:
        household, member = request.path_params["household"], request.path_params["member"]
        if request.method == "DELETE":
            return JSONResponse(
                {"member": member, "removed": await store.remove(household, member)}
            )
        if request.method == "PATCH":
            return await _member_privacy(request, store, household, member)
        return await _enrol_member(request, store, weights, household, member)

    return [
        Route("/admin/voices/{household}", _guarded(token, household_voices), methods=["GET"]),
        Route(
            "/admin/voices/{household}/{member}",
            _guarded(token, member_voice),
            methods=["POST", "PATCH", "DELETE"],
        ),
    ]


async def _member_privacy(
    request: Request, store: VoiceStore, household: str, member: str
) -> Response:
    """PATCH ``{"private": true|false}``: nothing of the member's memory read to another voice,
    or their constraints shared with the household again (docs/voices.md)."""
    try:
        body = await request.json()
        private = body["private"]
        if not isinstance(private, bool):
            raise TypeError("private must be true or false")
    except (ValueError, KeyError, TypeError) as exc:
        return JSONResponse({"error": f'body must be {{"private": true|false}}: {exc}'}, 400)
    try:
        voice = await store.set_private(household, member, private)
    except IdentityError as exc:
        return JSONResponse({"error": str(exc)}, 400)
    if voice is None:
        return JSONResponse({"error": f"{member} is not enrolled in {household}"}, 404)
    return JSONResponse({"household": household, "member": voice.member, "private": voice.private})


async def _enrol_member(
    request: Request, store: VoiceStore, weights: Path, household: str, member: str
) -> Response:
    try:
        body = await request.json()
        sentences = [wav_to_pcm16k(base64.b64decode(s, validate=True)) for s in body["sentences"]]
        speaker = str(body.get("speaker") or member)
    except (ValueError, KeyError, TypeError) as exc:  # JSON, base64, WAV or shape
        return JSONResponse(
            {"error": f'body must be {{"sentences": [three base64 WAV files], "speaker"?}}: {exc}'},
            400,
        )
    try:
        embedder = await asyncio.to_thread(shared_embedder, weights)
        voice = await enrol_member(store.redis, embedder, household, member, speaker, sentences)
    except Refusal as exc:
        status = 409 if exc.reason == "same_voice" else 422
        return JSONResponse(
            {"error": str(exc), "reason": exc.reason, "sentence": exc.sentence,
             "member": exc.member},
            status,
        )  # fmt: skip
    except HouseholdFull as exc:
        return JSONResponse({"error": str(exc), "reason": "household_full"}, 409)
    except IdentityError as exc:
        return JSONResponse({"error": str(exc)}, 400)
    except WeightsError as exc:
        return JSONResponse({"error": str(exc)}, 503)
    return JSONResponse(
        {"household": household, "member": voice.member, "speaker": voice.speaker,
         "voiceprints": len(voice.prints), "bytes": await store.size_bytes(household)}
    )  # fmt: skip
