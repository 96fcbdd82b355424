"""Server-side tools offered to the LLM next to the device's MCP tools.

A tool is a name, a description, a JSON schema and an async handler. Handlers receive the calling
session's identity, so no tool can act for anyone but the person on the other end.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from memory.schema import PersonId
from server.traces import TurnTrace

ToolHandler = Callable[[dict[str, Any], "ToolContext"], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Sharing:
    """Another store of the household a turn may read (``server.memory.household_read``): the
    household's own (the device's person: all of it) or another member's (their constraints
    only). ``name``: who "我" is in that store's memories (its owner, as the household calls
    them)."""

    person: PersonId
    name: str
    whole: bool = False


@dataclass(frozen=True, slots=True)
class ToolContext:
    person: PersonId
    device_id: str
    session_id: str
    trace: TurnTrace = field(default_factory=TurnTrace)  # this turn's, filled as it runs
    # the household's other stores this turn reads beside ``person``'s (a member identified by
    # voice: the household's memory and the other members' constraints); () for everyone else
    household: tuple[Sharing, ...] = ()


@dataclass(frozen=True, slots=True)
class ServerTool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: ToolHandler

    def as_function(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass
class ToolRegistry:
    tools: dict[str, ServerTool] = field(default_factory=dict)

    def register(self, tool: ServerTool) -> None:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self.tools[tool.name] = tool

    def get(self, name: str) -> ServerTool | None:
        return self.tools.get(name)

    def functions(self) -> list[dict[str, Any]]:
        return [tool.as_function() for tool in self.tools.values()]
