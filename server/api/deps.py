"""What every memory API route depends on: the typed app state (``ApiContext``), the caller's
key (``Caller``), a store the key may use, and running a write under its Idempotency-Key.

No ``from __future__ import annotations``: FastAPI reads these annotations at definition time."""

import datetime as dt
import email.utils
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import orjson
from fastapi import Depends, Header, Request
from fastapi.responses import JSONResponse, Response
from redis.asyncio import Redis

from config.settings import ApiSettings
from memory.identity import DEFAULT_STORE
from memory.registry import ApiKey, ApiKeys, Speakers, Stores
from memory.schema import PersonId
from server.api import errors
from server.api.errors import ApiError, ErrorType
from server.api.idempotency import REPLAYED_HEADER, Idempotency, Outcome, WriteTracker, fingerprint
from server.api.names import store_id
from server.api.service import MemoryService

PREFIX = "/api/v1/memory"
KEY_REQUIRED = "A valid API key is required in the X-API-Key header."
Attempt = Callable[[WriteTracker], Awaitable[dict[str, Any]]]


class ApiContext:
    """The API's state, one per app (``app.state.hearth``)."""

    def __init__(self, redis: Redis, service: MemoryService, settings: ApiSettings) -> None:
        self.keys = ApiKeys(redis)
        self.stores = Stores(redis)
        self.speakers = Speakers(redis)
        self.service = service
        self.settings = settings
        self.models = {m.id: m for m in settings.models}
        self.idempotency = Idempotency(
            redis, settings.idempotency_ttl_s, settings.idempotency_lease_s
        )


def context(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.hearth
    return ctx


Ctx = Annotated[ApiContext, Depends(context)]


async def caller(
    request: Request,
    ctx: Ctx,
    x_api_key: Annotated[str | None, Header()] = None,
    x_wos_model: Annotated[str | None, Header()] = None,
) -> ApiKey:
    limit = ctx.settings.max_body_bytes
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise ApiError(413, ErrorType.TOO_LARGE, f"request bodies are at most {limit} bytes.")
    bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    key = await ctx.keys.lookup(x_api_key or bearer)
    if key is None:
        raise ApiError(401, ErrorType.AUTHENTICATION, KEY_REQUIRED)
    if x_wos_model is not None:
        check_model(ctx, request, x_wos_model)
    return key


Caller = Annotated[ApiKey, Depends(caller)]


def check_model(ctx: ApiContext, request: Request, name: str) -> None:
    model = ctx.models.get(name)
    if model is None:
        raise errors.invalid(f"unknown model '{name}' (see GET /api/v1/models).", model=name)
    if model.retires_at is None:
        return
    request.state.sunset = model.retires_at  # on every answer, errors included (410 too)
    retired = dt.date.fromisoformat(model.retires_at) <= dt.datetime.now(dt.UTC).date()
    collection_delete = request.method == "DELETE" and request.url.path.endswith("/collection")
    if retired and not collection_delete:
        raise ApiError(
            410, ErrorType.GONE, f"model '{name}' retired on {model.retires_at}.", code=0
        )


async def store_of(ctx: ApiContext, key: ApiKey, raw: str) -> PersonId:
    """A store the key may use, or the same 404 as for a store that does not exist."""
    store = store_id(raw)
    if not key.may_use(store) or await ctx.stores.get(store) is None:
        raise errors.store_not_found(raw)
    return store


class Replayed(Exception):
    """A repeated write's first answer, found before the route ran (``replay_first``)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__("replayed")
        self.outcome = outcome


def replayed_response(request: Request, exc: Replayed) -> Response:
    headers = {**sunset(request), REPLAYED_HEADER: "true"}
    return JSONResponse(exc.outcome.body, status_code=exc.outcome.status, headers=headers)


async def replay_first(request: Request, key: Caller, ctx: Ctx) -> None:
    """Every write route depends on this (``WRITE``): a repeat under a settled Idempotency-Key
    is answered before the route checks anything — so repeating a delete replays its 2xx
    instead of a 404 for what the first request deleted, and a reused key with another body is
    a 422 whatever that body names."""
    idem_key = request.headers.get("idempotency-key")
    if idem_key is None:
        return
    print_ = fingerprint(request.method, request.url.path, await request.body())
    outcome = await ctx.idempotency.settled(key.id, idem_key, print_)
    if outcome is not None:
        raise Replayed(outcome)


WRITE = [Depends(replay_first)]  # the dependencies of every route that writes


async def answer(
    ctx: ApiContext, request: Request, key: ApiKey, attempt: Attempt, status: int = 200
) -> Response:
    """Run a write, under its Idempotency-Key when one is sent."""
    headers = sunset(request)
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
    return JSONResponse(body, headers=sunset(request))


def sunset(request: Request) -> dict[str, str]:
    """RFC 8594: a model scheduled to retire names the day on every answer it serves."""
    day = getattr(request.state, "sunset", None)
    if not day:
        return {}
    moment = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(), dt.UTC)
    return {"Sunset": email.utils.format_datetime(moment, usegmt=True)}


async def body_user_id(request: Request) -> str:
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
