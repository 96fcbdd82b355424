"""Child engine processes Hearth owns on embedded defaults: a private Redis and llama.cpp.

Each child runs in its own process group and is stopped (TERM, then KILL after a bound) when
Hearth exits, so Ctrl-C leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
import structlog
from redis.asyncio import Redis
from redis.exceptions import BusyLoadingError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from config.settings import LocalLLMSettings
from providers.engines import EngineChoice, EngineNotUsable, baseline, choose_engine, read_cpuinfo
from providers.errors import PermanentProviderError
from providers.llama_build import BASELINE
from providers.model_files import check_model_file

log = structlog.get_logger(__name__)
STOP_GRACE_S = 5.0
# exits that mean the engine itself failed on this CPU (not a stop, not the OOM killer's KILL)
CRASH_CODES = frozenset(
    -int(s) for s in (signal.SIGILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE)
)
LOG_TAIL_LINES = 20


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "running"
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
        return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last ``lines`` lines of a child's log (bounded read: the last 64 KiB)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 65536))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return list(deque(text.splitlines(), maxlen=lines))


State = Literal["not started", "starting", "up", "down"]


@dataclass
class PartStatus:
    name: str
    state: State = "starting"
    pid: int | None = None
    restarts: int = 0
    last_exit: str | None = None  # "exit status 1", "killed by SIGKILL"
    last_exit_at: float | None = None
    next_start_at: float | None = None  # while down: when the next attempt runs
    since: float = 0.0
    log_file: str = ""

    def as_json(self, now: float) -> dict[str, object]:
        data: dict[str, object] = {
            "name": self.name,
            "state": self.state,
            "pid": self.pid,
            "restarts": self.restarts,
            "last_exit": self.last_exit,
            "for_s": round(now - self.since, 1),
            "log": self.log_file,
        }
        if self.next_start_at is not None:
            data["next_start_in_s"] = round(max(0.0, self.next_start_at - now), 1)
        return data


# the ports the kernel hands out for outgoing connections and bind(0) (Linux's default range
# when /proc does not say): a port picked there can be taken by any client socket before the
# child that was meant to listen on it binds it (a test saw uvicorn fail with EADDRINUSE)
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 10_000  # below: ports of well-known services


def _ephemeral_start() -> int:
    try:
        return int(_EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, chosen below the ephemeral range when there is room, so
    no outgoing connection takes it before its listener binds it; else one bind(0) gives."""
    top = _ephemeral_start()
    for _ in range(50):
        if top - _LOWEST < 1_000:
            break
        port = _LOWEST + secrets.randbelow(top - _LOWEST)
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue  # in use: another
            return port
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ChildProcess:
    def __init__(
        self,
        name: str,
        argv: list[str],
        log_file: Path,
        nice: int = 0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.log_file = log_file
        self.nice = nice
        self.env = env or {}  # added to this process's environment
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=(lambda: os.nice(self.nice)) if self.nice else None,
                env={**os.environ, **self.env} if self.env else None,
            )
        log.info("child.started", name=self.name, pid=self.proc.pid, log=str(self.log_file))

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pause(self) -> bool:
        """Stop the process where it is (SIGSTOP to its group); True if it was running."""
        return self._signal(signal.SIGSTOP, "child.paused")

    def resume(self) -> bool:
        """Let a paused process go on (SIGCONT); harmless when it was not paused."""
        return self._signal(signal.SIGCONT, "child.resumed")

    def _signal(self, sig: signal.Signals, event: str) -> bool:
        if not self.alive():
            return False
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            return False
        log.debug(event, name=self.name, pid=self.proc.pid)
        return True

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGCONT)  # a paused server could not act on SIGTERM
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(STOP_GRACE_S)
        log.info("child.stopped", name=self.name)


