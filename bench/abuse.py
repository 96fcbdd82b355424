"""``hearth bench abuse``: one well-behaved device keeps talking to a real ``hearth up`` (instant
stand-in LLM, espeak-ng, loopback) while five bounded attacks run at once — slowloris on the HTTP
port, unauthenticated chunked body floods on the memory API, 300 sockets on one device token, a
burst of console logins under unknown names, and devices flooding malformed frames. Printed:
the good device's first-audio p50/p99 in a quiet run and during the attacks, the server's RSS
before and after, what each attack was answered, and whether every finished session reached the
archive (nothing lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from redis.asyncio import Redis
from rich.console import Console
from rich.table import Table
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.approvals import approve_pair
from bench.device_client import DeviceClient
from bench.e2e.hearth import HearthUnderTest, running_hearth
from bench.e2e.instant_llm import instant_llm
from bench.results import Figure
from config import keys
from config.run_files import redis_url_file
from providers.processes import free_port
from server.runtime import authority_for

console = Console()
ATTACK_S = 20.0


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Rig:
    def __init__(self, hearth: HearthUnderTest, http_port: int, console_port: int) -> None:
        self.hearth = hearth
        self.http = f"http://127.0.0.1:{http_port}"
        self.console = f"http://127.0.0.1:{console_port}"
        self.redis_url = redis_url_file(hearth.settings.data_dir).read_text().strip()
        self.authority = authority_for(hearth.settings)

    def device(self, mac: str | None = None, client: str | None = None) -> DeviceClient:
        mac = mac or "02:ab:" + ":".join(f"{b:02x}" for b in secrets.token_bytes(4))
        client = client or str(uuid.uuid4())
        approve_pair(self.redis_url, mac, client)
        token = self.authority.mint(mac, client, time.time())
        return DeviceClient(self.hearth.ws_url, mac, client, token)


async def good_device(rig: Rig, turns: int, ttfa: list[float], sessions: list[str]) -> None:
    """A device asking, one turn after the other, on one connection per few turns."""
    for start in range(0, turns, 5):
        device = rig.device()
        await device.connect()
        sessions.append(device.session_id)
        for _ in range(min(5, turns - start)):
            result = await device.ask("你好", within_s=60)
            if result.first_audio_s is not None:
                ttfa.append(result.first_audio_s * 1000)
        await device.close()


async def slowloris(rig: Rig, count: int, stop: asyncio.Event, seen: dict[str, int]) -> None:
    port = int(rig.http.rsplit(":", 1)[1])

    async def one() -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            seen["refused"] = seen.get("refused", 0) + 1
            return
        writer.write(b"POST /api/v1/memory/store HTTP/1.1\r\nHost: x\r\n")
        outcome = "held open until the end"
        with contextlib.suppress(OSError):
            while not stop.is_set():
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(2):
                        answer = await reader.read(1024)
                        outcome = answer.split(b" ", 2)[1].decode() if answer else "closed"
                        break
        seen[outcome] = seen.get(outcome, 0) + 1
        writer.close()

    await asyncio.gather(*(one() for _ in range(count)))


async def body_flood(rig: Rig, stop: asyncio.Event, seen: dict[str, int]) -> None:
    async def chunks() -> Any:
        for _ in range(2000):  # 128 MB at most per request, if nobody stopped reading
            yield b"x" * 65536

    async with httpx.AsyncClient(base_url=rig.http, timeout=10) as client:
        while not stop.is_set():
            try:
                answer = await client.post("/api/v1/memory/store", content=chunks())
                key = str(answer.status_code)
            except httpx.HTTPError as exc:
                key = type(exc).__name__
            seen[key] = seen.get(key, 0) + 1


async def one_token(rig: Rig, count: int, seen: dict[str, int]) -> None:
    device = rig.device()
    sockets = []
    for _ in range(count):
        try:
            ws = await connect(rig.hearth.ws_url, additional_headers=device.headers(),
                               open_timeout=5)  # fmt: skip
            await ws.send('{"type":"hello","version":1,"transport":"websocket"}')
            await asyncio.wait_for(ws.recv(), 5)
            sockets.append(ws)
            seen["served"] = seen.get("served", 0) + 1
        except (ConnectionClosed, InvalidStatus, TimeoutError, OSError):
            seen["refused"] = seen.get("refused", 0) + 1
    for ws in sockets:
        await ws.close()


async def login_burst(rig: Rig, count: int, seen: dict[str, int]) -> None:
    async with httpx.AsyncClient(base_url=rig.console, timeout=30) as client:

        async def one(n: int) -> None:
            try:
                answer = await client.post("/login", data={"name": f"nobody{n}", "password": "x"})
                key = str(answer.status_code)
            except httpx.HTTPError as exc:
                key = type(exc).__name__
            seen[key] = seen.get(key, 0) + 1

        await asyncio.gather(*(one(n) for n in range(count)))


async def malformed(rig: Rig, devices: int, seen: dict[str, int]) -> None:
    async def one() -> None:
        device = rig.device()
        await device.connect()
        assert device.ws is not None
        outcome = "still open"
        try:
            for _ in range(25):  # the limit is 20 per session
                await device.ws.send("{not json")
            await asyncio.wait_for(device.ws.wait_closed(), 10)
            outcome = f"closed {device.ws.close_code}"
        except ConnectionClosed:
            outcome = f"closed {device.ws.close_code}"
        except TimeoutError:
            pass
        seen[outcome] = seen.get(outcome, 0) + 1
        with contextlib.suppress(ConnectionClosed):
            await device.close()

    await asyncio.gather(*(one() for _ in range(devices)))


async def main(turns: int) -> list[Figure]:
    http_port, console_port = free_port(), free_port()
    overrides = [f"server.http_port={http_port}", f"console.port={console_port}"]
    with tempfile.TemporaryDirectory(prefix="hearth-abuse-") as tmp:
        folder = Path(tmp)
        log = folder / "hearth.log"
        async with instant_llm() as url, running_hearth(folder, overrides, url, log) as hearth:
            assert hearth.proc is not None
            rig = Rig(hearth, http_port, console_port)
            quiet: list[float] = []
            sessions: list[str] = []
            await good_device(rig, turns, quiet, sessions)
            rss_before = _rss_mb(hearth.proc.pid)
            stop = asyncio.Event()
            seen: dict[str, dict[str, int]] = {k: {} for k in
                                               ("slowloris", "body flood", "300 sockets, one token",
                                                "login burst", "malformed frames")}  # fmt: skip
            attacks = [
                asyncio.create_task(slowloris(rig, 150, stop, seen["slowloris"])),
                asyncio.create_task(body_flood(rig, stop, seen["body flood"])),
                asyncio.create_task(body_flood(rig, stop, seen["body flood"])),
                asyncio.create_task(one_token(rig, 300, seen["300 sockets, one token"])),
                asyncio.create_task(login_burst(rig, 200, seen["login burst"])),
                asyncio.create_task(malformed(rig, 20, seen["malformed frames"])),
            ]
            during: list[float] = []
            started = time.monotonic()
            await good_device(rig, turns, during, sessions)
            await asyncio.sleep(max(0.0, ATTACK_S - (time.monotonic() - started)))
            stop.set()
            await asyncio.wait_for(asyncio.gather(*attacks, return_exceptions=True), 120)
            rss_after = _rss_mb(hearth.proc.pid)
            archived = await _archived(rig, sessions)
    _report(quiet, during, rss_before, rss_after, seen, len(sessions), archived)
    return figures(quiet, during)


def figures(quiet: list[float], during: list[float]) -> list[Figure]:
    """The results table's row (bench.results): the good device's first audio, quiet and under
    the attacks."""
    return [
        Figure(
            "a good device's first audio, p50, quiet / under five attacks",
            f"{statistics.median(quiet):.1f} ms / {statistics.median(during):.1f} ms",
        )
    ]


async def _archived(rig: Rig, sessions: list[str]) -> int:
    """Sessions of the good device that reached the worker (archived transcripts)."""
    redis = Redis.from_url(rig.redis_url)
    try:
        for _ in range(100):
            found = 0
            for session in sessions:
                found += bool(await redis.exists(f"{keys.PREFIX}archived:{session}"))
            if found == len(sessions):
                break
            await asyncio.sleep(0.2)
        return found
    finally:
        await redis.aclose()


def _report(quiet: list[float], during: list[float], rss_before: float, rss_after: float,
            seen: dict[str, dict[str, int]], sessions: int, archived: int) -> None:  # fmt: skip
    table = Table(title="hearth bench abuse — a well-behaved device under five attacks")
    table.add_column("run")
    table.add_column("turns", justify="right")
    table.add_column("first audio p50 ms", justify="right")
    table.add_column("p99 ms", justify="right")
    for name, values in (("quiet", quiet), ("under attack", during)):
        table.add_row(name, str(len(values)), f"{statistics.median(values):.1f}",
                      f"{_pct(values, 0.99):.1f}")  # fmt: skip
    console.print(table)
    answers = Table(title="what the attacks were answered")
    answers.add_column("attack")
    answers.add_column("answers")
    for name, counts in seen.items():
        answers.add_row(name, ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    console.print(answers)
    console.print(f"server RSS: {rss_before:.0f} MB before the attacks, {rss_after:.0f} MB after")
    console.print(f"good device sessions: {sessions} closed, {archived} archived by the worker")
