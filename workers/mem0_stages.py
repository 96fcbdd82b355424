"""mem0 1.0.x's two-stage add: its reply parsers, the transcript windows, and its merge prompt;
Hearth executes.

Stage 1 (extract) gets ``{"facts": [...]}`` for the conversation — the prompt is Hearth's own,
written for Chinese household speech (``workers.extraction``; mem0's English prompt was the
starting point). Stage 2 (merge) is decided by slot rules first (``workers.slots``); with
``write.merge`` ``rules+model`` or ``model`` the rest is shown next to similar stored memories
with mem0's ``get_update_memory_messages`` (integer ids in place of UUIDs as mem0 does) and gets
ADD / UPDATE / DELETE / NONE per memory. Why not ``Memory.add`` itself: it swallows every error
(an LLM returning garbage silently stores nothing), gives new points random ids (a re-run after
a crash stores twice), takes no lock per user, and drops custom metadata on update. So the
stages run here, their outputs are checkpointed, and the operations apply idempotently
(``workers.writepath``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from providers.errors import TransientProviderError
from providers.llm import StructuredLLM
from workers.contract import Said

Event = Literal["ADD", "UPDATE", "DELETE", "NONE"]
EVENTS: tuple[Event, ...] = ("ADD", "UPDATE", "DELETE", "NONE")

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}
MERGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memory": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "text": {"type": "string"},
                    "event": {"type": "string", "enum": list(EVENTS)},
                    "old_memory": {"type": "string"},
                },
                "required": ["id", "text", "event"],
            },
        }
    },
    "required": ["memory"],
}


class GarbageReply(TransientProviderError):
    """The LLM answered, but not with the JSON asked for (retried: sampling may fix it)."""

    def __init__(self, stage: str, reply: str) -> None:
        super().__init__("write-llm", f"{stage}: unusable reply {reply[:160]!r}")
        self.stage = stage


def _mem0() -> tuple[Any, Any]:
    """Import mem0 lazily: it creates ``MEM0_DIR`` and reads telemetry settings at import."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    from mem0.configs import prompts
    from mem0.memory import utils

    return prompts, utils


def warm() -> None:
    _mem0()


def parse_reply(stage: str, reply: str) -> dict[str, Any]:
    """mem0's own tolerant parsing (code fences, chatty text), then a shape check."""
    _, utils = _mem0()
    for candidate in (utils.remove_code_blocks(reply), utils.extract_json(reply)):
        try:
            parsed = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            return parsed
    raise GarbageReply(stage, reply)


def reply_list(stage: str, reply: str, key: str) -> list[Any]:
    """The list under ``key`` of a JSON reply (GarbageReply when there is none)."""
    items = parse_reply(stage, reply).get(key)
    if not isinstance(items, list):
        raise GarbageReply(stage, reply)
    return items


# A transcript is read in windows of about this many characters (Chinese: about as many tokens),
# so a two-hour session never exceeds the write model's context (llama.cpp answers 400 then).
EXTRACT_WINDOW_CHARS = 2000


def windows(utterances: list[Said]) -> list[list[Said]]:
    """Consecutive runs of utterances of at most EXTRACT_WINDOW_CHARS (an utterance longer than
    that is a window of its own, cut)."""
    found: list[list[Said]] = []
    current: list[Said] = []
    size = 0
    for u in utterances:
        if current and size + len(u.text) > EXTRACT_WINDOW_CHARS:
            found.append(current)
            current, size = [], 0
        text = u.text[:EXTRACT_WINDOW_CHARS]
        current.append(u if text == u.text else u.model_copy(update={"text": text}))
        size += len(text)
    if current:
        found.append(current)
    return [w for w in found if any(u.role == "user" for u in w)]


@dataclass(frozen=True, slots=True)
class MergeOp:
    event: Event
    text: str
    target: int | None  # index into the candidates shown (UPDATE / DELETE / NONE)


def merge_prompt(candidates: list[str], facts: list[str]) -> str:
    prompts, _ = _mem0()
    shown = [{"id": str(i), "text": text} for i, text in enumerate(candidates)]
    return str(prompts.get_update_memory_messages(shown, facts, None))


async def merge(llm: StructuredLLM, candidates: list[str], facts: list[str]) -> list[MergeOp]:
    """Stage 2: each fact against the similar stored memories → ADD/UPDATE/DELETE/NONE."""
    prompt = merge_prompt(candidates, facts)
    reply = await llm.complete_json([{"role": "user", "content": prompt}], MERGE_SCHEMA, "merge")
    items = reply_list("merge", reply, "memory")
    ops: list[MergeOp] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        event = str(item.get("event", "")).upper()
        text = str(item.get("text") or "").strip()
        if event not in EVENTS or (event in ("ADD", "UPDATE") and not text):
            continue
        raw_id = str(item.get("id", "")).strip()
        target = int(raw_id) if raw_id.isdigit() and int(raw_id) < len(candidates) else None
        ops.append(MergeOp(event, text, target))
    return ops
