"""Supervision of child processes: an exit is logged with its status and log tail, restarted with
capped backoff (a child that crashes at once never spins), shown in the status; a killed Redis
comes back with its data and the transcripts spooled meanwhile are enqueued."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from arq.connections import create_pool
from structlog.testing import capture_logs

from providers.errors import PermanentProviderError
from providers.processes import ChildProcess, EmbeddedRedis, describe_exit
from server import metrics
from server.device.session_end import EnqueueOnSessionEnd
from server.supervisor import Supervisor, keep_running, wait_exit
from tests.support.waiting import wait_until
from tests.workers.test_session_jobs import record
from workers.settings import redis_settings


class ScriptPart:
    """A child running a shell line; ``start`` returns once it printed ``ready`` and raises if
    it exits first (as a crashing engine does)."""

    def __init__(self, name: str, line: str, folder: Path) -> None:
        self.child = ChildProcess(name, ["sh", "-c", line], folder / f"{name}.log")
        self.starts = 0

    async def start(self) -> None:
        self.starts += 1
        self.child.start()
        await wait_until(lambda: self._ready() or not self.child.alive(), within_s=10)
        if not self._ready():
            raise PermanentProviderError(self.child.name, "exited during start")

    def _ready(self) -> bool:
        return self.child.log_file.read_text().count("ready") >= self.starts  # the log appends


class RecordedSleep:
    """The supervisor's backoff wait: records each delay; waits only while ``hold`` is set."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.released = asyncio.Event()
        self.released.set()
        self.waiting = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        self.waiting.set()
        await self.released.wait()
        self.waiting.clear()


@pytest.fixture
async def supervisor() -> AsyncIterator[tuple[Supervisor, RecordedSleep]]:
    sleep = RecordedSleep()
    sup = Supervisor(backoff_initial_s=1.0, backoff_max_s=30.0, sleep=sleep)
    yield sup, sleep
    await sup.close()


def _restarts(name: str) -> float:
    return metrics.CHILD_RESTARTS.labels(name=name)._value.get()


async def test_a_killed_child_is_logged_and_restarted(
    tmp_path: Path, supervisor: tuple[Supervisor, RecordedSleep]
) -> None:
    sup, sleep = supervisor
    part = ScriptPart("engine", "echo engine ready; echo last words; exec sleep 600", tmp_path)
    await part.start()
    sup.add(part, up=True)
    first_pid = part.child.proc.pid if part.child.proc else 0
    before = _restarts("engine")
    with capture_logs() as logs:
        os.killpg(first_pid, signal.SIGKILL)
        await wait_until(lambda: sup.status()[0]["restarts"] == 1 and sup.is_up("engine"))
    exited = next(e for e in logs if e["event"] == "child.exited")
    assert exited["log_level"] == "error"
    assert exited["status"] == "killed by SIGKILL"
    assert "last words" in exited["log_tail"]
    status = sup.status()[0]
    assert status["state"] == "up"
    assert status["pid"] not in (None, first_pid)
    assert status["last_exit"] == "killed by SIGKILL"
    assert sleep.delays == [1.0]
    assert _restarts("engine") == before + 1
    assert metrics.CHILD_UP.labels(name="engine")._value.get() == 1


async def test_a_child_that_crashes_at_once_backs_off_to_the_cap_and_says_so(
    tmp_path: Path, supervisor: tuple[Supervisor, RecordedSleep]
) -> None:
    sup, sleep = supervisor
    part = ScriptPart("crasher", "echo 'Illegal instruction'; exit 3", tmp_path)
    with capture_logs() as logs:
        sup.add(part, up=False)  # as `hearth up --degraded` hands over a part that failed
        await wait_until(lambda: len(sleep.delays) >= 8, within_s=20)
        sleep.released.clear()  # hold the next wait: the status is read while down
        await wait_until(lambda: sleep.waiting.is_set() and len(sleep.delays) >= 9)
    assert sleep.delays[:9] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0]
    assert part.starts == len(sleep.delays) - 1  # one attempt per wait: no spinning
    status = sup.status()[0]
    assert status["state"] == "down"
    assert status["last_exit"] == "exit status 3"
    assert status["restarts"] == part.starts
    assert 0 <= float(str(status["next_start_in_s"])) <= 30.0
    failures = [e for e in logs if e["event"] == "child.restart_failed"]
    assert failures and all(e["log_level"] == "error" for e in failures)
    assert "Illegal instruction" in failures[0]["log_tail"]
    assert not sup.is_up("crasher")


async def test_wait_exit_reports_how_a_process_ended(tmp_path: Path) -> None:
    child = ChildProcess("quick", [sys.executable, "-c", "raise SystemExit(7)"], tmp_path / "q.log")
    child.start()
    assert describe_exit(await wait_exit(child)) == "exit status 7"
    assert describe_exit(-9) == "killed by SIGKILL"


async def test_redis_killed_comes_back_with_its_data_and_the_spool_drains(
    tmp_path: Path, supervisor: tuple[Supervisor, RecordedSleep]
) -> None:
    sup, sleep = supervisor
    redis = EmbeddedRedis(tmp_path)
    await redis.start()
    sup.add(redis, up=True)
    arq = await create_pool(redis_settings(redis.url))
    hook = EnqueueOnSessionEnd(arq, tmp_path / "spool")
    try:
        await arq.set("kept", "1")
        sleep.released.clear()  # Redis stays down until the session below has ended
        assert redis.child.proc is not None
        os.killpg(redis.child.proc.pid, signal.SIGKILL)
        await wait_until(sleep.waiting.is_set)
        assert sup.status()[0]["state"] == "down"
        await hook.session_ended(record("while-redis-was-down"))
        assert [p.name for p in hook.spooled()] == ["while-redis-was-down.json"]
        sleep.released.set()
        await asyncio.wait_for(sup.wait_up("redis"), 10)
        assert await arq.get("kept") == b"1"  # AOF, fsync always: nothing written is lost
        assert await hook.drain_spool() == 1
        assert await arq.exists("arq:job:while-redis-was-down")
        assert hook.spooled() == []
    finally:
        await arq.aclose()
        await sup.close()
        redis.stop()


async def test_an_in_process_part_that_crashes_is_started_again_with_backoff() -> None:
    sleep = RecordedSleep()
    runs: list[int] = []
    forever = asyncio.Event()

    async def worker() -> None:  # as arq's poll loop ends on a Redis error
        runs.append(1)
        if len(runs) <= 2:
            raise ConnectionError("Redis went away")
        await forever.wait()

    before = _restarts("worker")
    with capture_logs() as logs:
        task = asyncio.create_task(keep_running("worker", worker, sleep))
        await wait_until(lambda: len(runs) == 3)
        task.cancel()
    crashed = [e for e in logs if e["event"] == "part.crashed"]
    assert len(crashed) == 2 and crashed[0]["log_level"] == "error"
    assert "Redis went away" in crashed[0]["error"]
    assert sleep.delays == [1.0, 2.0]
    assert _restarts("worker") == before + 2
