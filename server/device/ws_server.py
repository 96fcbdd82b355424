"""Device WebSocket endpoint: handshake authentication, then one ``DeviceSession`` per socket.

Any path upgrades (devices connect to whatever URL OTA gave them; ``/xiaozhi/v1/`` by
convention). A plain HTTP GET answers ``200 Server is running`` like the reference server.
Credentials are checked *before* the upgrade, so a refused device gets an HTTP 401 with the
reason and never reaches the protocol: the token's HMAC, and — under ``auth.enrollment:
approve`` — that its (Device-Id, Client-Id) pair is still approved (``server.devices``; if that
cannot be checked, 503 and nothing is served). ``close_revoked`` closes the open connections of
a revoked pair.
"""

from __future__ import annotations

import http
import time
from collections.abc import Callable

import structlog
from redis.exceptions import RedisError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server import metrics
from server.auth import (
    AuthError,
    AuthFailure,
    DeviceCredentials,
    TokenAuthority,
    credentials_from_request,
)
from server.device.session import DeviceSession, SessionServices
from server.devices import DeviceRegistry
from server.protocol.errors import CloseCode

log = structlog.get_logger(__name__)


def _text_response(status: http.HTTPStatus, text: str) -> Response:
    body = text.encode()
    headers = Headers(
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
    )
    return Response(status.value, status.phrase, headers, body)


class DeviceServer:
    def __init__(
        self,
        services: SessionServices,
        authority: TokenAuthority | None,
        *,
        max_message_bytes: int,
        approvals: DeviceRegistry | None = None,
        max_sockets_per_device: int = 4,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.services = services
        self.authority = authority
        self.approvals = approvals  # None: open enrollment (or auth off), no approval list
        self.max_sockets_per_device = max_sockets_per_device
        self.max_message_bytes = max_message_bytes
        self.wall_clock = wall_clock
        self.sessions: set[DeviceSession] = set()

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return _text_response(http.HTTPStatus.OK, "Server is running\n")
        try:
            creds = credentials_from_request(request.path, dict(request.headers.raw_items()))
            if self.authority is not None:
                self.authority.verify(creds, self.wall_clock())
            if self.approvals is not None and not await self.approvals.is_approved(
                creds.device_id, creds.client_id
            ):
                raise AuthError(AuthFailure.NOT_APPROVED)
        except AuthError as exc:
            metrics.HANDSHAKES_REFUSED.labels(reason=exc.failure.name.lower()).inc()
            log.warning(
                "handshake.refused",
                reason=exc.failure.value,
                peer=str(connection.remote_address),
                device=request.headers.get("Device-Id"),
            )
            return _text_response(http.HTTPStatus.UNAUTHORIZED, f"认证失败: {exc.failure.value}\n")
        except RedisError as exc:  # the approval list is unreachable: serve nobody unchecked
            metrics.HANDSHAKES_REFUSED.labels(reason="approval_unavailable").inc()
            log.error("handshake.approval_unavailable", error=repr(exc))
            return _text_response(
                http.HTTPStatus.SERVICE_UNAVAILABLE, "暂时无法校验设备授权，请稍后重试\n"
            )
        connection.hearth_credentials = creds  # type: ignore[attr-defined]
        return None

    async def close_revoked(self, device_id: str, client_id: str | None) -> int:
        """Close the open connections of a revoked device (one client id, or every one)."""
        closing = [
            s
            for s in list(self.sessions)
            if s.creds.device_id == device_id and client_id in (None, s.creds.client_id)
        ]
        for session in closing:
            await session.close(CloseCode.POLICY_VIOLATION, "device revoked", "revoked")
        return len(closing)

    async def _handler(self, connection: ServerConnection) -> None:
        creds: DeviceCredentials = connection.hearth_credentials  # type: ignore[attr-defined]
        open_ = sum(1 for s in self.sessions if s.creds.device_id == creds.device_id)
        if open_ >= self.max_sockets_per_device:  # before any per-session state (VAD, ASR)
            metrics.HANDSHAKES_REFUSED.labels(reason="too_many_sockets").inc()
            log.warning("handshake.too_many_sockets", device=creds.device_id, open=open_)
            await connection.close(int(CloseCode.POLICY_VIOLATION), "too many connections")
            return
        session = DeviceSession(connection, creds, self.services)
        self.sessions.add(session)
        try:
            await session.run()
        finally:
            self.sessions.discard(session)

    async def start(self, host: str, port: int) -> Server:
        return await serve(
            self._handler,
            host,
            port,
            process_request=self._process_request,
            max_size=self.max_message_bytes,
            compression=None,  # firmware does not negotiate it; saves memory per connection
            ping_interval=None,  # firmware answers pings, but the 120 s idle rule governs
        )
