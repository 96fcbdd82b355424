"""Registered speakers ("who said it"): register, list with memory counts, unregister.

No ``from __future__ import annotations``: FastAPI reads route annotations at definition time."""

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from server.api import errors
from server.api.bodies import SpeakerBody
from server.api.deps import PREFIX, WRITE, Caller, Ctx, answer, body_user_id, read, store_of
from server.api.idempotency import WriteTracker
from server.api.names import registrable

router = APIRouter()


@router.post(f"{PREFIX}/speakers", summary="Register a speaker", dependencies=WRITE)
async def add_speaker(request: Request, body: SpeakerBody, key: Caller, ctx: Ctx) -> Response:
    store = await store_of(ctx, key, body.user_id)
    name = registrable(body.speaker)

    async def attempt(tracker: WriteTracker) -> dict[str, Any]:
        tracker.begin()
        registered = await ctx.speakers.register(store, name, ctx.settings.speaker_limit)
        if registered is None:
            raise errors.speaker_limit(ctx.settings.speaker_limit)
        created_at, new = registered
        return {
            "user_id": body.user_id,
            "speaker": name,
            "created_at": created_at,
            "status": "registered" if new else "exists",
        }

    return await answer(ctx, request, key, attempt)


@router.get(f"{PREFIX}/speakers", summary="List registered speakers with memory counts")
async def list_speakers(
    request: Request, key: Caller, ctx: Ctx, user_id: Annotated[str | None, Query()] = None
) -> Response:
    raw = user_id if user_id is not None else await body_user_id(request)
    store = await store_of(ctx, key, raw)
    registered = await ctx.speakers.all(store)
    counts = await ctx.service.speaker_counts(store, sorted(registered))
    listed = [
        {"speaker": name, "memories": counts[name], "created_at": registered[name]}
        for name in sorted(registered, key=lambda n: registered[n])
    ]
    return await read(
        request,
        {
            "user_id": raw,
            "speakers": listed,
            "count": len(listed),
            "limit": ctx.settings.speaker_limit,
        },
    )


@router.delete(
    f"{PREFIX}/speakers",
    summary="Unregister a speaker (memories stay, tag goes)",
    dependencies=WRITE,
)
async def remove_speaker(request: Request, body: SpeakerBody, key: Caller, ctx: Ctx) -> Response:
    store = await store_of(ctx, key, body.user_id)
    name = registrable(body.speaker)
    if not await ctx.speakers.registered(store, name):
        raise errors.speaker_unknown(name)

    async def attempt(tracker: WriteTracker) -> dict[str, Any]:
        tracker.begin()
        untagged = await ctx.service.untag(store, name)
        await ctx.speakers.remove(store, name)
        return {
            "user_id": body.user_id,
            "speaker": name,
            "status": "removed",
            "memories_untagged": untagged,
        }

    return await answer(ctx, request, key, attempt)
