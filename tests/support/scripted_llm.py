"""A scripted OpenAI-compatible chat server on loopback (stands in for a hosted LLM only).

Each test installs a ``responder``: request JSON → ``Reply``. The server streams the reply as
SSE chunks the way OpenAI does, records every request, and can misbehave on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.waiting import wait_until


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name":…, "arguments":{…}}
    garbage: bool = False
    status: int = 200
    hang: asyncio.Event | None = None  # answer only once this is set (a call in flight)


Responder = Callable[[dict[str, Any]], Reply]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def _completion(text: str) -> dict[str, Any]:
    """A non-streaming chat completion (the write path's JSON calls)."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class ScriptedLLM:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.responder: Responder = lambda req: Reply("好的。")
        # /audio/transcriptions: raw multipart bodies received, and the reply to each
        self.uploads: list[bytes] = []
        self.transcriber: Callable[[bytes], Reply] = lambda body: Reply("")
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        reply = self.responder(body)
        if reply.hang is not None:
            await asyncio.wait_for(reply.hang.wait(), timeout=120)
        if reply.status != 200:
            return JSONResponse({"error": {"message": "scripted failure"}}, reply.status)
        if reply.garbage:
            return PlainTextResponse("<html>502 Bad Gateway</html>", media_type="text/event-stream")

        if not body.get("stream"):
            return JSONResponse(_completion(reply.text))

        async def events() -> AsyncIterator[str]:
            yield _chunk({"role": "assistant", "content": ""})
            text = reply.text
            for i in range(0, len(text), 3):
                yield _chunk({"content": text[i : i + 3]})
            for index, call in enumerate(reply.tool_calls):
                head = {"name": call["name"], "arguments": ""}
                args = {"arguments": json.dumps(call["arguments"], ensure_ascii=False)}
                yield _chunk({"tool_calls": [
                    {"index": index, "id": f"call_{index}", "type": "function", "function": head}
                ]})  # fmt: skip
                yield _chunk({"tool_calls": [{"index": index, "function": args}]})
            yield _chunk({}, "tool_calls" if reply.tool_calls else "stop")
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def _transcribe(self, request: Request) -> Response:
        body = await request.body()
        self.uploads.append(body)
        reply = self.transcriber(body)
        if reply.status != 200:
            return JSONResponse({"error": {"message": "scripted failure"}}, reply.status)
        return PlainTextResponse(reply.text)

    async def start(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/audio/transcriptions", self._transcribe, methods=["POST"]),
            ]
        )
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        self._task = asyncio.create_task(self._server.serve())
        server = self._server
        await wait_until(lambda: server.started, within_s=10)

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task

    def last_user_text(self) -> str:
        messages = self.requests[-1]["messages"]
        return next(m["content"] for m in reversed(messages) if m["role"] == "user")
