"""The memory HTTP API under ``/api/v1/memory/…`` (FastAPI): the app, its error envelope for
every failure, and the routes (``server.api.routes``, one module per resource) reading a typed
state (``server.api.deps.ApiContext``). Every call needs ``X-API-Key``; a key reaches only its
stores and answers 404 for any other, exactly as for a store that does not exist."""

from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from redis.exceptions import RedisError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from server.api import errors
from server.api.deps import KEY_REQUIRED, ApiContext, Replayed, replayed_response, sunset
from server.api.errors import ApiError, ErrorType
from server.api.routes import images, memories, models, speakers, stores
from server.body_guard import Authenticate, BodyGuard

__all__ = ["ApiContext", "build_api"]
log = structlog.get_logger(__name__)


def build_api(ctx: ApiContext) -> ASGIApp:
    """The API, behind its body guard: a body above ``api.max_body_bytes`` (declared or
    streamed) is refused with 413 before it is read, and the API key is checked on the headers
    before any body is read or parsed (an unauthenticated flood is answered 401 at once)."""
    guarded = BodyGuard(_api(ctx), ctx.settings.max_body_bytes, _too_large, _key_first(ctx))
    return _JsonWhateverDeclared(guarded)


class _JsonWhateverDeclared:
    """Every request body is read as JSON whatever its declared type: ``curl -d`` says
    ``application/x-www-form-urlencoded``, and the seed's own examples rely on JSON anyway. A
    body that is not JSON gets the usual 400 envelope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH", "DELETE"):
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
            scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.app(scope, receive, send)


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

    @app.middleware("http")
    async def sunset_on_every_answer(request: Request, call_next: Any) -> Response:
        """RFC 8594: a scheduled model's day on every answer it serves — errors included."""
        response: Response = await call_next(request)
        response.headers.update(sunset(request))
        return response

    @app.exception_handler(Replayed)
    async def replayed(request: Request, exc: Replayed) -> Response:
        return replayed_response(request, exc)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """Unknown routes and methods answer the envelope too, never ``{"detail": …}``."""
        kind = ErrorType.NOT_FOUND if exc.status_code == 404 else ErrorType.INVALID_REQUEST
        message = {404: f"no such endpoint: {request.method} {request.url.path}.",
                   405: f"{request.method} is not allowed on {request.url.path}."}.get(
            exc.status_code, str(exc.detail))  # fmt: skip
        response = ApiError(exc.status_code, kind, message).response()
        response.headers.update(exc.headers or {})
        return response

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

    for module in (stores, speakers, memories, images, models):
        app.include_router(module.router)
    return app
