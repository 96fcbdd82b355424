"""The conversation comes first: while any device turn is in flight, the write path's local
model server is paused, and it resumes once no turn is.

On two cores the write model (a second llama.cpp server, niced) and the conversation model share
the CPU; a typed turn took 57 s while a write job ran. Pausing the write server's process
(SIGSTOP, then SIGCONT) stops its generation at once — mid-prompt or mid-answer, with its state
kept — so the turn gets both cores, and the write job continues exactly where it was: nothing is
recomputed, nothing lost. Its HTTP request simply takes longer (within ``write.timeout_s``).

``hearth up`` owns the write server as a child process, so the pause is a signal to it; with an
external write model there is nothing to pause (``NoPriority``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Protocol

import structlog

from server import metrics

log = structlog.get_logger(__name__)


class Pausable(Protocol):
    def pause(self) -> bool: ...

    def resume(self) -> bool: ...


class TurnPriority(Protocol):
    def turn(self) -> contextlib.AbstractAsyncContextManager[None]: ...


class NoPriority:
    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        yield


class ConversationFirst:
    """Counts the turns in flight; the first pauses the write server, the last resumes it."""

    def __init__(self, write_server: Callable[[], Pausable | None]) -> None:
        self.write_server = write_server  # looked up per pause: a restart changes the process
        self.in_flight = 0
        self._paused: Pausable | None = None

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        self.in_flight += 1
        if self.in_flight == 1:
            self._pause()
        try:
            yield
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self._resume()

    def _pause(self) -> None:
        server = self.write_server()
        if server is not None and server.pause():
            self._paused = server
            metrics.WRITE_PAUSES.inc()

    def _resume(self) -> None:
        if self._paused is not None:
            self._paused.resume()
            self._paused = None
