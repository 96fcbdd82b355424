"""``hearth bench agents``: what a coding agent pays for household memory.

- ``hearth-agent-context`` wall time per call (a new process per prompt, as a prompt hook runs
  it), p50 over the prompts;
- MCP ``memory_search`` latency on loopback through a real MCP client session, p50 / p99.

Against a ``hearth up`` the bench starts (instant stand-in model, the e2e snapshot imported for
the ``bench`` person), so the figures include the read path on a realistic household.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from redis.asyncio import Redis
from rich.console import Console
from rich.table import Table

from bench.device import pct
from bench.e2e.data import load_questions, load_snapshot
from bench.e2e.hearth import running_hearth
from bench.e2e.instant_llm import instant_llm
from bench.results import Figure
from config.run_files import redis_url_file
from server.mcp.tokens import McpTokens

console = Console()


def agent_context_times(env: dict[str, str], prompts: list[str]) -> tuple[list[float], int]:
    """Seconds per ``hearth-agent-context`` process, and how many printed a memory block."""
    script = Path(sys.executable).with_name("hearth-agent-context")
    times, injected = [], 0
    for prompt in prompts:
        started = time.perf_counter()
        done = subprocess.run([str(script), "--person", "bench"], input=prompt.encode(),
                              capture_output=True, env=env, check=True, timeout=30)  # fmt: skip
        times.append(time.perf_counter() - started)
        injected += bool(done.stdout.strip())
    return times, injected


async def mcp_search_times(url: str, token: str, queries: list[str]) -> list[float]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    times = []
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        await client.call_tool("memory_search", {"query": "预热"})
        for query in queries:
            started = time.perf_counter()
            await client.call_tool("memory_search", {"query": query})
            times.append(time.perf_counter() - started)
    return times


async def main(calls: int) -> list[Figure]:
    import os

    from providers.processes import free_port

    snapshot = load_snapshot()
    questions = [q.question for q in load_questions()]
    prompts = (questions * (calls // len(questions) + 1))[:calls]
    agent_port = free_port()
    with tempfile.TemporaryDirectory(prefix="hearth-agents-") as tmp:
        folder = Path(tmp)
        async with instant_llm() as llm, running_hearth(
            folder, [f"mcp.agent_port={agent_port}", f"mcp.device_port={free_port()}"], llm,
            folder / "hearth.log",
        ) as hearth:  # fmt: skip
            await hearth.prepare(snapshot.person, snapshot.jsonl(dt.date.today()))
            redis = Redis.from_url(redis_url_file(hearth.settings.data_dir).read_text().strip())
            token = await McpTokens(redis).create("bench", snapshot.person, "bench", "agent")
            await redis.aclose()
            env = {**os.environ, "HEARTH_DATA_DIR": str(folder)}
            hook, injected = await asyncio.to_thread(agent_context_times, env, prompts)
            search = await mcp_search_times(f"http://127.0.0.1:{agent_port}/mcp", token,
                                            prompts)  # fmt: skip
    table = Table(title="hearth bench agents — loopback, 2 cores, e2e snapshot (32 memories)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row(f"hearth-agent-context wall time, p50 / p99 of {len(hook)} prompts",
                  f"{pct(hook, 0.5) * 1000:.0f} / {pct(hook, 0.99) * 1000:.0f} ms")  # fmt: skip
    table.add_row("  prompts that got a memory block", f"{injected}/{len(hook)}")
    table.add_row(f"MCP memory_search, p50 / p99 of {len(search)} calls",
                  f"{pct(search, 0.5) * 1000:.1f} / {pct(search, 0.99) * 1000:.1f} ms")  # fmt: skip
    table.add_row("  mean", f"{statistics.mean(search) * 1000:.1f} ms")
    console.print(table)
    return [
        Figure(
            "hearth-agent-context per prompt / MCP memory_search, p50",
            f"{pct(hook, 0.5) * 1000:.0f} ms / {pct(search, 0.5) * 1000:.1f} ms",
        )
    ]
