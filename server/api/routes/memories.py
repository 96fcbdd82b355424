"""Memories: store, search, by-speaker pages, supersede, forget.

No ``from __future__ import annotations``: FastAPI reads route annotations at definition time."""

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memory.identity import DEFAULT_STORE
from server.api import errors
from server.api.bodies import (
    BulkStoreBody,
    BySpeakerBody,
    ExpandBody,
    ForgetBody,
    SearchBody,
    StoreBody,
    StoreMetadata,
    StoreTurnBody,
    SupersedeBody,
)
from server.api.deps import PREFIX, WRITE, Caller, Ctx, answer, read, store_of
from server.api.names import speaker_name

router = APIRouter()


@router.post(f"{PREFIX}/store", summary="Store one memory", dependencies=WRITE)
async def store(request: Request, body: StoreBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    speaker = _speaker(body.metadata)
    return await answer(
        ctx, request, key, lambda t: ctx.service.store_memory(user, body.content, speaker, t)
    )


def _speaker(metadata: StoreMetadata | None) -> str | None:
    """``metadata.speaker``, checked as a speaker name (None: no speaker)."""
    raw = metadata.speaker if metadata else None
    return speaker_name(raw) if raw is not None else None


@router.post(
    f"{PREFIX}/bulk-store",
    summary="Store up to 100 memories, each with its own status",
    dependencies=WRITE,
)
async def bulk_store(request: Request, body: BulkStoreBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    items = [(i.content, i.metadata.speaker if i.metadata else None) for i in body.items]
    return await answer(ctx, request, key, lambda t: ctx.service.bulk_store(user, items, t))


@router.post(
    f"{PREFIX}/store-turn",
    summary="Remember one exchange (extraction + merge, async)",
    dependencies=WRITE,
)
async def store_turn(request: Request, body: StoreTurnBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    speaker = _speaker(body.metadata)
    return await answer(
        ctx, request, key,
        lambda t: ctx.service.store_turn(user, body.user, body.assistant, speaker,
                                         body.timestamp, t),
        status=202,
    )  # fmt: skip


@router.get(f"{PREFIX}/turns/{{turn_id}}", summary="What a stored turn remembered")
async def turn(
    request: Request, turn_id: str, key: Caller, ctx: Ctx, user_id: str = DEFAULT_STORE
) -> Response:
    user = await store_of(ctx, key, user_id)
    return await read(request, await ctx.service.turn(user, turn_id))


@router.post(f"{PREFIX}/expand", summary="Why a memory is remembered: its conversation or call")
async def expand(request: Request, body: ExpandBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    return await read(request, await ctx.service.expand(user, str(body.memory_id)))


@router.post(f"{PREFIX}/search", summary="Search memories, optionally one speaker's")
async def search(request: Request, body: SearchBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    speaker = speaker_name(body.speaker) if body.speaker is not None else None
    return await read(request, await ctx.service.search(user, body.query, speaker, body.limit))


@router.post(f"{PREFIX}/by-speaker", summary="What one speaker said, newest first")
async def by_speaker(request: Request, body: BySpeakerBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    found = await ctx.service.by_speaker(
        user,
        speaker_name(body.speaker),
        body.limit,
        body.before,
        [str(i) for i in body.skip_ids],
    )
    return await read(request, found)


@router.post(
    f"{PREFIX}/supersede",
    summary="Replace a memory's text (old text kept in history)",
    dependencies=WRITE,
)
async def supersede(request: Request, body: SupersedeBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    return await answer(
        ctx,
        request,
        key,
        lambda t: ctx.service.supersede(user, str(body.memory_id), body.content, t),
    )


@router.post(
    f"{PREFIX}/forget", summary="Forget one memory, or every memory of a store", dependencies=WRITE
)
async def forget(request: Request, body: ForgetBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    if (body.memory_id is None) == (not body.all):
        raise errors.invalid("send exactly one of memory_id or all: true.", param="memory_id")
    memory_id = str(body.memory_id) if body.memory_id else None
    forget_ = ctx.service.forget
    return await answer(ctx, request, key, lambda t: forget_(user, memory_id, body.all, t))
