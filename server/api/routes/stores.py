"""Stores (``/collection``): create (workspace keys only), list, delete with every memory.

No ``from __future__ import annotations``: FastAPI reads route annotations at definition time."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from server.api import errors
from server.api.bodies import CollectionBody
from server.api.deps import PREFIX, WRITE, Caller, Ctx, answer, read, store_of
from server.api.errors import ApiError, ErrorType
from server.api.idempotency import WriteTracker
from server.api.names import store_id

router = APIRouter()


@router.post(f"{PREFIX}/collection", summary="Create a store", dependencies=WRITE)
async def create_collection(
    request: Request, body: CollectionBody, key: Caller, ctx: Ctx
) -> Response:
    store = store_id(body.user_id)
    if not key.workspace:
        raise errors.store_not_found(body.user_id) if not key.may_use(store) else _workspace_only()

    async def attempt(tracker: WriteTracker) -> dict[str, Any]:
        tracker.begin()
        info, created = await ctx.stores.create(store, body.user_id)
        return {
            "user_id": info.id,
            "created_at": info.created_at,
            "status": "created" if created else "exists",
        }

    return await answer(ctx, request, key, attempt)


@router.get(f"{PREFIX}/collection", summary="List the stores this key may use")
async def list_collections(request: Request, key: Caller, ctx: Ctx) -> Response:
    stores = [s for s in await ctx.stores.all() if key.may_use(s.id.lower())]
    listed = [{"user_id": s.id, "created_at": s.created_at} for s in stores]
    return await read(request, {"collections": listed, "count": len(listed)})


@router.delete(
    f"{PREFIX}/collection", summary="Delete a store, its memories and speakers", dependencies=WRITE
)
async def delete_collection(
    request: Request, body: CollectionBody, key: Caller, ctx: Ctx
) -> Response:
    store = await store_of(ctx, key, body.user_id)

    async def attempt(tracker: WriteTracker) -> dict[str, Any]:
        result = await ctx.service.forget(store, None, True, tracker)
        await ctx.stores.delete(store)
        return {
            "user_id": body.user_id,
            "status": "deleted",
            "memories_deleted": result["deleted"],
        }

    return await answer(ctx, request, key, attempt)


def _workspace_only() -> ApiError:
    return ApiError(
        403, ErrorType.PERMISSION, "only a workspace key (all stores) may create stores."
    )
