"""The ``check_safety`` tool: the caller's person's safety constraints for a topic, no LLM.

Safety memories are not injected every turn; when a request touches a listed topic but the
vector score is too low to surface a constraint (「推荐个餐厅」 scored 0.343 in the original, below
an irrelevant 0.384), the model calls this tool. It answers only for the person of the session
that calls it (the identity comes from the session, never from the arguments) — and, for a
member identified by voice, for what their household shares with them, as their turn's read
does (``household_read``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog

from memory.schema import MemoryClass, PersonId
from memory.store import MemoryStore, Search, search_async
from providers.embedder import Embedder, embed_async
from server.memory.household_read import OwnedStore
from server.memory.render import SAFETY_TOPICS, describe
from server.tools import ServerTool, ToolContext

log = structlog.get_logger(__name__)
MAX_CONSTRAINTS = 20

DESCRIPTION = (
    "查询这个家庭成员记录过的安全约束（过敏、忌口、用药、身体状况等）。"
    f"当请求涉及这些话题时必须先调用：{'、'.join(SAFETY_TOPICS)}。"
    "返回的约束只有在与请求冲突时才需要告诉用户。"
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "topic": {"type": "string", "description": "请求涉及的话题，例如“去餐厅吃海鲜”"}
    },
    "required": ["topic"],
}


async def safety_constraints(
    embedder: Embedder, store: MemoryStore, person: PersonId, topic: str, now: float
) -> list[tuple[float, str]]:
    [vector] = await embed_async(embedder, [topic or "安全"])
    search = Search(vector, MAX_CONSTRAINTS, None, cls=MemoryClass.SAFETY.value)
    [hits] = await search_async(store, person, [search], now)
    return [(hit.score, describe(hit.memory, now)) for hit in hits if not hit.memory.expired(now)]


async def household_constraints(
    embedder: Embedder, store: MemoryStore, context: ToolContext, topic: str, now: float
) -> list[tuple[float, str]]:
    """The caller's constraints and, for a member identified by voice, the household's: every
    shared store's, each in its owner's voice (``household_read``), best first, once each."""
    asked = [
        safety_constraints(embedder, store, context.person, topic, now),
        *(
            safety_constraints(embedder, OwnedStore(store, s.name), s.person, topic, now)
            for s in context.household
        ),
    ]
    found: dict[str, float] = {}
    for score, text in (pair for pairs in await asyncio.gather(*asked) for pair in pairs):
        found[text] = max(score, found.get(text, score))
    ranked = sorted(found.items(), key=lambda pair: pair[1], reverse=True)[:MAX_CONSTRAINTS]
    return [(score, text) for text, score in ranked]


def check_safety_tool(embedder: Embedder, store: MemoryStore) -> ServerTool:
    async def handler(arguments: dict[str, Any], context: ToolContext) -> str:
        topic = str(arguments.get("topic", ""))[:200]
        found = await household_constraints(embedder, store, context, topic, time.time())
        log.info(
            "check_safety", person=context.person, topic=topic, constraints=[t for _, t in found]
        )
        if not found:
            return "没有记录任何安全约束。"
        lines = "\n".join(text for _, text in found)
        return f"记录的安全约束（只在与请求冲突时提醒用户）：\n{lines}"

    return ServerTool("check_safety", DESCRIPTION, PARAMETERS, handler)
