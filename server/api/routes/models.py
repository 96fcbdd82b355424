"""``GET /api/v1/models`` and the OpenAPI document (both need a key).

No ``from __future__ import annotations``: FastAPI reads route annotations at definition time."""

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from server.api.deps import Caller, Ctx, sunset

router = APIRouter()


@router.get("/api/v1/models", summary="Models that can read the memory")
async def list_models(request: Request, key: Caller, ctx: Ctx) -> Response:
    listed = [{"id": m.id, "retires_at": m.retires_at} for m in ctx.settings.models]
    return JSONResponse({"models": listed}, headers=sunset(request))


@router.get("/api/v1/openapi.json", include_in_schema=False)
async def openapi(request: Request, key: Caller) -> Response:
    return JSONResponse(request.app.openapi())
