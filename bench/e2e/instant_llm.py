"""An OpenAI-compatible chat endpoint that answers 「好的。」 at once, for retrieval-only runs:
the retrieval layer is read from turn traces and needs no model, but a device turn still calls
one. Never used for the answer or safety layers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from providers.processes import free_port


def _chunk(delta: dict[str, str], finish: str | None = None) -> str:
    body = {"id": "instant", "object": "chat.completion.chunk", "created": 0, "model": "instant",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


async def _chat(request: Request) -> Response:
    await request.body()

    async def events() -> AsyncIterator[str]:
        yield _chunk({"role": "assistant", "content": "好的。"})
        yield _chunk({}, "stop")
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


@contextlib.asynccontextmanager
async def instant_llm() -> AsyncIterator[str]:
    """Serve on a free loopback port; yields the base URL."""
    port = free_port()
    app = Starlette(routes=[Route("/v1/chat/completions", _chat, methods=["POST"])])
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:  # noqa: ASYNC110 - uvicorn offers no started event
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        await task
