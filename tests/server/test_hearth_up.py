"""``hearth up`` as a user runs it, in its own process: it refuses a missing or damaged model with
what to run, stops with one clear paragraph when the model cannot serve, runs degraded only when
asked (the status says what is down, turns say the model is unavailable), stops on Ctrl-C with no
traceback and no process left, and survives its llama server being killed mid-turn."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from bench.device_client import TurnResult
from bench.e2e import hearth as hearth_module
from bench.e2e.hearth import HearthUnderTest, running_hearth
from config.settings import load_settings
from providers.model_files import QWEN_FILE
from providers.processes import free_port
from server.device.turn import LLM_UNAVAILABLE
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.waiting import wait_until

UP_TIMEOUT_S = 60


def _up(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``hearth up`` in ``data_dir`` on free ports; expected to end by itself."""
    environment = {
        **os.environ,
        "HEARTH_DATA_DIR": str(data_dir),
        "HEARTH_SERVER__WS_PORT": str(free_port()),
        "HEARTH_SERVER__HTTP_PORT": str(free_port()),
        "HEARTH_LOCAL_LLM__PORT": str(free_port()),
        "HEARTH_LOCAL_LLM__STARTUP_TIMEOUT_S": "60",
        "COLUMNS": "400",  # one paragraph line per line: no wrapping inside paths
        **env,
    }
    environment.pop("HEARTH_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "up", *args],
        env=environment, cwd=data_dir, capture_output=True, text=True, timeout=UP_TIMEOUT_S,
    )  # fmt: skip


def _processes_under(folder: Path) -> list[str]:
    """Command lines of live processes that mention ``folder`` (children left behind)."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return [
        line for line in out.stdout.splitlines() if str(folder) in line and "ps -eo" not in line
    ]


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_missing_or_truncated_model_is_refused_with_what_to_run(
    tmp_path: Path, damage: str
) -> None:
    model = tmp_path / "models" / QWEN_FILE
    if damage == "truncated":
        model.parent.mkdir(parents=True)
        model.write_bytes(b"GGUF" + b"\0" * 4096)
    done = _up(tmp_path, HEARTH_LOCAL_LLM__MODEL_FILE=str(model))
    output = " ".join((done.stdout + done.stderr).split())  # rich wraps long lines
    assert done.returncode == 3, output
    assert "Hearth did not start" in output
    assert str(model) in output
    assert "hearth models install" in output
    assert ("missing" if damage == "missing" else "truncated") in output
    assert "Traceback" not in output
    assert not (tmp_path / "redis").exists()  # refused before anything was started


def test_a_model_the_engine_cannot_load_stops_up_with_one_paragraph(tmp_path: Path) -> None:
    model = tmp_path / "models" / "broken.gguf"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"GGUF" + os.urandom(65536))  # a header, then nothing llama.cpp can read
    done = _up(tmp_path, HEARTH_LOCAL_LLM__MODEL_FILE=str(model), HEARTH_WRITE__ENABLED="false")
    output = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 3, output
    assert "Hearth did not start: llama could not serve" in output
    assert str(tmp_path / "logs" / "llama.log") in output
    assert "hearth up --degraded" in output and "hearth models install" in output
    assert "hearth.ready" not in output
    assert "Traceback" not in output
    assert _processes_under(tmp_path) == []  # Redis and the llama server were stopped


async def test_degraded_serves_says_what_is_down_and_turns_say_so(tmp_path: Path) -> None:
    model = tmp_path / "models" / "broken.gguf"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"GGUF" + os.urandom(65536))
    overrides = [f"local_llm.model_file={model}", "local_llm.startup_timeout_s=60"]
    async with running_hearth(
        tmp_path, overrides, None, tmp_path / "hearth.log", 120, up_args=("--degraded",)
    ) as hearth:
        llama = await _child(hearth, "llama")
        assert llama["state"] in {"down", "starting"}
        assert llama["last_exit"] is not None  # it did exit, and the status says how
        status = await hearth.admin("GET", "/admin/status")
        assert status["ready"] is False
        shown = await _hearth_status(tmp_path)
        assert shown.returncode == 1 and "not ready" in shown.stdout
        assert "llama" in shown.stdout
        assert "down" in shown.stdout or "starting" in shown.stdout
        device = hearth.device()
        await device.connect()
        result = await device.ask("你好", within_s=30)
        await device.close()
        assert result.text == LLM_UNAVAILABLE["zh"]
        log = tmp_path / "hearth.log"
        assert "hearth.ready_degraded" in log.read_text()
        # the supervisor keeps trying, each failure logged with the engine's own last lines
        await wait_until(lambda: "child.restart_failed" in log.read_text(), within_s=60)
    assert "Traceback" not in (tmp_path / "hearth.log").read_text()


async def test_ctrl_c_stops_everything_without_a_traceback(
    tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.responder = lambda req: Reply("在的。")
    log_file = tmp_path / "hearth.log"
    async with running_hearth(tmp_path, [], scripted_llm.base_url, log_file, 120) as hearth:
        await _answers_in_turn(hearth)
        redis = await _child(hearth, "redis")
        shown = await _hearth_status(tmp_path, "--json")
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert orjson.loads(shown.stdout)["children"][0]["name"] == "redis"
        assert hearth.proc is not None
        hearth.proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            code = await hearth.proc.wait()
    assert code == 0
    log = log_file.read_text()
    assert "hearth.stopped" in log
    assert "Traceback" not in log and "CancelledError" not in log
    with pytest.raises(ProcessLookupError):
        os.kill(int(redis["pid"]), 0)
    assert _processes_under(tmp_path) == []


async def test_a_port_taken_before_up_binds_it_is_tried_again_on_new_ports(
    tmp_path: Path, scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process may take a port between choosing and binding it (seen once in CI): the
    harness starts again on new ports, the failed start kept aside, the log clean."""
    scripted_llm.responder = lambda req: Reply("在的。")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        chosen = iter([free_port(), free_port(), taken])  # ws, llm, then the HTTP port
        monkeypatch.setattr(hearth_module, "free_port", lambda: next(chosen, None) or free_port())
        log_file = tmp_path / "hearth.log"
        async with running_hearth(tmp_path, [], scripted_llm.base_url, log_file, 120) as hearth:
            await _answers_in_turn(hearth)
    assert "address already in use" in (tmp_path / "hearth.log.port-taken-1").read_text()
    assert "address already in use" not in log_file.read_text()


