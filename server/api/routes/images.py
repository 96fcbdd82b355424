"""Image memories: the photos camera boards sent (``server.vision``), listed newest first with
the by-speaker cursor, each photo's bytes, and ``DELETE /image`` (Idempotency-Key accepted).
Search finds them by their description like any memory (``/search``: an ``image`` field).

No ``from __future__ import annotations``: FastAPI reads route annotations at definition time."""

import uuid

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memory.identity import DEFAULT_STORE
from server.api.bodies import DeleteImageBody, ImagesBody
from server.api.deps import PREFIX, WRITE, Caller, Ctx, answer, read, store_of, sunset

router = APIRouter()


@router.post(f"{PREFIX}/images", summary="The store's photos, newest first (cursor paging)")
async def images(request: Request, body: ImagesBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    skip = [str(i) for i in body.skip_ids]
    return await read(request, await ctx.service.images(user, body.limit, body.before, skip))


@router.get(f"{PREFIX}/images/{{image_id}}/file", summary="One kept photo's bytes")
async def image_file(
    request: Request, image_id: uuid.UUID, key: Caller, ctx: Ctx, user_id: str = DEFAULT_STORE
) -> Response:
    user = await store_of(ctx, key, user_id)
    data, content_type = await ctx.service.image_file(user, str(image_id))
    headers = {**sunset(request), "Cache-Control": "private, no-store"}
    return Response(data, media_type=content_type, headers=headers)


@router.delete(
    f"{PREFIX}/image", summary="Remove one image memory and its photo", dependencies=WRITE
)
async def delete_image(request: Request, body: DeleteImageBody, key: Caller, ctx: Ctx) -> Response:
    user = await store_of(ctx, key, body.user_id)
    image_id = str(body.image_id)
    return await answer(ctx, request, key, lambda t: ctx.service.delete_image(user, image_id, t))
