"""Serving an ASGI app on a free loopback port for a test (uvicorn, no signal handling)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Literal

import uvicorn

from providers.processes import free_port
from tests.support.waiting import wait_until


@contextlib.asynccontextmanager
async def serving(
    app: Any, lifespan: Literal["on", "off"] = "off", port: int | None = None
) -> AsyncIterator[str]:
    """Yields ``http://127.0.0.1:PORT``; the server stops when the block ends."""
    port = port or free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan=lifespan)
    )
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    await wait_until(lambda: server.started, within_s=10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
