"""Issue 20, high: slowloris — a client that never finishes its request head is disconnected
after the head deadline, while a normal request on the same port is answered (the real uvicorn
config every Hearth HTTP port uses)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from providers.processes import free_port
from server.http_limits import HeadDeadline
from server.runtime import http_config
from tests.conftest import make_settings
from tests.support.waiting import wait_until


@contextlib.asynccontextmanager
async def port_with_limits(tmp_path: Path) -> AsyncIterator[int]:
    async def ok(request: object) -> PlainTextResponse:
        return PlainTextResponse("ok")

    port = free_port()
    settings = make_settings(tmp_path)
    server = uvicorn.Server(http_config(Starlette(routes=[Route("/", ok)]), settings, port))
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    await wait_until(lambda: server.started, within_s=10)
    try:
        yield port
    finally:
        server.should_exit = True
        await task


async def test_a_head_that_never_ends_is_cut_and_others_are_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HeadDeadline, "head_timeout_s", 0.5)
    async with port_with_limits(tmp_path) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")  # no end of head, ever
        await writer.drain()
        async with asyncio.timeout(5):
            assert await reader.read() == b""  # disconnected by the server, no answer
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        async with asyncio.timeout(5):
            answer = await reader.read(1024)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")
