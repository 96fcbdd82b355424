"""Request bodies are capped before anything reads them, and credentials checked before a body
is parsed (ASGI middleware around every HTTP app Hearth serves).

- A declared ``Content-Length`` above the cap (or not a number) → 413 at once; nothing is read.
- A chunked body is counted as it streams; past the cap the app sees the client go away and
  the caller gets 413 — memory never holds more than the cap plus one chunk.
- ``authenticate`` (optional) runs on the headers alone, before the app — and so before any body
  is read or parsed; a refusal (401) is answered without reading the body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

Authenticate = Callable[[Scope], Awaitable[Response | None]]
TooLarge = Callable[[int], Response]
Limits = Callable[[str, int], int]  # (path, default cap) -> this path's cap


def plain_too_large(limit: int) -> Response:
    return PlainTextResponse(f"request bodies are at most {limit} bytes\n", status_code=413)


class BodyGuard:
    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        too_large: TooLarge,
        authenticate: Authenticate | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.too_large = too_large
        self.authenticate = authenticate
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.limits(scope["path"], self.max_bytes) if self.limits else self.max_bytes
        length = Headers(scope=scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > cap):
            await self.too_large(cap)(scope, receive, send)
            return
        if self.authenticate is not None:
            refused = await self.authenticate(scope)
            if refused is not None:
                await refused(scope, receive, send)
                return
        await _Counted(self, cap, scope, receive, send).run()


class _Counted:
    """One request whose body is counted as the app reads it."""

    def __init__(
        self, guard: BodyGuard, cap: int, scope: Scope, receive: Receive, send: Send
    ) -> None:
        self.guard = guard
        self.cap = cap
        self.scope = scope
        self._receive = receive
        self._send = send
        self.received = 0
        self.overflow = False
        self.started = False

    async def receive(self) -> Message:
        if self.overflow:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.cap:
                self.overflow = True  # the app sees a client that went away, reads no more
                return {"type": "http.disconnect"}
        return message

    async def send(self, message: Message) -> None:
        if self.overflow:
            return  # whatever the app answers to the cut-off body, the caller gets 413
        self.started = True
        await self._send(message)

    async def run(self) -> None:
        try:
            await self.guard.app(self.scope, self.receive, self.send)
        except Exception:
            if not self.overflow:
                raise
        if self.overflow and not self.started:
            response = self.guard.too_large(self.cap)
            await response(self.scope, self._receive, self._send)
