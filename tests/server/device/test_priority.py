"""Issue 19, item 6: the conversation comes first — the write path's local model server is paused
(SIGSTOP) while a device turn is in flight and resumed (SIGCONT) after, on a real child process
and a real device turn over loopback. Process states are read from /proc, never timed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from providers.processes import ChildProcess
from server.device.priority import ConversationFirst, NoPriority
from server.runtime import Engines, conversation_first
from tests.conftest import RunningHearth, make_settings
from tests.support.scripted_llm import Reply
from tests.support.waiting import wait_until

MAC = "aa:bb:cc:00:77:01"


def state(child: ChildProcess) -> str:
    """The kernel's one-letter state of the process: T = stopped."""
    assert child.proc is not None
    stat = Path(f"/proc/{child.proc.pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0]


def busy_child(tmp_path: Path) -> ChildProcess:
    child = ChildProcess("fake-write-llm", [sys.executable, "-c", "while True: pass"],
                         tmp_path / "child.log")  # fmt: skip
    child.start()
    return child


class Counting:
    def __init__(self) -> None:
        self.paused = self.resumed = 0

    def pause(self) -> bool:
        self.paused += 1
        return True

    def resume(self) -> bool:
        self.resumed += 1
        return True


async def test_overlapping_turns_pause_once_and_resume_after_the_last() -> None:
    server = Counting()
    priority = ConversationFirst(lambda: server)
    async with priority.turn():
        async with priority.turn():
            assert (server.paused, server.resumed) == (1, 0)
        assert server.resumed == 0  # one turn is still in flight
    assert (server.paused, server.resumed) == (1, 1)
    async with priority.turn():
        pass
    assert (server.paused, server.resumed) == (2, 2)


async def test_a_turn_that_fails_still_resumes_the_write_model() -> None:
    server = Counting()
    priority = ConversationFirst(lambda: server)
    try:
        async with priority.turn():
            raise RuntimeError("the turn broke")
    except RuntimeError:
        pass
    assert server.resumed == 1 and priority.in_flight == 0


async def test_no_write_server_means_nothing_to_pause() -> None:
    priority = ConversationFirst(lambda: None)
    async with priority.turn():
        assert priority.in_flight == 1


async def test_a_paused_child_stops_and_a_stopped_one_can_still_be_stopped(
    tmp_path: Path,
) -> None:
    """The kernel acts on SIGSTOP / SIGCONT a moment after they are sent (the child may be
    running on the other core): the state is awaited, bounded."""
    child = busy_child(tmp_path)
    try:
        assert child.pause()
        await wait_until(lambda: state(child) == "T", within_s=5)
        assert child.resume()
        await wait_until(lambda: state(child) != "T", within_s=5)
        child.pause()
    finally:
        child.stop()  # SIGCONT first: a paused process could not act on SIGTERM
    assert not child.alive()


async def test_the_write_model_is_paused_during_a_device_turn_and_resumed_after(
    hearth: RunningHearth, tmp_path: Path
) -> None:
    child = busy_child(tmp_path)
    seen: list[str] = []
    release = asyncio.Event()

    def responder(request: dict[str, object]) -> Reply:
        seen.append(state(child))  # what the write model is doing while the turn thinks
        return Reply("好的，马上。", hang=release)

    # SIGSTOP is delivered asynchronously: on a busy machine /proc may still say R for a moment

    hearth.llm.responder = responder
    hearth.server.services.turn.priority = ConversationFirst(lambda: child)
    device = hearth.device(MAC)
    try:
        await device.connect()
        asking = asyncio.create_task(device.ask("讲个笑话"))
        await wait_until(lambda: bool(seen), within_s=20)
        # stopped while the turn thinks (wait_until fails the test if it never is)
        await wait_until(lambda: state(child) == "T", within_s=10)
        release.set()
        result = await asking
        assert result.text == "好的，马上。"
        await wait_until(lambda: state(child) != "T", within_s=10)
    finally:
        release.set()
        await device.close()
        child.stop()


def test_only_a_separate_write_server_is_ever_paused(tmp_path: Path) -> None:
    """One server for both (no write_threads, or the write path off): pausing it would stop the
    very turn that paused it — so there is nothing to pause."""
    settings = make_settings(tmp_path)
    shared = Engines(redis_url="", llm_base_url="http://127.0.0.1:1/v1",
                     write_llm_url="http://127.0.0.1:1/v1")  # fmt: skip
    apart = Engines(redis_url="", llm_base_url="http://127.0.0.1:1/v1",
                    write_llm_url="http://127.0.0.1:2/v1")  # fmt: skip
    assert isinstance(conversation_first(settings, shared), NoPriority)
    assert isinstance(conversation_first(settings, Engines("", "http://x/v1")), NoPriority)
    assert isinstance(conversation_first(settings, apart), ConversationFirst)
    off = make_settings(tmp_path, local_llm={"pause_write_during_turns": False})
    assert isinstance(conversation_first(off, apart), NoPriority)
