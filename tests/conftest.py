"""Shared fixtures: a real Redis, a scripted LLM on loopback, a running Hearth device stack."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis as redis_sync
from arq.connections import ArqRedis, create_pool
from redis.asyncio import Redis

from bench.approvals import approve_pair
from bench.device_client import DeviceClient
from config.settings import HearthSettings, load_settings
from providers.asr import SpeechToText
from providers.embedder import UseEmbedder
from providers.processes import free_port
from providers.tts import TextToSpeech
from server.auth import TokenAuthority
from server.device.session import SessionRecord
from server.device.session_end import EnqueueOnSessionEnd
from server.device.ws_server import DeviceServer
from server.memory.engine import MemoryEngine
from server.runtime import authority_for, build_llm, device_stack
from tests.support.scripted_llm import ScriptedLLM
from tests.support.waiting import wait_until
from workers.settings import redis_settings

# Servers started by tests publish the agent pointer (config.run_files) into the user's config
# folder: give the whole run (subprocesses inherit it) a private one.
os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="hearth-test-config-"))
TEST_SECRET = "test-secret-" + "x" * 20


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server: HEARTH_TEST_REDIS_URL if CI started one, else our own."""
    configured = os.environ.get("HEARTH_TEST_REDIS_URL")
    if configured:
        yield configured
        return
    binary = shutil.which("redis-server")
    assert binary, "redis-server is required for the tests (make test installs it)"
    port = free_port()
    password = secrets.token_urlsafe(12)
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--requirepass", password,
         "--dir", str(folder), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    client = redis_sync.Redis.from_url(url)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis_sync.ConnectionError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.02)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def embedder() -> UseEmbedder:
    """The real local embedder, loaded once per test run."""
    return UseEmbedder()


@pytest.fixture
async def scripted_llm() -> AsyncIterator[ScriptedLLM]:
    llm = ScriptedLLM()
    await llm.start()
    yield llm
    await llm.stop()


def make_settings(data_dir: Path, **overrides: Any) -> HearthSettings:
    base: dict[str, Any] = {
        "data_dir": data_dir,
        "auth": {"secret": TEST_SECRET},
        "server": {"ws_port": 0, "http_port": 0, "host": "127.0.0.1"},
        "audio": {"tail_ms": 0},
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return load_settings(**base)


class SessionsEnded:
    """Test hook: records ended sessions (after the enqueue hook ran) and wakes waiters."""

    def __init__(self) -> None:
        self.records: dict[str, SessionRecord] = {}
        self._changed = asyncio.Condition()

    async def session_ended(self, record: SessionRecord) -> None:
        async with self._changed:
            self.records[record.session_id] = record
            self._changed.notify_all()

    async def wait_for(self, session_id: str, within_s: float = 5.0) -> SessionRecord:
        async with asyncio.timeout(within_s), self._changed:
            await self._changed.wait_for(lambda: session_id in self.records)
            return self.records[session_id]


@dataclass
class RunningHearth:
    settings: HearthSettings
    server: DeviceServer
    hook: EnqueueOnSessionEnd
    arq: ArqRedis
    llm: ScriptedLLM
    port: int
    authority: TokenAuthority
    ended: SessionsEnded
    redis_url: str = ""

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/xiaozhi/v1/"

    def device(
        self, device_id: str | None = None, *, approved: bool = True, **kwargs: Any
    ) -> DeviceClient:
        """A device with a valid token; under ``auth.enrollment: approve`` (the default) its
        (Device-Id, Client-Id) pair is approved first, as an operator would."""
        device_id = device_id or ":".join(f"{b:02x}" for b in secrets.token_bytes(6))
        client_id = str(uuid.uuid4())
        if approved and self.server.approvals is not None:
            approve_pair(self.redis_url, device_id, client_id)
        token = self.authority.mint(device_id, client_id, time.time())
        return DeviceClient(self.url, device_id, client_id, token, **kwargs)


@pytest.fixture
def hearth_overrides() -> dict[str, Any]:
    return {}


@contextlib.asynccontextmanager
async def start_hearth(
    data_dir: Path,
    redis_url: str,
    llm_base_url: str,
    llm: ScriptedLLM | None,
    tts: TextToSpeech | None = None,
    memory: MemoryEngine | None = None,
    asr: SpeechToText | None = None,
    **overrides: Any,
) -> AsyncIterator[RunningHearth]:
    """A device server on a free loopback port, wired exactly as ``hearth serve`` wires it."""
    settings = make_settings(data_dir, llm={"base_url": llm_base_url}, **overrides)
    arq = await create_pool(redis_settings(redis_url))
    chat = build_llm(settings, llm_base_url)
    try:
        async with device_stack(settings, chat, arq, tts, memory, asr) as (server, hook):
            ended = SessionsEnded()
            server.services.end_hooks.append(ended)
            ws = await server.start("127.0.0.1", 0)
            port = next(iter(ws.sockets)).getsockname()[1]
            try:
                yield RunningHearth(
                    settings,
                    server,
                    hook,
                    arq,
                    llm,
                    port,
                    authority_for(settings),
                    ended,  # type: ignore[arg-type]
                    redis_url,
                )
            finally:
                ws.close()
                await ws.wait_closed()
    finally:
        await arq.aclose()


@pytest.fixture
async def hearth(
    tmp_path: Path,
    redis: Redis,
    redis_url: str,
    scripted_llm: ScriptedLLM,
    hearth_overrides: dict[str, Any],
) -> AsyncIterator[RunningHearth]:
    async with start_hearth(
        tmp_path, redis_url, scripted_llm.base_url, scripted_llm, **hearth_overrides
    ) as running:
        yield running


@dataclass
class RunningHttp:
    base_url: str
    services: Any


@pytest.fixture
async def http_app(hearth: RunningHearth, redis: Redis) -> AsyncIterator[RunningHttp]:
    """The OTA/health/metrics app on loopback, advertising the running device server."""
    import uvicorn

    from server.devices import DeviceRegistry
    from server.http_app import HttpServices, build_http_app

    server_settings = hearth.settings.server.model_copy(update={"ws_port": hearth.port})
    settings = hearth.settings.model_copy(update={"server": server_settings})
    services = HttpServices(
        settings,
        hearth.authority,
        DeviceRegistry(redis),
        "metrics-secret",
        admin_token="admin-secret",
    )
    port = free_port()
    config = uvicorn.Config(
        build_http_app(services), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    await wait_until(lambda: server.started, within_s=10)
    yield RunningHttp(f"http://127.0.0.1:{port}", services)
    server.should_exit = True
    await task
