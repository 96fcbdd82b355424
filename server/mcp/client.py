"""The server as MCP *client* of the device, over the WebSocket (device-protocol.md §1.5).

Requests go out as ``{"type":"mcp","payload":<JSON-RPC>}``; responses are matched by id. Tool
names are sanitised for OpenAI function calling and mapped back when the model calls them.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

log = structlog.get_logger(__name__)

PROTOCOL_VERSION = "2024-11-05"
MAX_TOOL_PAGES = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-\u4e00-\u9fff]")

SendPayload = Callable[[dict[str, Any]], Awaitable[None]]


class McpCallError(Exception):
    """The device answered with a JSON-RPC error, timed out, or went away."""


@dataclass(frozen=True, slots=True)
class DeviceTool:
    name: str
    description: str
    input_schema: dict[str, Any]

    @property
    def function_name(self) -> str:
        return _UNSAFE.sub("_", self.name)[:64]

    def as_function(self) -> dict[str, Any]:
        schema = self.input_schema or {"type": "object", "properties": {}}
        return {
            "type": "function",
            "function": {
                "name": self.function_name,
                "description": self.description[:1024],
                "parameters": schema,
            },
        }


class DeviceMcpClient:
    def __init__(self, send: SendPayload, *, timeout_s: float, call_timeout_s: float) -> None:
        self._send = send
        self._timeout_s = timeout_s
        self._call_timeout_s = call_timeout_s
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.tools: dict[str, DeviceTool] = {}  # by function name
        self.server_info: dict[str, Any] = {}

    async def _request(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            async with asyncio.timeout(timeout_s):
                response = await future
        except TimeoutError as exc:
            raise McpCallError(f"{method}: no answer within {timeout_s:g} s") from exc
        finally:
            self._pending.pop(request_id, None)
        if "error" in response:
            error = response["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise McpCallError(f"{method}: {message}")
        return response.get("result")

    def handle(self, payload: dict[str, Any]) -> None:
        """A JSON-RPC response or notification from the device."""
        request_id = payload.get("id")
        if "method" in payload and request_id is None:
            log.debug("mcp.notification", method=payload.get("method"))
            return
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        if future is None or future.done():
            log.warning("mcp.unexpected_response", id=request_id)
            return
        future.set_result(payload)

    async def start(self, vision_url: str, vision_token: str) -> None:
        """initialize, then tools/list following nextCursor; no fixed waits."""
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            # xiaozhi-sdk crashes without capabilities.vision (§1.5).
            "capabilities": {"vision": {"url": vision_url, "token": vision_token}},
            "clientInfo": {"name": "hearth", "version": "0.1"},
        }
        result = await self._request("initialize", params, self._timeout_s)
        self.server_info = result.get("serverInfo", {}) if isinstance(result, dict) else {}
        cursor = ""
        for _ in range(MAX_TOOL_PAGES):
            page = await self._request(
                "tools/list", {"cursor": cursor, "withUserTools": False}, self._timeout_s
            )
            if not isinstance(page, dict):
                raise McpCallError("tools/list: result is not an object")
            for raw in page.get("tools", []):
                if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                    tool = DeviceTool(
                        raw["name"], str(raw.get("description", "")), raw.get("inputSchema") or {}
                    )
                    self.tools[tool.function_name] = tool
            cursor = page.get("nextCursor") or ""
            if not cursor:
                break
        log.info("mcp.tools", device=self.server_info.get("name"), tools=sorted(self.tools))

    async def call(self, function_name: str, arguments: dict[str, Any]) -> str:
        tool = self.tools.get(function_name)
        if tool is None:
            raise McpCallError(f"unknown device tool {function_name}")
        result = await self._request(
            "tools/call", {"name": tool.name, "arguments": arguments}, self._call_timeout_s
        )
        if isinstance(result, dict):
            texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
            text = "\n".join(t for t in texts if t)
            if result.get("isError"):
                raise McpCallError(text or "tool reported an error")
            return text
        return str(result)

    def cancel_all(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.cancel()
        self._pending.clear()
