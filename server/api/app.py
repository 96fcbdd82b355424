"""The memory HTTP API under ``/api/v1/memory/…`` (FastAPI: validation and the OpenAPI document
come from the request models). Every call needs ``X-API-Key``; a key reaches only its stores and
answers 404 for any other, exactly as for a store that does not exist.

No ``from __future__ import annotations`` here: FastAPI reads the route annotations (local
dependency aliases included) at definition time."""

import datetime as dt
import email.utils
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import orjson
import structlog
from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from redis.exceptions import RedisError

from config.settings import ApiSettings
from memory.identity import PERSON_PATTERN
from memory.registry import ApiKey, ApiKeys, Speakers, Stores
from memory.schema import PersonId
from server.api import errors
from server.api.errors import ApiError, ErrorType
from server.api.idempotency import REPLAYED_HEADER, Idempotency, Outcome, WriteTracker, fingerprint
from server.api.names import DEFAULT_STORE, registrable, speaker_name, store_id
from server.api.service import MemoryService

log = structlog.get_logger(__name__)
PREFIX = "/api/v1/memory"


def _utf8(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from exc
    if "\x00" in value:
        raise ValueError("text must not contain NUL characters")
    return value


Text = Annotated[str, AfterValidator(_utf8)]
StoreId = Annotated[
    str,
    Field(
        description="The store: 1-64 ASCII letters, digits, '.', '_', '-', starting with a "
        "letter or digit; ids differing only by case name one store",
        pattern=PERSON_PATTERN.pattern,
        examples=["default"],
    ),
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CollectionBody(_Body):
    user_id: StoreId


class StoreMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")
    speaker: Text | None = Field(None, description="A registered speaker, or 'me'")


class StoreBody(_Body):
    user_id: StoreId
    content: Annotated[Text, Field(min_length=1, examples=["我老婆对海鲜过敏"])]
    metadata: StoreMetadata | None = None


class SearchBody(_Body):
    user_id: StoreId
    query: Text
    speaker: Text | None = None
    limit: int = Field(10, ge=1, le=100)


class SpeakerBody(_Body):
    user_id: StoreId = DEFAULT_STORE
    speaker: Text


class BySpeakerBody(_Body):
    user_id: StoreId = DEFAULT_STORE
    speaker: Text
    limit: int = Field(50, ge=1, le=200)
    before: Text | None = Field(None, description="next_before of the previous page")
    skip_ids: list[uuid.UUID] = Field(
        default_factory=list, max_length=1000, description="next_skip_ids of the previous page"
    )


class SupersedeBody(_Body):
    user_id: StoreId
    memory_id: uuid.UUID
    content: Text


class ForgetBody(_Body):
    user_id: StoreId
    memory_id: uuid.UUID | None = None
    all: bool = Field(False, description="forget every memory in the store")


Attempt = Callable[[WriteTracker], Awaitable[dict[str, Any]]]


class ApiContext:
    def __init__(self, redis: Any, service: MemoryService, settings: ApiSettings) -> None:
        self.keys = ApiKeys(redis)
        self.stores = Stores(redis)
        self.speakers = Speakers(redis)
        self.service = service
        self.settings = settings
        self.idempotency = Idempotency(
            redis, settings.idempotency_ttl_s, settings.idempotency_lease_s
        )


def build_api(ctx: ApiContext) -> FastAPI:
    app = FastAPI(
        title="Hearth memory API",
        version="1",
        description="Stores, speakers ('who said it'), store/search with Idempotency-Key.",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    settings = ctx.settings
    models = {m.id: m for m in settings.models}

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

    async def caller(
        request: Request,
        x_api_key: Annotated[str | None, Header()] = None,
        x_wos_model: Annotated[str | None, Header()] = None,
    ) -> ApiKey:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > settings.max_body_bytes:
            limit = settings.max_body_bytes
            raise ApiError(413, ErrorType.TOO_LARGE, f"request bodies are at most {limit} bytes.")
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        key = await ctx.keys.lookup(x_api_key or bearer)
        if key is None:
            raise ApiError(
                401,
                ErrorType.AUTHENTICATION,
                "A valid API key is required in the X-API-Key header.",
            )
        if x_wos_model is not None:
            _check_model(request, x_wos_model)
        return key

    def _check_model(request: Request, name: str) -> None:
        model = models.get(name)
        if model is None:
            raise errors.invalid(f"unknown model '{name}' (see GET /api/v1/models).", model=name)
        if model.retires_at is None:
            return
        retired = dt.date.fromisoformat(model.retires_at) <= dt.datetime.now(dt.UTC).date()
        collection_delete = request.method == "DELETE" and request.url.path.endswith("/collection")
        if retired and not collection_delete:
            raise ApiError(
                410, ErrorType.GONE, f"model '{name}' retired on {model.retires_at}.", code=0
            )
        request.state.sunset = model.retires_at

    Caller = Annotated[ApiKey, Depends(caller)]

    async def store_of(key: ApiKey, raw: str) -> PersonId:
        store = store_id(raw)
        if not key.may_use(store) or await ctx.stores.get(store) is None:
            raise errors.store_not_found(raw)
        return store

    async def answer(
        request: Request, key: ApiKey, attempt: Attempt, status: int = 200
    ) -> Response:
        """Run a write, under its Idempotency-Key when one is sent."""
        headers = _sunset(request)
        idem_key = request.headers.get("idempotency-key")
        if idem_key is None:
            body = await attempt(WriteTracker())
            return JSONResponse(body, status_code=status, headers=headers)

        async def run(tracker: WriteTracker) -> Outcome:
            return Outcome(status, await attempt(tracker))

        print_ = fingerprint(request.method, request.url.path, await request.body())
        outcome, replayed = await ctx.idempotency.run(key.id, idem_key, print_, run)
        if replayed:
            headers[REPLAYED_HEADER] = "true"
        return JSONResponse(outcome.body, status_code=outcome.status, headers=headers)

    async def read(request: Request, body: dict[str, Any]) -> Response:
        headers = _sunset(request)
        return JSONResponse(body, headers=headers)

    # ---- stores -----------------------------------------------------------------------------

    @app.post(f"{PREFIX}/collection", summary="Create a store")
    async def create_collection(request: Request, body: CollectionBody, key: Caller) -> Response:
        store = store_id(body.user_id)
        if not key.workspace:
            raise errors.store_not_found(body.user_id) if not key.may_use(store) else _exists()

        async def attempt(tracker: WriteTracker) -> dict[str, Any]:
            tracker.begin()
            info, created = await ctx.stores.create(store, body.user_id)
            return {
                "user_id": info.id,
                "created_at": info.created_at,
                "status": "created" if created else "exists",
            }

        return await answer(request, key, attempt)

    @app.get(f"{PREFIX}/collection", summary="List the stores this key may use")
    async def list_collections(request: Request, key: Caller) -> Response:
        stores = [s for s in await ctx.stores.all() if key.may_use(s.id.lower())]
        listed = [{"user_id": s.id, "created_at": s.created_at} for s in stores]
        return await read(request, {"collections": listed, "count": len(listed)})

    @app.delete(f"{PREFIX}/collection", summary="Delete a store, its memories and speakers")
    async def delete_collection(request: Request, body: CollectionBody, key: Caller) -> Response:
        store = await store_of(key, body.user_id)

        async def attempt(tracker: WriteTracker) -> dict[str, Any]:
            result = await ctx.service.forget(store, None, True, tracker)
            await ctx.stores.delete(store)
            return {
                "user_id": body.user_id,
                "status": "deleted",
                "memories_deleted": result["deleted"],
            }

        return await answer(request, key, attempt)

    # ---- speakers ---------------------------------------------------------------------------

    @app.post(f"{PREFIX}/speakers", summary="Register a speaker")
    async def add_speaker(request: Request, body: SpeakerBody, key: Caller) -> Response:
        store = await store_of(key, body.user_id)
        name = registrable(body.speaker)

        async def attempt(tracker: WriteTracker) -> dict[str, Any]:
            tracker.begin()
            registered = await ctx.speakers.register(store, name, settings.speaker_limit)
            if registered is None:
                raise errors.speaker_limit(settings.speaker_limit)
            created_at, new = registered
            return {
                "user_id": body.user_id,
                "speaker": name,
                "created_at": created_at,
                "status": "registered" if new else "exists",
            }

        return await answer(request, key, attempt)

    @app.get(f"{PREFIX}/speakers", summary="List registered speakers with memory counts")
    async def list_speakers(
        request: Request, key: Caller, user_id: Annotated[str | None, Query()] = None
    ) -> Response:
        raw = user_id if user_id is not None else await _body_user_id(request)
        store = await store_of(key, raw)
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
                "limit": settings.speaker_limit,
            },
        )

    @app.delete(f"{PREFIX}/speakers", summary="Unregister a speaker (memories stay, tag goes)")
    async def remove_speaker(request: Request, body: SpeakerBody, key: Caller) -> Response:
        store = await store_of(key, body.user_id)
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

        return await answer(request, key, attempt)

    # ---- memories ---------------------------------------------------------------------------

    @app.post(f"{PREFIX}/store", summary="Store one memory")
    async def store(request: Request, body: StoreBody, key: Caller) -> Response:
        user = await store_of(key, body.user_id)
        raw = body.metadata.speaker if body.metadata else None
        speaker = speaker_name(raw) if raw is not None else None
        return await answer(
            request, key, lambda t: ctx.service.store_memory(user, body.content, speaker, t)
        )

    @app.post(f"{PREFIX}/search", summary="Search memories, optionally one speaker's")
    async def search(request: Request, body: SearchBody, key: Caller) -> Response:
        user = await store_of(key, body.user_id)
        speaker = speaker_name(body.speaker) if body.speaker is not None else None
        return await read(request, await ctx.service.search(user, body.query, speaker, body.limit))

    @app.post(f"{PREFIX}/by-speaker", summary="What one speaker said, newest first")
    async def by_speaker(request: Request, body: BySpeakerBody, key: Caller) -> Response:
        user = await store_of(key, body.user_id)
        found = await ctx.service.by_speaker(
            user,
            speaker_name(body.speaker),
            body.limit,
            body.before,
            [str(i) for i in body.skip_ids],
        )
        return await read(request, found)

    @app.post(f"{PREFIX}/supersede", summary="Replace a memory's text (old text kept in history)")
    async def supersede(request: Request, body: SupersedeBody, key: Caller) -> Response:
        user = await store_of(key, body.user_id)
        return await answer(
            request,
            key,
            lambda t: ctx.service.supersede(user, str(body.memory_id), body.content, t),
        )

    @app.post(f"{PREFIX}/forget", summary="Forget one memory, or every memory of a store")
    async def forget(request: Request, body: ForgetBody, key: Caller) -> Response:
        user = await store_of(key, body.user_id)
        if (body.memory_id is None) == (not body.all):
            raise errors.invalid("send exactly one of memory_id or all: true.", param="memory_id")
        memory_id = str(body.memory_id) if body.memory_id else None
        return await answer(
            request, key, lambda t: ctx.service.forget(user, memory_id, body.all, t)
        )

    # ---- models and the document ------------------------------------------------------------

    @app.get("/api/v1/models", summary="Models that can read the memory")
    async def list_models(key: Caller) -> Response:
        listed = [{"id": m.id, "retires_at": m.retires_at} for m in settings.models]
        return JSONResponse({"models": listed})

    @app.get("/api/v1/openapi.json", include_in_schema=False)
    async def openapi(key: Caller) -> Response:
        return JSONResponse(app.openapi())

    return app


def _sunset(request: Request) -> dict[str, str]:
    """RFC 8594: a model scheduled to retire names the day on every answer it serves."""
    day = getattr(request.state, "sunset", None)
    if not day:
        return {}
    moment = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(), dt.UTC)
    return {"Sunset": email.utils.format_datetime(moment, usegmt=True)}


def _exists() -> ApiError:
    return ApiError(
        403, ErrorType.PERMISSION, "only a workspace key (all stores) may create stores."
    )


async def _body_user_id(request: Request) -> str:
    """``GET /speakers`` takes ``user_id`` as a query parameter, or (as in seed 000's curl) in
    a JSON body; neither means the built-in store."""
    raw = await request.body()
    if not raw:
        return DEFAULT_STORE
    try:
        value = orjson.loads(raw).get("user_id", DEFAULT_STORE)
    except (orjson.JSONDecodeError, AttributeError) as exc:
        raise errors.invalid("GET /speakers takes user_id as a query parameter.") from exc
    if not isinstance(value, str):
        raise errors.invalid("user_id must be a string.", param="user_id")
    return value
