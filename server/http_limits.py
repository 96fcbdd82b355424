"""A deadline for the request head on every HTTP port: a client that has not sent a complete
request line and headers within ``HEAD_TIMEOUT_S`` of connecting (slowloris: one header line
every few seconds, forever) is disconnected, instead of holding a connection slot until the
connection limit refuses everyone else. uvicorn's own protocol (h11) with one timer added."""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0


class HeadDeadline(H11Protocol):
    head_timeout_s = HEAD_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = self.loop.call_later(
            self.head_timeout_s, self._head_too_slow
        )

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_timer is not None and self.conn.their_state is not h11.IDLE:
            self._head_timer.cancel()  # the head is complete: the body has its own caps
            self._head_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()
