"""Turn traces: what one turn recalled (groups, injected text), which tools it called with what
result, and what it answered — kept in Redis per session for a day, read back through the admin
API (``GET /admin/sessions/{id}/turns``). Debugging a wrong answer starts here: was the memory
recalled, into which group, did the model check, what did it say. The end-to-end bench scores
its retrieval and safety layers from these.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson
import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError

from config import keys
from server.understanding.grounding import Grounds

log = structlog.get_logger(__name__)
MAX_TURNS = 200  # per session
MAX_RESULT_CHARS = 2000


@dataclass
class ToolCallTrace:
    name: str
    arguments: dict[str, Any]
    result: str


@dataclass
class TurnTrace:
    question: str = ""
    person: str = ""
    memory: dict[str, Any] | None = None  # the read path's ReadResult, recorded (as_json)
    grounds: Grounds | None = None  # a household fact question: what the reply may state
    # the constraints the request names, as the device says them first (server.memory.applies)
    remind: list[str] = field(default_factory=list)
    # the safety group's other constraints, as the device would say them (a reply sentence
    # recommending what one forbids is replaced by it: server.device.heeding)
    unsaid: list[str] = field(default_factory=list)
    # what the person just did (memory.utterance_kinds: statement, request, command…) and how
    # sure the classifier was; None when it could not tell (another embedder)
    kind: str | None = None
    kind_confidence: float = 0.0
    tool_calls: list[ToolCallTrace] = field(default_factory=list)
    reply: str = ""
    # sentences the model wrote that were not spoken as written (a claimed action, an invented
    # fact: server.device.claims, server.understanding.grounding), each with why
    replaced: list[dict[str, Any]] = field(default_factory=list)
    failure: str | None = None  # why the model did not answer (llm_unavailable / llm_failed)
    finished: bool = False
    timing: dict[str, float] = field(default_factory=dict)  # stage → ms after the turn began
    at: float = field(default_factory=time.time)

    def record_tool(self, name: str, arguments: dict[str, Any], result: str) -> None:
        self.tool_calls.append(ToolCallTrace(name, arguments, result[:MAX_RESULT_CHARS]))

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class TraceStore:
    def __init__(self, redis: Redis, ttl_s: float) -> None:
        self.redis = redis
        self.ttl_s = int(ttl_s)

    async def save(self, session_id: str, trace: TurnTrace) -> None:
        """Best effort: a trace is for debugging and benches, never worth failing a turn."""
        if self.ttl_s <= 0:
            return
        key = keys.turn_traces(session_id)
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.rpush(key, orjson.dumps(trace.as_json()))
                pipe.ltrim(key, -MAX_TURNS, -1)
                pipe.expire(key, self.ttl_s)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning("trace.not_saved", session=session_id, error=str(exc))

    async def turns(self, session_id: str) -> list[dict[str, Any]]:
        raw = await self.redis.lrange(keys.turn_traces(session_id), 0, -1)  # type: ignore[misc]
        return [orjson.loads(item) for item in raw]
