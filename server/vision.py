"""The vision endpoint camera boards POST photos to: the URL and token our MCP ``initialize``
announces (device-protocol.md §1.5). The firmware sends multipart ``question`` + ``file`` with
``Device-Id``, ``Client-Id`` and ``Authorization: Bearer <token>``, and hands the answer's body
to its LLM as the result of ``self.camera.take_photo``.

- The token is a device token minted for the session's device (``vision_token``) and checked on
  the headers — with the approval list — before the body is read (``authenticate``).
- The photo is answered by the configured OpenAI-compatible vision model; with none configured
  the answer is a clear 503, nothing is guessed.
- An answered photo is kept as the device person's image memory (``MemoryWriter.keep_photo``):
  listed, searchable by its description, removable (``DELETE /api/v1/memory/image``).

Answers: ``{"success": true, "action": "RESPONSE", "response": "<answer>"}`` (the reference
server's shape), or ``{"success": false, "message": "…"}`` with 400/401/413/415/503.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
from redis.exceptions import RedisError
from starlette.datastructures import Headers, UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from config.settings import VisionSettings
from memory.photos import NotAnImage, PhotoFiles, image_format
from memory.schema import PersonId, Photo
from memory.writes import MemoryWriter
from providers.errors import ProviderError
from providers.vision import VisionModel
from server import metrics
from server.auth import (
    MAC_PATTERN,
    AuthError,
    AuthFailure,
    ClientId,
    DeviceCredentials,
    DeviceId,
    TokenAuthority,
    credentials_from_request,
)
from server.devices import DeviceRegistry
from server.persons import PersonMap

log = structlog.get_logger(__name__)
VISION_PATH = "/mcp/vision/explain"
MULTIPART_SLACK = 64 * 1024  # the form's boundaries, headers and question around the photo
MAX_QUESTION_CHARS = 500
DEFAULT_QUESTION = "照片里有什么？"
CREDENTIALS = "vision_credentials"  # request.state key: the device authenticate() verified


@dataclass
class VisionServices:
    settings: VisionSettings
    authority: TokenAuthority
    approvals: DeviceRegistry | None  # None: open enrollment (or auth off), no approval list
    persons: PersonMap
    model: VisionModel
    photos: PhotoFiles
    writer: MemoryWriter | None  # None: memory off — photos are answered, not kept
    wall_clock: Callable[[], float] = field(default=time.time)

    def body_limit(self) -> int:
        return self.settings.max_image_bytes + MULTIPART_SLACK


def vision_token(authority: TokenAuthority, creds: DeviceCredentials, now: float) -> str:
    """The token a session announces in ``capabilities.vision``: the device's identity, then a
    device token for exactly that Device-Id and Client-Id (the HMAC the OTA endpoint mints).
    Stock firmware also sends Device-Id and Client-Id headers (they must match); clients that
    send only the bearer (xiaozhi-sdk) are identified by the token itself."""
    ident = f"{creds.device_id}|{creds.client_id}".encode()
    prefix = base64.urlsafe_b64encode(ident).rstrip(b"=").decode()
    return f"{prefix}.{authority.mint(creds.device_id, creds.client_id, now)}"


def vision_credentials(path: str, headers: Headers) -> DeviceCredentials:
    """Who sent a photo: the identity inside the bearer token, checked against the Device-Id and
    Client-Id headers when they are sent. Raises ``AuthError``; the signature is checked by the
    caller (``TokenAuthority.verify``)."""
    bearer = headers.get("authorization", "")
    token = bearer.split(" ", 1)[1].strip() if " " in bearer else bearer.strip()
    if not token:
        raise AuthError(AuthFailure.MISSING_TOKEN)
    prefix, _, rest = token.partition(".")
    try:
        ident = base64.urlsafe_b64decode(prefix + "=" * (-len(prefix) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        raise AuthError(AuthFailure.MALFORMED_TOKEN) from None
    device, sep, client = ident.partition("|")
    if not sep or not rest or not MAC_PATTERN.match(device) or not client:
        raise AuthError(AuthFailure.MALFORMED_TOKEN)
    sent = {k: headers[k] for k in ("device-id", "client-id") if k in headers}
    if sent:
        named = credentials_from_request(path, sent | {"authorization": f"Bearer {rest}"})
        if (named.device_id, named.client_id) != (device, client):
            raise AuthError(AuthFailure.BAD_SIGNATURE)
    return DeviceCredentials(DeviceId(device), ClientId(client), rest, 1)


def refusal(status: int, message: str) -> JSONResponse:
    return JSONResponse({"success": False, "message": message}, status_code=status)


async def authenticate(services: VisionServices, scope: Scope) -> Response | None:
    """Device credentials on the headers alone (before any body is read); None: let it in."""
    headers = Headers(scope=scope)
    try:
        creds = vision_credentials(str(scope["path"]), headers)
        services.authority.verify(creds, services.wall_clock())
        if services.approvals is not None and not await services.approvals.is_approved(
            creds.device_id, creds.client_id
        ):
            raise AuthError(AuthFailure.NOT_APPROVED)
    except AuthError as exc:
        metrics.HANDSHAKES_REFUSED.labels(reason=f"vision_{exc.failure.name.lower()}").inc()
        log.warning("vision.refused", reason=exc.failure.value, device=headers.get("device-id"))
        return refusal(401, exc.failure.value)
    except RedisError as exc:
        log.error("vision.approval_unavailable", error=repr(exc))
        return refusal(503, "device approvals cannot be read right now; try again")
    scope.setdefault("state", {})[CREDENTIALS] = creds  # the route's request.state
    return None


def vision_routes(services: VisionServices) -> list[Route]:
    async def explain(request: Request) -> Response:
        creds: DeviceCredentials = getattr(request.state, CREDENTIALS)  # set by authenticate
        try:
            async with request.form(max_files=1, max_fields=8) as form:
                upload = form.get("file") or form.get("image")
                raw_question = form.get("question")
                if not isinstance(upload, UploadFile):
                    return refusal(400, "the photo is missing: send it as the 'file' part")
                data = await upload.read(services.settings.max_image_bytes + 1)
        except (MultiPartException, HTTPException, ClientDisconnect) as exc:
            detail = getattr(exc, "detail", None) or getattr(exc, "message", None) or str(exc)
            return refusal(400, f"send multipart/form-data with 'question' and 'file': {detail}")
        if len(data) > services.settings.max_image_bytes:
            limit = services.settings.max_image_bytes
            return refusal(413, f"photos are at most {limit} bytes")
        question = (raw_question if isinstance(raw_question, str) else "").strip()
        question = question[:MAX_QUESTION_CHARS] or DEFAULT_QUESTION
        try:
            content_type, _ = image_format(data)
        except NotAnImage as exc:
            return refusal(415, str(exc))
        try:
            answer = await services.model.explain(question, data, content_type)
        except ProviderError as exc:
            metrics.PROVIDER_ERRORS.labels(provider=exc.provider).inc()
            log.error("vision.model_failed", device=creds.device_id, error=exc.message)
            return refusal(503, exc.message)
        person = await services.persons.resolve(creds.device_id)
        log.info("vision.answered", device=creds.device_id, person=person, bytes=len(data),
                 question=question, answer=answer)  # fmt: skip
        await _keep(services, person, creds, question, answer, data)
        return JSONResponse({"success": True, "action": "RESPONSE", "response": answer})

    return [Route(VISION_PATH, explain, methods=["POST"])]


async def _keep(
    services: VisionServices, person: str, creds: DeviceCredentials, question: str,
    answer: str, data: bytes,
) -> None:  # fmt: skip
    """The photo as the person's image memory. A failure to keep it is logged and counted; the
    device still gets its answer (the photo is not a transcript: nothing the person said is
    lost)."""
    if services.writer is None:
        return
    owner = PersonId(person)
    saved = None
    try:
        saved = services.photos.save(owner, data)
        photo = Photo(question, answer, saved.name, saved.content_type, len(data), creds.device_id)
        await services.writer.keep_photo(owner, photo_text(question, answer), photo)
    except Exception as exc:
        metrics.PHOTOS_NOT_KEPT.inc()
        log.error("vision.photo_not_kept", person=person, error=repr(exc))
        if saved is not None and saved.created:  # a photo kept earlier stays with its memory
            services.photos.delete(owner, saved.name)


def photo_text(question: str, answer: str) -> str:
    """An image memory's text: what the photo shows first (that is what a search meets), then
    what was asked about it."""
    return f"{answer}（照片；问：{question}）"
