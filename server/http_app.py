"""HTTP endpoints next to the device socket: OTA (device-protocol.md "OTA endpoint"), health,
and metrics (bearer token).

OTA is the one endpoint a device reaches before it has any credential, so it never hands a token
to an unknown device under ``auth.enrollment: approve``: that device gets an activation code.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Scope

from config import keys
from config.settings import HearthSettings
from server import metrics
from server.admin import admin_routes, person_routes, status_routes, trace_routes, voice_routes
from server.auth import MAC_PATTERN, TokenAuthority, normalise_mac
from server.body_guard import Authenticate, BodyGuard, plain_too_large
from server.devices import ActivationBusy, DeviceRegistry
from server.memory.engine import MemoryEngine
from server.persons import PersonMap
from server.traces import TraceStore
from server.vision import VISION_PATH, VisionServices, vision_routes
from server.vision import authenticate as vision_authenticate
from workers.tag_requests import ArqTagRequests

log = structlog.get_logger(__name__)
ACTIVATION_TIMEOUT_MS = 30000


async def _count_pending(redis: Redis) -> None:
    """The pending-tags and pending-cues gauges from the retag and cue sets (a dead Redis
    leaves the last values)."""
    for name, pattern, gauge in (("tags", keys.RETAG_PATTERN, metrics.TAGS_PENDING),
                                 ("cues", keys.RECUE_PATTERN, metrics.CUES_PENDING)):  # fmt: skip
        try:
            found = [key async for key in redis.scan_iter(match=pattern, count=500)]
            pipe = redis.pipeline(transaction=False)
            for key in found:
                pipe.scard(key)
            total = sum(int(n) for n in await pipe.execute()) if found else 0
        except RedisError as exc:
            log.warning("metrics.pending_unavailable", pending=name, error=repr(exc))
            return
        gauge.set(total)


@dataclass
class HttpServices:
    settings: HearthSettings
    authority: TokenAuthority
    devices: DeviceRegistry
    metrics_token: str
    admin_token: str = ""
    memory: MemoryEngine | None = None
    wall_clock: Callable[[], float] = time.time
    status: Callable[[], dict[str, object]] = field(
        default=lambda: {"ready": True, "children": [], "llm": "external"}
    )
    vision: VisionServices | None = None  # None: no photo endpoint (tests of other parts)


def websocket_url(settings: HearthSettings, request: Request) -> str:
    host = settings.server.public_host or (request.url.hostname or "127.0.0.1")
    return f"ws://{host}:{settings.server.ws_port}/xiaozhi/v1/"


def build_http_app(services: HttpServices) -> ASGIApp:
    """The HTTP port's app, its bodies capped and the admin token checked before any body is
    read (``server.body_guard``; the memory API guards itself the same way, with its key)."""
    app = _routes(services)
    return BodyGuard(app, services.settings.api.max_body_bytes, plain_too_large,
                     _credentials_first(services), limits=_limits(services))  # fmt: skip


ADMIN_MAX_BODY_BYTES = 16 * 1024 * 1024  # an operator's JSONL import through the admin API


def _limits(services: HttpServices) -> Callable[[str, int], int]:
    """Larger bodies where they belong: an operator's import, a camera board's photo."""

    def limit(path: str, default: int) -> int:
        if path.startswith("/admin/"):
            return ADMIN_MAX_BODY_BYTES
        if path == VISION_PATH and services.vision is not None:
            return services.vision.body_limit()
        return default

    return limit


def _credentials_first(services: HttpServices) -> Authenticate:
    async def authenticate(scope: Scope) -> Response | None:
        if scope["path"] == VISION_PATH and services.vision is not None:
            return await vision_authenticate(services.vision, scope)
        if not str(scope["path"]).startswith("/admin/"):
            return None
        supplied = Headers(scope=scope).get("authorization", "").removeprefix("Bearer ").strip()
        token = services.admin_token
        if token and hmac.compare_digest(supplied.encode(), token.encode()):
            return None
        return JSONResponse({"error": "admin API needs Authorization: Bearer <admin token>"}, 401)

    return authenticate


def _routes(services: HttpServices) -> Starlette:
    settings = services.settings

    async def ota(request: Request) -> Response:
        device = request.headers.get("device-id", "")
        client = request.headers.get("client-id", "").strip()
        if not device or not client:
            return JSONResponse({"success": False, "message": "request error."}, status_code=400)
        device = normalise_mac(device)
        if not MAC_PATTERN.match(device):
            return JSONResponse({"error": "Invalid device ID"}, status_code=400)
        now = services.wall_clock()
        body: dict[str, object] = {
            "server_time": {"timestamp": int(now * 1000), "timezone_offset": _tz_offset_minutes()},
            "firmware": {"version": _firmware_version(request), "url": ""},
        }
        approved = settings.auth.enrollment == "open" or await services.devices.is_approved(
            device, client
        )
        ws: dict[str, object] = {"url": websocket_url(settings, request)}
        if not settings.auth.enabled or approved:
            ws["token"] = services.authority.mint(device, client, now)
            body["websocket"] = ws
            log.info("ota.token_issued", device=device)
        else:
            try:
                code = await services.devices.pending_code(device, client)
            except ActivationBusy as exc:
                log.error("ota.activation_busy", device=device, error=str(exc))
                return JSONResponse({"success": False, "message": str(exc)}, status_code=503)
            body["websocket"] = ws
            body["activation"] = {
                "code": code,
                "message": f"hearth device approve {code}\n{code}",
                "challenge": device,
                "timeout_ms": ACTIVATION_TIMEOUT_MS,
            }
            log.info("ota.activation_pending", device=device, code=code)
        return JSONResponse(body)

    async def activate(request: Request) -> Response:
        device = normalise_mac(request.headers.get("device-id", ""))
        client = request.headers.get("client-id", "").strip()
        if settings.auth.enrollment == "open" or await services.devices.is_approved(device, client):
            return PlainTextResponse("success")
        return PlainTextResponse("waiting for approval", status_code=202)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def metrics(request: Request) -> Response:
        supplied = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(supplied.encode(), services.metrics_token.encode()):
            return JSONResponse({"error": "metrics need Authorization: Bearer <token>"}, 401)
        await _count_pending(services.devices.redis)
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return Starlette(
        routes=[
            Route("/xiaozhi/ota/", ota, methods=["GET", "POST"]),
            Route("/xiaozhi/ota/activate", activate, methods=["POST"]),
            Route("/health", health),
            Route("/metrics", metrics),
            *_admin(services),
            *(vision_routes(services.vision) if services.vision is not None else []),
            *_memory_api(services),
        ]
    )


def _memory_api(services: HttpServices) -> list[Mount]:
    """The memory HTTP API (``/api/v1/…``), mounted last so it never shadows OTA or admin."""
    if services.memory is None or not services.settings.api.enabled:
        return []
    from memory.registry import Speakers
    from server.api.app import ApiContext, build_api
    from server.api.service import MemoryService
    from workers.tag_requests import ArqTagRequests

    redis = services.devices.redis
    api = services.settings.api
    tags = ArqTagRequests(redis)  # every stored memory is tagged by the worker's next job
    memory = services.memory
    photos = services.vision.photos if services.vision is not None else None
    service = MemoryService(memory.embedder, memory.store, Speakers(redis), api, tags, photos)
    return [Mount("/", app=build_api(ApiContext(redis, service, api)))]


def _admin(services: HttpServices) -> list[Route]:
    """Operator endpoints exist only when an admin token is configured."""
    if not services.admin_token:
        return []
    redis = services.devices.redis
    traces = TraceStore(redis, services.settings.session.trace_ttl_s)
    return [
        *admin_routes(services.memory, services.admin_token, redis, ArqTagRequests(redis)),
        *person_routes(PersonMap(redis), services.admin_token),
        *trace_routes(traces, services.admin_token),
        *status_routes(services.status, services.admin_token),
        *voice_routes(redis, _voice_weights(services.settings), services.admin_token),
    ]


def _voice_weights(settings: HearthSettings) -> Path:
    return settings.resolve(settings.voices.weights_file)


def _firmware_version(request: Request) -> str:
    agent = request.headers.get("user-agent", "")
    return agent.rpartition("/")[2] or "0.0.0"


def _tz_offset_minutes() -> int:
    return -time.timezone // 60 if not time.daylight else -time.altzone // 60