async def _answers_in_turn(hearth: HearthUnderTest) -> None:
    """The bench device asks 「在吗」 and hears the scripted model's 「在的。」."""
    device = hearth.device()
    await device.connect()
    assert (await device.ask("在吗", within_s=30)).text == "在的。"
    await device.close()


async def test_redis_killed_under_up_loses_no_transcript(
    tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.responder = lambda req: Reply("记住了。")
    log_file = tmp_path / "hearth.log"
    async with running_hearth(tmp_path, [], scripted_llm.base_url, log_file, 120) as hearth:
        device = hearth.device()
        await device.connect()
        await device.ask("我女儿叫小橙子", within_s=30)
        redis = await _child(hearth, "redis")
        os.killpg(int(str(redis["pid"])), signal.SIGKILL)
        await device.close()  # the session ends while Redis is down: its transcript is spooled
        await wait_until(lambda: "session.spooled" in log_file.read_text(), within_s=10)
        url = (tmp_path / "run" / "redis.url").read_text()
        client = Redis.from_url(url)
        try:
            # restarted by the supervisor; the spool drains into the queue (or its job already ran)
            job = f"arq:job:{device.session_id}"
            done = f"arq:result:{device.session_id}"
            await wait_until(lambda: _exists(client, job, done), within_s=30)
        finally:
            await client.aclose()
        # the drain unlinks a spooled file right after its job is queued: wait for that too
        await wait_until(lambda: not list((tmp_path / "spool").glob("*.json")), within_s=10)
        back = await _child(hearth, "redis")
        assert back["state"] == "up" and back["restarts"] == 1
        assert back["last_exit"] == "killed by SIGKILL"


async def _exists(client: Redis, *keys: str) -> bool:
    try:
        return bool(await client.exists(*keys))
    except RedisError:
        return False  # not back yet


async def _hearth_status(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``hearth status`` as an operator runs it next to a running Hearth."""
    env = {**os.environ, "HEARTH_DATA_DIR": str(data_dir), "COLUMNS": "300"}
    env.pop("HEARTH_CONFIG", None)
    argv = [sys.executable, "-m", "server.cli", "status", *args]
    return await asyncio.to_thread(
        subprocess.run, argv, env=env, cwd=data_dir, capture_output=True, text=True, timeout=30
    )


async def _child(hearth: HearthUnderTest, name: str) -> dict[str, object]:
    status = await hearth.admin("GET", "/admin/status")
    return next(part for part in status["children"] if part["name"] == name)


@pytest.mark.local_llm
async def test_llama_killed_mid_turn_says_so_then_the_next_turn_answers(tmp_path: Path) -> None:
    """The real local model under ``hearth up``: SIGKILL while it streams a reply."""
    home = load_settings()
    assert home.resolve(home.local_llm.model_file).is_file(), "run `hearth models install`"
    log_file = tmp_path / "hearth.log"
    async with running_hearth(tmp_path, [], None, log_file, 300) as hearth:
        llama = await _child(hearth, "llama")
        device = hearth.device()
        await device.connect()
        await device.send_json({"type": "listen", "state": "start", "mode": "auto"})
        result = TurnResult()
        text = "请从一数到三十，每个数字单独说一句。"
        await device.send_json({"type": "listen", "state": "detect", "text": text})
        turn = asyncio.create_task(device.collect(result, within_s=120))
        await wait_until(lambda: len(result.sentences) >= 1, within_s=120)
        os.killpg(int(llama["pid"]), signal.SIGKILL)  # mid-reply: the stream is cut
        await turn
        assert result.sentences[-1] == LLM_UNAVAILABLE["zh"], result.sentences
        await wait_until(lambda: _is_back(hearth), within_s=240)
        again = await device.ask("一加一等于几？", within_s=120)
        await device.close()
        assert again.text and again.text != LLM_UNAVAILABLE["zh"], again.text
        restarted = await _child(hearth, "llama")
        assert restarted["restarts"] == 1 and restarted["last_exit"] == "killed by SIGKILL"
    log = log_file.read_text()
    assert '"event": "child.exited"' in log and "turn.llm_failed" in log


async def _is_back(hearth: HearthUnderTest) -> bool:
    return (await _child(hearth, "llama"))["state"] == "up"
