"""``hearth bench api``: the memory HTTP API on loopback under 16 concurrent clients.

The API runs in its own process (``bench.api_server``) against a private Redis and the
embedded store; clients are asyncio tasks, one HTTP/1.1 connection each. Printed: store and
search latency p50/p99 and requests per second, and the cost of an idempotent replay next to
a fresh store.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from redis.asyncio import Redis
from rich.console import Console
from rich.table import Table

from bench.corpus import unique_items
from bench.device import pct
from bench.results import Figure
from memory.registry import ApiKeys
from providers.processes import EmbeddedRedis, free_port
from server.api.names import DEFAULT_STORE

Call = Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]


@contextlib.asynccontextmanager
async def api_process(folder: Path, redis_url: str) -> AsyncIterator[str]:
    port = free_port()
    argv = [sys.executable, "-m", "bench.api_server", "--redis-url", redis_url,
            "--data-dir", str(folder), "--port", str(port)]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*argv)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as probe:
            for _ in range(600):
                with contextlib.suppress(httpx.HTTPError):
                    await probe.get(f"{base}/api/v1/models")
                    break
                await asyncio.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)


async def phase(base: str, key: str, clients: int, per_client: int, call: Call) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}

    async def client(n: int) -> None:
        async with httpx.AsyncClient(base_url=base, headers={"X-API-Key": key}, timeout=60) as c:
            for i in range(per_client):
                start = time.perf_counter()
                response = await call(c, n * per_client + i)
                latencies.append(time.perf_counter() - start)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    began = time.perf_counter()
    await asyncio.gather(*[client(n) for n in range(clients)])
    wall = time.perf_counter() - began
    return {"n": len(latencies), "p50": pct(latencies, 0.5) * 1000,
            "p99": pct(latencies, 0.99) * 1000, "rps": len(latencies) / wall,
            "statuses": statuses}  # fmt: skip


async def run(clients: int, per_client: int) -> list[tuple[str, dict[str, Any]]]:
    bulk_calls = max(1, per_client // 6)
    bulk_texts = (BULK_SOLO + clients * bulk_calls) * BULK_SIZE
    items = unique_items(clients * per_client * 2 + 100 + bulk_texts, seed=11)
    texts = [str(item.memory["text"]) for item in items]
    questions = [item.question for item in items]
    with tempfile.TemporaryDirectory(prefix="hearth-bench-api-") as tmp:
        folder = Path(tmp)
        redis_server = EmbeddedRedis(folder / "redis")
        await redis_server.start()
        redis = Redis.from_url(redis_server.url)
        try:
            key, _ = await ApiKeys(redis).create("bench", ["*"])
            async with api_process(folder, redis_server.url) as base:

                def store(c: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
                    body = {"user_id": DEFAULT_STORE, "content": texts[i]}
                    return c.post("/api/v1/memory/store", json=body)

                def search(c: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
                    body = {"user_id": DEFAULT_STORE, "query": questions[i], "limit": 5}
                    return c.post("/api/v1/memory/search", json=body)

                def keyed(c: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
                    body = {"user_id": DEFAULT_STORE, "content": texts[clients * per_client + i]}
                    return c.post("/api/v1/memory/store", json=body,
                                  headers={"Idempotency-Key": f"bench:{i}"})  # fmt: skip

                first_bulk = clients * per_client * 2 + 100

                def bulk(c: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
                    start = first_bulk + i * BULK_SIZE
                    items = [{"content": t} for t in texts[start : start + BULK_SIZE]]
                    return c.post("/api/v1/memory/bulk-store",
                                  json={"user_id": DEFAULT_STORE, "items": items})  # fmt: skip

                def turn(c: httpx.AsyncClient, i: int) -> Awaitable[httpx.Response]:
                    body = {"user_id": DEFAULT_STORE, "user": texts[i], "assistant": "好的。"}
                    return c.post("/api/v1/memory/store-turn", json=body)

                solo = clients * per_client * 2  # one client alone: latency without queueing
                results = [
                    ("store, 1 client", await phase(base, key, 1, 50,
                                                    lambda c, i: store(c, solo + i))),
                    ("search, 1 client", await phase(base, key, 1, 50, search)),
                    ("store", await phase(base, key, clients, per_client, store)),
                    ("search", await phase(base, key, clients, per_client, search)),
                    ("store + Idempotency-Key (first)",
                     await phase(base, key, clients, per_client, keyed)),
                    ("store + Idempotency-Key (replay)",
                     await phase(base, key, clients, per_client, keyed)),
                    (f"bulk-store ×{BULK_SIZE}, 1 client",
                     await phase(base, key, 1, BULK_SOLO, bulk)),
                    (f"bulk-store ×{BULK_SIZE}",
                     await phase(base, key, clients, bulk_calls,
                                 lambda c, i: bulk(c, BULK_SOLO + i))),
                    ("store-turn (queued), 1 client", await phase(base, key, 1, 20, turn)),
                    ("store-turn (queued)", await phase(base, key, clients, per_client // 2,
                                                        turn)),
                ]  # fmt: skip
        finally:
            await redis.aclose()
            redis_server.stop()
    return results


BULK_SIZE = 10  # memories per bulk-store call in the bench
BULK_SOLO = 10  # bulk-store calls of the single client


def main(clients: int = 16, per_client: int = 60) -> list[Figure]:
    results = asyncio.run(run(clients, per_client))
    table = Table(
        "operation",
        "requests",
        "p50 ms",
        "p99 ms",
        "req/s",
        "statuses",
        title=f"memory API on loopback, {clients} concurrent clients unless noted",
    )
    for name, r in results:
        statuses = ", ".join(f"{code}×{count}" for code, count in sorted(r["statuses"].items()))
        table.add_row(name, str(r["n"]), f"{r['p50']:.2f}", f"{r['p99']:.2f}",
                      f"{r['rps']:.0f}", statuses)  # fmt: skip
    Console().print(table)
    return figures(dict(results), clients)


def figures(results: dict[str, dict[str, Any]], clients: int) -> list[Figure]:
    """The results table's row (bench.results): one client's latency, the throughput of many."""
    store, search = results["store, 1 client"], results["search, 1 client"]
    return [
        Figure(
            "store / search, one client, p50",
            f"{store['p50']:.1f} ms / {search['p50']:.1f} ms; {results['store']['rps']:.0f} "
            f"writes / {results['search']['rps']:.0f} searches per second per process "
            f"({clients} clients)",
        )
    ]
