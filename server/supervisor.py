"""Supervision of the child processes ``hearth up`` owns (Redis, the llama.cpp servers), and of
the in-process parts that must not end (``keep_running``: the arq worker).

A child that exits is logged at error level with its exit status and the last lines of its log,
marked down, and restarted with exponential backoff (capped, so a binary that crashes at once on
every start costs one attempt per ``backoff_max_s``, never a spin). A part that stayed up for
``stable_s`` starts again from the shortest delay. Exits are noticed through a pidfd (no polling).
``status()`` is what ``hearth status``, the admin API and the metrics show.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

from providers.errors import ProviderError
from providers.processes import ChildProcess, PartStatus, describe_exit, log_tail
from server import metrics

log = structlog.get_logger(__name__)
BACKOFF_INITIAL_S, BACKOFF_MAX_S = 1.0, 30.0  # restart delays: doubling from the first, capped
STABLE_S = 60.0  # up this long, a part starts again from the first delay


class SupervisedPart(Protocol):
    """A child engine: ``start`` spawns it and returns once it serves (raises if it cannot)."""

    @property
    def child(self) -> ChildProcess: ...

    async def start(self) -> None: ...


@dataclass
class Backoff:
    """The restart policy, one home: delays double from ``initial_s`` up to ``max_s``; a part
    that stayed up ``stable_s`` or longer starts again from ``initial_s``."""

    initial_s: float = BACKOFF_INITIAL_S
    max_s: float = BACKOFF_MAX_S
    stable_s: float = STABLE_S
    _next: float = 0.0

    def __post_init__(self) -> None:
        self._next = self.initial_s

    def after(self, stayed_s: float) -> float:
        """The delay before the next start of a part that just ran ``stayed_s`` seconds."""
        if stayed_s >= self.stable_s:
            self._next = self.initial_s
        return self.failed_again()

    def failed_again(self) -> float:
        """The delay after a start that failed (no time up at all)."""
        delay, self._next = self._next, min(self.max_s, self._next * 2)
        return delay


async def keep_running(
    name: str,
    run_part: Callable[[], Awaitable[None]],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """An in-process part that must not end (the arq worker): when it ends or raises, it is
    logged at error level, counted as a restart and started again after 1, 2 … 30 s."""
    backoff = Backoff()
    while True:
        started = time.monotonic()
        try:
            await run_part()
            log.error("part.ended", name=name)
        except Exception as exc:
            log.error("part.crashed", name=name, error=repr(exc))
        delay = backoff.after(time.monotonic() - started)
        metrics.CHILD_RESTARTS.labels(name=name).inc()
        log.warning("part.restart_scheduled", name=name, in_s=delay)
        await sleep(delay)


async def wait_exit(child: ChildProcess) -> int:
    """Returns the child's exit status as soon as it exits (a pidfd becomes readable)."""
    proc = child.proc
    if proc is None:
        raise RuntimeError(f"{child.name} was never started")
    if proc.poll() is not None:
        return int(proc.returncode)
    loop = asyncio.get_running_loop()
    exited = asyncio.Event()
    fd = os.pidfd_open(proc.pid)
    try:
        loop.add_reader(fd, exited.set)
        try:
            if proc.poll() is None:  # it may have exited between poll and add_reader
                await exited.wait()
        finally:
            loop.remove_reader(fd)
    finally:
        os.close(fd)
    return int(proc.wait())


