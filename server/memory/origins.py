"""Why Hearth remembers a memory — the one answer the API's ``/expand`` and the console's "why"
page give: the conversation it was extracted from (who said what, when, from the archived
transcript), the photo it describes, or the call that stored it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
from redis.asyncio import Redis

from config import keys
from memory.schema import Memory, PersonId

PASSAGE_LIMIT = 200  # utterances of a session shown


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def archived_session(redis: Redis, store: PersonId, session_id: str) -> dict[str, Any] | None:
    """The archived transcript of one of the person's sessions (newest 1,000 are kept)."""
    for raw in await redis.lrange(keys.transcripts(store), 0, -1):
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("session_id") == session_id:
            return record
    return None


async def origin_of(redis: Redis, memory: Memory) -> dict[str, Any]:
    """``{"kind": "session" | "photo" | "call", …}`` for ``memory``."""
    if memory.photo is not None:
        return {"kind": "photo", "source": memory.source, "device": memory.photo.device,
                "question": memory.photo.question, "answer": memory.photo.answer,
                "taken_at": iso(memory.created_at), "image_id": memory.key}  # fmt: skip
    if memory.origin is None:
        first = memory.history[0][0] if memory.history else memory.text
        return {"kind": "call", "source": memory.source, "speaker": memory.speaker,
                "stored_at": iso(memory.created_at), "text": first}  # fmt: skip
    record = await archived_session(redis, memory.person, memory.origin)
    said = [] if record is None else [
        {"role": u.get("role"), "speaker": u.get("speaker"), "text": u.get("text"),
         "at": iso(u["at"]) if isinstance(u.get("at"), int | float) else None}
        for u in record.get("transcript", [])[:PASSAGE_LIMIT] if isinstance(u, dict)
    ]  # fmt: skip
    origin: dict[str, Any] = {"kind": "session", "session_id": memory.origin,
                              "source": memory.source, "passage": said}  # fmt: skip
    if record is None:
        origin["note"] = "the session's transcript is no longer archived"
    return origin
