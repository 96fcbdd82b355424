"""The Hearth under test: ``hearth up`` in its own process and data folder, driven like a real
installation — snapshot imported and the bench device mapped to the ``bench`` person through the
admin API, questions asked over the device WebSocket, turn traces read back through the admin API.

``--set section.key=value`` overrides become ``HEARTH_SECTION__KEY`` environment variables of
that process, so an ablation changes exactly one setting of an otherwise identical server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.approvals import approve_pair
from bench.device_client import DeviceClient, TurnResult
from config.run_files import admin_url_file, redis_url_file
from config.settings import HearthSettings, load_settings
from providers.processes import free_port, log_tail
from server.runtime import authority_for

BENCH_DEVICE = "be:9c:00:00:00:01"
BENCH_CLIENT = "00000000-0000-4000-8000-0000000be9c0"


def env_overrides(pairs: list[str]) -> dict[str, str]:
    """``memory.entity_limit=0`` → ``{"HEARTH_MEMORY__ENTITY_LIMIT": "0"}``."""
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {pair!r}")
        env["HEARTH_" + key.strip().upper().replace(".", "__")] = value
    return env


@dataclass
class Answer:
    question: str
    reply: str
    trace: dict[str, Any]
    seconds: float
    heard: str | None = None  # a spoken question: what the device's ASR heard


class HearthUnderTest:
    def __init__(
        self, data_dir: Path, settings: HearthSettings, ws_port: int, local_llm_url: str | None
    ) -> None:
        self.data_dir = data_dir
        self.proc: asyncio.subprocess.Process | None = None  # the `hearth up` process
        self.local_llm_url = local_llm_url  # the answering model when no --llm-url was given
        self.settings = settings
        self.ws_url = f"ws://127.0.0.1:{ws_port}/xiaozhi/v1/"
        self.admin_url = admin_url_file(settings.data_dir).read_text().strip()
        self.admin_token = (data_dir / "secrets" / "admin_token").read_text().strip()
        self.http = httpx.AsyncClient(
            base_url=self.admin_url,
            headers={"Authorization": f"Bearer {self.admin_token}"},
            timeout=60,
        )

    async def admin(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self.http.request(method, path, **kwargs)
        except (httpx.ReadError, httpx.RemoteProtocolError):
            if method != "GET":
                raise
            # the server closed an idle keep-alive connection as this read reused it (a
            # latency run died of it once): a read is asked again on a new connection
            response = await self.http.request(method, path, **kwargs)
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    async def prepare(self, person: str, snapshot_jsonl: str | None) -> None:
        await self.admin(
            "POST", "/admin/persons", json={"device_id": BENCH_DEVICE, "person": person}
        )
        if snapshot_jsonl is not None:
            await self.admin("POST", "/admin/memory/import",
                             json={"person": person, "jsonl": snapshot_jsonl})  # fmt: skip

    def device(self) -> DeviceClient:
        """The bench device, its pair approved as an operator would (auth.enrollment)."""
        redis_url = redis_url_file(self.settings.data_dir).read_text().strip()
        approve_pair(redis_url, BENCH_DEVICE, BENCH_CLIENT)
        token = authority_for(self.settings).mint(BENCH_DEVICE, BENCH_CLIENT, time.time())
        return DeviceClient(self.ws_url, BENCH_DEVICE, BENCH_CLIENT, token)

    async def ask(
        self, question: str, within_s: float, pcm: bytes | None = None, abort: bool = False
    ) -> Answer:
        """One question on a new connection ("days later": only memory can answer); with
        ``pcm`` (16 kHz) it is spoken, unpaced, with the silence that ends an utterance;
        ``abort``: the reply is cut at its first audio frame (the memory is in the trace by
        then; a retrieval-only run need not hear it read out in real time)."""
        device = self.device()
        started = time.perf_counter()
        await device.connect()
        try:
            if pcm is None:
                result: TurnResult = await device.ask(question, within_s=within_s)
            else:
                result = await device.speak(pcm, silence_ms=1500, within_s=within_s, abort=abort)
        finally:
            await device.close()
        seconds = time.perf_counter() - started
        turns = (await self.admin("GET", f"/admin/sessions/{device.session_id}/turns"))["turns"]
        heard = None if pcm is None else result.stt or ""
        return Answer(question, result.text, turns[-1] if turns else {}, seconds, heard)

    async def say(self, lines: list[str], within_s: float) -> str:
        """A scripted conversation on one connection; returns its session id."""
        device = self.device()
        await device.connect()
        try:
            for line in lines:
                await device.ask(line, within_s=within_s)
        finally:
            await device.close()
        return device.session_id

    async def close(self) -> None:
        await self.http.aclose()


# another process may take a port between free_port() choosing it and hearth up binding it:
# such a start is tried again on new ports, this many times in all
START_ATTEMPTS = 3
_PORT_TAKEN = "address already in use"


@contextlib.asynccontextmanager
async def running_hearth(
    data_dir: Path, overrides: list[str], llm_url: str | None, log_file: Path,
    startup_timeout_s: float = 300, write_path: bool = False, up_args: tuple[str, ...] = (),
) -> AsyncIterator[HearthUnderTest]:  # fmt: skip
    """``hearth up`` on free loopback ports in ``data_dir`` (absolute), with the installed local
    models."""
    settings = load_settings(data_dir=data_dir)
    proc: asyncio.subprocess.Process | None = None
    hearth: HearthUnderTest | None = None
    try:
        deadline = time.monotonic() + startup_timeout_s
        for attempt in range(1, START_ATTEMPTS + 1):
            ws_port, llm_port = free_port(), free_port()
            env = _environment(data_dir, ws_port, llm_port, llm_url, overrides, write_path)
            with log_file.open("ab") as log:
                offset = log.tell()  # appending: where this attempt's lines begin
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "server.cli", "up", *up_args, env=env, stdout=log,
                    stderr=log, cwd=data_dir,  # no ./hearth.yaml of the caller's applies
                )  # fmt: skip
            local = None if llm_url else f"http://127.0.0.1:{llm_port}/v1"
            hearth = await _ready(proc, data_dir, settings, ws_port, local, log_file, deadline)
            if hearth is not None:
                break
            failed = _log_since(log_file, offset)
            if attempt == START_ATTEMPTS or _PORT_TAKEN not in failed:
                raise RuntimeError(
                    f"hearth up exited with {proc.returncode}; see {log_file}:\n"
                    + "\n".join(log_tail(log_file, 30))
                )
            # kept aside, so the log is the running Hearth's alone
            aside = log_file.with_name(f"{log_file.name}.port-taken-{attempt}")
            aside.write_text(failed)
            with log_file.open("r+b") as log:
                log.truncate(offset)
        assert hearth is not None
        yield hearth
    finally:
        if hearth is not None:
            await hearth.close()
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                async with asyncio.timeout(30):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
                await proc.wait()


def _environment(
    data_dir: Path, ws_port: int, llm_port: int, llm_url: str | None, overrides: list[str],
    write_path: bool,
) -> dict[str, str]:  # fmt: skip
    """``hearth up``'s environment: ``data_dir``, these ports and free ones for the rest, the
    installed local models, the ``--set`` overrides; no ``HEARTH_CONFIG`` of the caller's."""
    home = load_settings()  # where this installation keeps its model files
    env = {
        **os.environ,
        "HEARTH_DATA_DIR": str(data_dir),
        "HEARTH_LOG_LEVEL": "info",
        "HEARTH_LOG_FORMAT": "json",
        "HEARTH_SERVER__HOST": "127.0.0.1",
        "HEARTH_SERVER__WS_PORT": str(ws_port),
        "HEARTH_SERVER__HTTP_PORT": str(free_port()),
        "HEARTH_LOCAL_LLM__PORT": str(llm_port),
        "HEARTH_MCP__AGENT_PORT": str(free_port()),
        "HEARTH_MCP__DEVICE_PORT": str(free_port()),
        "HEARTH_CONSOLE__PORT": str(free_port()),
        "HEARTH_LOCAL_LLM__MODEL_FILE": str(home.resolve(home.local_llm.model_file).absolute()),
        "HEARTH_ASR__MODEL_DIR": str(home.resolve(home.asr.model_dir).absolute()),
        # snapshot runs: asking must not rewrite the snapshot, nor compete for the CPU
        "HEARTH_WRITE__ENABLED": "true" if write_path else "false",
        **({"HEARTH_LLM__BASE_URL": llm_url} if llm_url else {}),
        **env_overrides(overrides),
    }
    env.pop("HEARTH_CONFIG", None)
    return env


async def _ready(
    proc: asyncio.subprocess.Process, data_dir: Path, settings: HearthSettings, ws_port: int,
    local_llm_url: str | None, log_file: Path, deadline: float,
) -> HearthUnderTest | None:  # fmt: skip
    """The started Hearth once its admin API answers; None when the process exited first."""
    while True:
        if proc.returncode is not None:
            return None
        if admin_url_file(settings.data_dir).is_file():
            candidate = HearthUnderTest(data_dir, settings, ws_port, local_llm_url)
            candidate.proc = proc
            with contextlib.suppress(httpx.HTTPError):
                if (await candidate.http.get("/health")).status_code == 200:
                    return candidate
            await candidate.close()
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"hearth up not ready in time; see {log_file}:\n"
                + "\n".join(log_tail(log_file, 30))
            )
        await asyncio.sleep(0.2)


def _log_since(log_file: Path, offset: int) -> str:
    with log_file.open("rb") as log:
        log.seek(offset)
        return log.read().decode("utf-8", "replace")