class Supervisor:
    def __init__(
        self,
        backoff_initial_s: float = BACKOFF_INITIAL_S,
        backoff_max_s: float = BACKOFF_MAX_S,
        stable_s: float = STABLE_S,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.sleep = sleep  # the backoff wait (tests pass their own: no real waiting)
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.stable_s = stable_s
        self._parts: dict[str, SupervisedPart] = {}
        self._status: dict[str, PartStatus] = {}
        self._up: dict[str, asyncio.Event] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    def add(self, part: SupervisedPart, *, up: bool) -> None:
        """Watch ``part`` (already started when ``up``; else it is started with backoff)."""
        name = part.child.name
        self._parts[name] = part
        now = time.time()
        status = PartStatus(name, log_file=str(part.child.log_file), since=now)
        self._status[name] = status
        self._up[name] = asyncio.Event()
        if up:
            self._mark_up(name)
        else:
            status.state = "down"
            proc = part.child.proc
            if proc is not None and proc.poll() is not None:
                status.last_exit, status.last_exit_at = describe_exit(proc.returncode), now
            metrics.CHILD_UP.labels(name=name).set(0)
        self._tasks.append(asyncio.create_task(self._watch(name, started=up), name=f"watch {name}"))

    def status(self) -> list[dict[str, object]]:
        now = time.time()
        return [s.as_json(now) for s in self._status.values()]

    def is_up(self, name: str) -> bool:
        """Up as last seen, and still alive now (an exit is known here before the watcher's
        pidfd callback has run)."""
        if name not in self._up:
            return True
        return self._up[name].is_set() and self._parts[name].child.alive()

    async def wait_up(self, name: str) -> None:
        """Returns once ``name`` serves (immediately when it is not supervised here)."""
        if name in self._up:
            await self._up[name].wait()

    def gate(self, name: str) -> PartGate:
        return PartGate(self, name)

    async def close(self) -> None:
        """Stop watching (before the children are stopped, so their exits are not restarts)."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _mark_up(self, name: str) -> None:
        status = self._status[name]
        proc = self._parts[name].child.proc
        status.state, status.pid, status.since = "up", proc.pid if proc else None, time.time()
        status.next_start_at = None
        self._up[name].set()
        metrics.CHILD_UP.labels(name=name).set(1)

    def _mark_down(self, name: str, returncode: int | None) -> None:
        status = self._status[name]
        status.state, status.pid, status.since = "down", None, time.time()
        status.last_exit, status.last_exit_at = describe_exit(returncode), time.time()
        self._up[name].clear()
        metrics.CHILD_UP.labels(name=name).set(0)

    async def _watch(self, name: str, *, started: bool) -> None:
        part = self._parts[name]
        backoff = Backoff(self.backoff_initial_s, self.backoff_max_s, self.stable_s)
        while not self._stopping:
            if started:
                returncode = await wait_exit(part.child)
                if self._stopping:
                    return
                stayed = time.time() - self._status[name].since
                self._mark_down(name, returncode)
                _log_child("child.exited", part.child, status=describe_exit(returncode))
                delay = backoff.after(stayed)
            else:
                delay = backoff.failed_again()
            status = self._status[name]
            status.next_start_at = time.time() + delay
            log.warning("child.restart_scheduled", name=name, in_s=delay)
            await self.sleep(delay)
            status.restarts += 1
            metrics.CHILD_RESTARTS.labels(name=name).inc()
            status.state, status.next_start_at = "starting", None
            try:
                await part.start()
            except (ProviderError, TimeoutError, OSError) as exc:
                _log_child("child.restart_failed", part.child, error=str(exc))
                part.child.stop()
                self._mark_down(name, part.child.proc.returncode if part.child.proc else None)
                started = False
                continue
            self._mark_up(name)
            log.info("child.restarted", name=name, pid=self._status[name].pid)
            started = True


def _log_child(event: str, child: ChildProcess, **fields: str) -> None:
    """At error level, with the child's log file and its last lines: what a person needs."""
    log.error(
        event, name=child.name, log=str(child.log_file), log_tail=log_tail(child.log_file), **fields
    )


@dataclass(frozen=True)
class PartGate:
    """One part's up/down as a write job sees it (workers.gate.LLMGate)."""

    supervisor: Supervisor
    name: str

    def is_up(self) -> bool:
        return self.supervisor.is_up(self.name)

    async def wait_up(self) -> None:
        await self.supervisor.wait_up(self.name)
