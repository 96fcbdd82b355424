"""``hearth bench device``: server-added latency per turn and memory per idle connection.

The server runs in its own process (``bench.device_server``) with instant scripted LLM and TTS;
this process is the load: N devices on loopback, each with its own authenticated connection,
asking text turns (``listen detect``) answered by an eight-sentence reply, pausing 0-0.5 s
between turns — the shape the reference server was measured with (shared/docs/anchors.md).

Server-added time = text received → first Opus frame sent, minus time spent waiting on the
providers, measured inside the server process for every turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.approvals import approve_pair
from bench.device_client import DeviceClient
from bench.results import Figure
from config.settings import HearthSettings
from providers.processes import EmbeddedRedis, LocalLLMServer, free_port
from server.auth import TokenAuthority

console = Console()
FIRST_TURN_SPREAD_S = 3.0


@dataclass
class ServerProcess:
    proc: asyncio.subprocess.Process
    port: int
    samples: Path
    secret: str
    redis_url: str

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def sample_count(self) -> int:
        return len(self.samples.read_text().splitlines()) if self.samples.exists() else 0

    def samples_since(self, start: int) -> list[tuple[float, float]]:
        lines = self.samples.read_text().splitlines()[start:]
        return [(float(a), float(b)) for a, b in (line.split() for line in lines)]


@contextlib.asynccontextmanager
async def server_process(
    folder: Path, redis_url: str, llm_base_url: str | None = None, real_tts: bool = False
) -> AsyncIterator[ServerProcess]:
    secret = secrets.token_urlsafe(24)
    samples = folder / f"samples-{uuid.uuid4().hex[:6]}.txt"
    argv = [sys.executable, "-m", "bench.device_server", "--redis-url", redis_url,
            "--secret", secret, "--samples", str(samples), "--data-dir", str(folder)]  # fmt: skip
    if llm_base_url:
        argv += ["--llm-base-url", llm_base_url]
    if real_tts:
        argv.append("--real-tts")
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        if not line.startswith("READY"):
            raise RuntimeError(f"bench server failed to start: {line!r}")
        yield ServerProcess(proc, int(line.split()[1]), samples, secret, redis_url)
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)


def device_for(server: ServerProcess, n: int) -> DeviceClient:
    mac = "02:00:" + ":".join(f"{b:02x}" for b in n.to_bytes(4, "big"))
    client_id = str(uuid.uuid4())
    approve_pair(server.redis_url, mac, client_id)  # as an operator would (auth.enrollment)
    token = TokenAuthority(server.secret.encode(), 86400).mint(mac, client_id, time.time())
    return DeviceClient(f"ws://127.0.0.1:{server.port}/xiaozhi/v1/", mac, client_id, token)


def underruns(frame_times: list[float], frame_s: float = 0.060) -> int:
    """Times a device playing what it received would have run dry within one turn."""
    dry = 0
    played_until = None
    for arrived in frame_times:
        if played_until is not None and arrived > played_until:
            dry += 1
            played_until = arrived
        played_until = (played_until or arrived) + frame_s
    return dry


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_load(
    server: ServerProcess, devices: int, turns: int, progress: Progress
) -> dict[str, float]:
    task = progress.add_task(f"{devices} devices", total=devices * turns)
    client_ttfa: list[float] = []
    dry_turns = 0
    before = server.sample_count()
    rng = random.Random(devices)

    fleet = [device_for(server, n) for n in range(devices)]
    for chunk in range(0, devices, 50):  # connection set-up is not what this measures
        await asyncio.gather(*(d.connect() for d in fleet[chunk : chunk + 50]))

    async def one(n: int) -> None:
        device = fleet[n]
        # Spread first turns over one reply length (~3 s): 200 devices firing in the same
        # instant is a start-up artifact, not steady traffic. Between turns: 0-0.5 s, as the
        # reference server was measured.
        await asyncio.sleep(rng.uniform(0, FIRST_TURN_SPREAD_S))
        for _ in range(turns):
            result = await device.ask("今天天气怎么样", within_s=120)
            nonlocal dry_turns
            if result.first_audio_s is not None:
                client_ttfa.append(result.first_audio_s)
            dry_turns += underruns(result.frame_times) > 0
            progress.advance(task)
            await asyncio.sleep(rng.uniform(0, 0.5))
        await device.close()

    started = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(devices)))
    wall = time.perf_counter() - started
    samples = server.samples_since(before)
    added = [(total - provider) * 1000 for total, provider in samples]
    return {
        "devices": devices,
        "turns": len(samples),
        "added_p50": pct(added, 0.50),
        "added_p99": pct(added, 0.99),
        "added_mean": statistics.fmean(added),
        "client_p50": pct(client_ttfa, 0.50) * 1000,
        "client_p99": pct(client_ttfa, 0.99) * 1000,
        "turns_per_s": len(samples) / wall,
        "underrun_turns": dry_turns,
    }


async def idle_memory(server: ServerProcess, count: int) -> tuple[int, float]:
    """RSS growth of the server per idle connection (hello done, MCP answered, then silent)."""
    warm = [device_for(server, 900_000 + n) for n in range(20)]
    for device in warm:  # warm allocator and code paths first
        await device.connect()
    for device in warm:
        await device.close()
    await asyncio.sleep(0.5)
    base = server.rss_kb()
    devices = [device_for(server, 1_000_000 + n) for n in range(count)]
    for chunk in range(0, count, 50):
        await asyncio.gather(*(d.connect() for d in devices[chunk : chunk + 50]))
    await asyncio.sleep(1.0)  # let the MCP handshakes finish
    loaded = server.rss_kb()
    for device in devices:
        await device.close()
    return count, (loaded - base) / count


async def local_llm_turn(settings: HearthSettings, folder: Path, redis_url: str) -> list[float]:
    model = settings.resolve(settings.local_llm.model_file)
    llm = LocalLLMServer(settings.local_llm.model_copy(update={"port": free_port()}), model, folder)
    await llm.start()
    try:
        async with server_process(folder, redis_url, llm.base_url, real_tts=True) as server:
            times = []
            for question in ["你好，你是谁？", "今天适合出门吗？", "给我讲个很短的笑话"]:
                device = device_for(server, random.randrange(10**6))
                await device.connect()
                result = await device.ask(question, within_s=120)
                await device.close()
                if result.first_audio_s is not None:
                    times.append(result.first_audio_s)
            return times
    finally:
        llm.stop()


async def main(
    settings: HearthSettings, device_counts: list[int], turns: int, idle: int, local_llm: bool
) -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        redis = EmbeddedRedis(folder)
        await redis.start()
        try:
            return await _run(settings, folder, redis.url, device_counts, turns, idle, local_llm)
        finally:
            redis.stop()


async def _run(
    settings: HearthSettings, folder: Path, redis_url: str, device_counts: list[int],
    turns: int, idle: int, local_llm: bool,
) -> list[Figure]:  # fmt: skip
    rows = []
    async with server_process(folder, redis_url) as server:
        with Progress(console=console, transient=True) as progress:
            for devices in device_counts:
                rows.append(await run_load(server, devices, turns, progress))
        idle_count, per_conn_kb = await idle_memory(server, idle) if idle else (0, 0.0)
    table = Table(title="hearth bench device — instant scripted LLM/TTS, 8-sentence replies")
    for column in ("devices", "turns", "server-added p50 ms", "p99 ms", "mean ms",
                   "client TTFA p50 ms", "p99 ms", "turns/s", "turns with underrun"):  # fmt: skip
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(
            f"{r['devices']:.0f}", f"{r['turns']:.0f}", f"{r['added_p50']:.2f}",
            f"{r['added_p99']:.2f}", f"{r['added_mean']:.2f}", f"{r['client_p50']:.1f}",
            f"{r['client_p99']:.1f}", f"{r['turns_per_s']:.1f}", f"{r['underrun_turns']:.0f}",
        )  # fmt: skip
    console.print(table)
    if idle_count:
        console.print(f"idle connections: {idle_count}, server RSS per idle connection: "
                      f"{per_conn_kb:.1f} KB")  # fmt: skip
    if local_llm:
        times = await local_llm_turn(settings, folder, redis_url)
        console.print("local LLM + espeak-ng, detect → first audio frame: "
                      + ", ".join(f"{t:.2f} s" for t in times))  # fmt: skip
    return figures(rows, idle_count, per_conn_kb)


def figures(rows: list[dict[str, float]], idle: int, per_conn_kb: float) -> list[Figure]:
    """The results table's rows (bench.results): the most devices' server-added time to first
    audio, and memory per idle connection."""
    found = []
    if rows:
        most = max(rows, key=lambda r: r["devices"])
        underruns = int(most["underrun_turns"])
        found.append(Figure(
            f"server-added time to first audio at {most['devices']:.0f} devices, p50 / p99",
            f"{most['added_p50']:.1f} ms / {most['added_p99']:.1f} ms, "
            f"{f'{underruns} underruns' if underruns else 'no underrun'} in "
            f"{most['turns']:,.0f} turns",
        ))  # fmt: skip
    if idle:
        found.append(Figure(f"resident memory per idle connection ({idle} connections)",
                            f"{per_conn_kb:.0f} KB"))  # fmt: skip
    return found