class EmbeddedRedis:
    """A private ``redis-server`` on loopback with a generated password and AOF under data_dir.
    The password is in a 0600 config file, never on the command line (``ps`` shows argv to every
    local user)."""

    def __init__(self, data_dir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise PermanentProviderError(
                "redis", "redis-server not found (apt-get install redis-server)"
            )
        self.folder = data_dir / "redis"
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        self.password = secrets.token_urlsafe(24)
        self.config = self.folder / "redis.conf"
        self.port = 0
        self._write_config()
        self.child = ChildProcess(
            "redis", [binary, str(self.config)], data_dir / "logs" / "redis.log"
        )

    def _write_config(self) -> None:
        """A fresh free port each time: another process may take a port between our probe and
        redis binding it."""
        self.port = free_port()
        lines = [
            "bind 127.0.0.1", f"port {self.port}", f"requirepass {self.password}",
            f'dir "{self.folder.resolve()}"', "appendonly yes", "appendfsync always",
            'save ""', "daemonize no",
        ]  # fmt: skip
        fd = os.open(self.config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write("\n".join(lines) + "\n")

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    async def start(self, timeout_s: float = 10.0, attempts: int = 3) -> None:
        """Start and wait for PONG; a port taken meanwhile is retried on a new one."""
        for attempt in range(1, attempts + 1):
            try:
                await self._start(timeout_s)
                return
            except PermanentProviderError:
                taken = any(
                    "Address already in use" in line for line in log_tail(self.child.log_file)
                )
                if not taken or attempt == attempts:
                    raise
                log.warning("redis.port_taken", port=self.port, attempt=attempt)
                self._write_config()

    async def _start(self, timeout_s: float) -> None:
        self.child.start()
        # bounded pings: what answers on the port may be another process that never replies
        client = Redis.from_url(self.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            async with asyncio.timeout(timeout_s):
                while True:
                    if not self.child.alive():
                        raise PermanentProviderError("redis", f"exited; see {self.child.log_file}")
                    try:
                        await client.ping()
                        return
                    except (RedisConnectionError, RedisTimeoutError, BusyLoadingError):  # not up
                        await asyncio.sleep(0.05)
        finally:
            await client.aclose()

    def stop(self) -> None:
        self.child.stop()


class LocalLLMServer:
    """llama-cpp-python's OpenAI-compatible server on loopback, started and stopped by us."""

    def __init__(
        self,
        settings: LocalLLMSettings,
        model_path: Path,
        data_dir: Path,
        name: str = "llama",
        nice: int = 0,
        engine: EngineChoice | None = None,
    ) -> None:
        check_model_file(model_path)
        self.settings = settings
        if engine is None:
            try:
                engine = choose_engine(settings.engine, read_cpuinfo())
            except EngineNotUsable as exc:
                raise PermanentProviderError("local-llm", str(exc)) from exc
        self.engine = engine
        argv = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
            "--host", settings.host, "--port", str(settings.port),
            "--n_threads", str(settings.threads), "--n_ctx", str(settings.context),
            "--model_alias", "local",
        ]  # fmt: skip
        log_file = data_dir / "logs" / f"{name}.log"
        self.child = ChildProcess(name, argv, log_file, nice, engine.env())
        self._warm_prompt: tuple[str, list[dict[str, object]]] = ("你是一个助手。", [])

    @property
    def base_url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.port}/v1"

    async def start(self, complete: bool = True) -> None:
        """Spawn the server and return once it has answered a real completion with the primed
        prompt (serving ``/models`` only means the weights loaded). ``complete=False`` leaves
        that to the caller's ``warm``, which knows the turn's prompt.

        A server on an extra engine (x86-64-v4) that dies or cannot answer while starting, or
        that crashed (SIGILL, SIGSEGV…) since its last start, is started again on the baseline:
        logged as ``local_llm.engine_fell_back``, and the baseline stays for this process."""
        returncode = self.child.proc.returncode if self.child.proc is not None else None
        if not self.engine.is_baseline and returncode in CRASH_CODES:
            self._fall_back(f"the server was {describe_exit(returncode)}")
        try:
            await self._start(complete)
        except PermanentProviderError as exc:
            if self.engine.is_baseline:
                raise
            self.child.stop()
            self._fall_back(exc.message)
            await self._start(complete)
        log.info(
            "local_llm.engine", name=self.child.name, engine=self.engine.name,
            reason=self.engine.reason,
        )  # fmt: skip

    def _fall_back(self, why: str) -> None:
        log.error(
            "local_llm.engine_fell_back", name=self.child.name, engine=self.engine.name,
            to=BASELINE.name, why=why, log_tail=log_tail(self.child.log_file, 8),
        )  # fmt: skip
        self.engine = baseline(f"{self.engine.name} failed here: {why}")
        self.child.env = self.engine.env()

    async def _start(self, complete: bool) -> None:
        self.child.start()
        async with httpx.AsyncClient() as client:
            try:
                async with asyncio.timeout(self.settings.startup_timeout_s):
                    while True:
                        if not self.child.alive():
                            raise PermanentProviderError(
                                "local-llm", f"server exited; see {self.child.log_file}"
                            )
                        try:
                            response = await client.get(f"{self.base_url}/models", timeout=2)
                            if response.status_code == 200:
                                break
                        except httpx.HTTPError:
                            pass
                        await asyncio.sleep(0.25)
            except TimeoutError as exc:
                self.stop()
                raise PermanentProviderError("local-llm", "server did not start in time") from exc
        if complete:
            await self._complete()

    def prime(self, system_prompt: str, tools: list[dict[str, object]]) -> None:
        """The prompt every (re)start is warmed with before it counts as up."""
        self._warm_prompt = (system_prompt, tools)

    async def warm(self, system_prompt: str, tools: list[dict[str, object]]) -> None:
        """Evaluate the static prefix (system prompt + tool schemas) now, so the first device
        turn does not pay ~20 s of prompt processing on 2 cores; later turns reuse it. Kept, so a
        restarted server is warmed the same way before it counts as up."""
        self.prime(system_prompt, tools)
        try:
            await self._complete()
        except PermanentProviderError as exc:
            if self.engine.is_baseline:
                raise
            self.child.stop()
            self._fall_back(exc.message)
            await self._start(complete=True)

    async def _complete(self) -> None:
        """One real completion; raises PermanentProviderError when the model cannot answer."""
        system_prompt, tools = self._warm_prompt
        body: dict[str, object] = {
            "model": "local",
            "messages": [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": "你好"},
            ],
            "max_tokens": 1,
        }
        if tools:
            body["tools"] = tools
        started = time.perf_counter()
        async with httpx.AsyncClient() as client:
            try:
                response = await client.post(
                    f"{self.base_url}/chat/completions",
                    json=body,
                    timeout=self.settings.startup_timeout_s,
                )
                response.raise_for_status()
                choices = response.json()["choices"]
                if not choices:
                    raise ValueError("no choices in the completion")
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                alive = self.child.alive()
                raise PermanentProviderError(
                    "local-llm",
                    f"{self.child.name} did not answer a completion ({exc!r}); "
                    f"{'still running' if alive else 'the process died'}; "
                    f"see {self.child.log_file}",
                ) from exc
        log.info(
            "local_llm.answered", name=self.child.name,
            seconds=round(time.perf_counter() - started, 1),
        )  # fmt: skip

    def stop(self) -> None:
        self.child.stop()
