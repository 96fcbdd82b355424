"""The memory HTTP API under ``/api/v1/memory/…`` (FastAPI): the app, its error envelope for
every failure, and the routes (``server.api.routes``, one module per resource) reading a typed
state (``server.api.deps.ApiContext``). Every call needs ``X-API-Key``; a key reaches only its
stores and answers 404 for any other, exactly as for a store that does not exist."""

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from redis.exceptions import RedisError
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Scope

from server.api import errors
from server.api.deps import KEY_REQUIRED, ApiContext
from server.api.errors import ApiError, ErrorType
from server.api.routes import memories, models, speakers, stores
from server.body_guard import Authenticate, BodyGuard

__all__ = ["ApiContext", "build_api"]
log = structlog.get_logger(__name__)


def build_api(ctx: ApiContext) -> ASGIApp:
    """The API, behind its body guard: a body above ``api.max_body_bytes`` (declared or
    streamed) is refused with 413 before it is read, and the API key is checked on the headers
    before any body is read or parsed (an unauthenticated flood is answered 401 at once)."""
    return BodyGuard(_api(ctx), ctx.settings.max_body_bytes, _too_large, _key_first(ctx))


def _too_large(limit: int) -> Response:
    return ApiError(
        413, ErrorType.TOO_LARGE, f"request bodies are at most {limit} bytes."
    ).response()


def _key_first(ctx: ApiContext) -> Authenticate:
    async def authenticate(scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        bearer = headers.get("authorization", "").removeprefix("Bearer ").strip()
        try:
            key = await ctx.keys.lookup(headers.get("x-api-key") or bearer)
        except RedisError as exc:
            log.error("api.redis_unavailable", error=str(exc))
            return errors.unavailable("Redis").response()
        if key is None:
            return ApiError(401, ErrorType.AUTHENTICATION, KEY_REQUIRED).response()
        return None

    return authenticate


def _api(ctx: ApiContext) -> FastAPI:
    app = FastAPI(
        title="Hearth memory API",
        version="1",
        description="Stores, speakers ('who said it'), store/search with Idempotency-Key.",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.hearth = ctx

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return errors.invalid(f"{where}: {first.get('msg', 'invalid')}", param=where).response()

    @app.exception_handler(Exception)
    async def engine_failed(request: Request, exc: Exception) -> Response:
        """Anything else (the memory store or the embedder failing): the envelope, never a bare
        500 page. Under an Idempotency-Key a write that had begun is kept as outcome unknown."""
        log.error("api.failed", path=request.url.path, error=repr(exc))
        return ApiError(500, ErrorType.API,
                        "The memory engine failed; see the server log.").response()  # fmt: skip

    @app.exception_handler(RedisError)
    async def redis_down(request: Request, exc: RedisError) -> Response:
        log.error("api.redis_unavailable", error=str(exc))
        return errors.unavailable("Redis").response()

    for module in (stores, speakers, memories, models):
        app.include_router(module.router)
    return app
