"""Device WebSocket endpoint: handshake authentication, then one ``DeviceSession`` per socket.

Any path upgrades (devices connect to whatever URL OTA gave them; ``/xiaozhi/v1/`` by
convention). A plain HTTP GET answers ``200 Server is running`` like the reference server.
Credentials are checked *before* the upgrade, so a refused device gets an HTTP 401 with the
reason and never reaches the protocol.
"""

from __future__ import annotations

import http
import time
from collections.abc import Callable

import structlog
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server import metrics
from server.auth import AuthError, DeviceCredentials, TokenAuthority, credentials_from_request
from server.device.session import DeviceSession, SessionServices

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
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.services = services
        self.authority = authority
        self.max_message_bytes = max_message_bytes
        self.wall_clock = wall_clock
        self.sessions: set[DeviceSession] = set()

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return _text_response(http.HTTPStatus.OK, "Server is running\n")
        try:
            creds = credentials_from_request(request.path, dict(request.headers.raw_items()))
            if self.authority is not None:
                self.authority.verify(creds, self.wall_clock())
        except AuthError as exc:
            metrics.HANDSHAKES_REFUSED.labels(reason=exc.failure.name.lower()).inc()
            log.warning(
                "handshake.refused",
                reason=exc.failure.value,
                peer=str(connection.remote_address),
                device=request.headers.get("Device-Id"),
            )
            return _text_response(http.HTTPStatus.UNAUTHORIZED, f"认证失败: {exc.failure.value}\n")
        connection.hearth_credentials = creds  # type: ignore[attr-defined]
        return None

    async def _handler(self, connection: ServerConnection) -> None:
        creds: DeviceCredentials = connection.hearth_credentials  # type: ignore[attr-defined]
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
