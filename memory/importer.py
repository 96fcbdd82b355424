"""Loading memories from JSON Lines without any LLM (operator import, fixtures, bench snapshots).

One object per line: ``text`` (required), optional ``cls``, ``decay``, ``expires_at`` (unix
seconds or ISO date), ``subject``, ``speaker``, ``source``, ``created_at``, and ``cues`` (the
memory's "when it matters" cues, as ``hearth bench cues`` writes them or another Hearth made
them; without them a constraint or preference gets its cues from the worker). A line without ``cls``
gets safe defaults (fact, never expires) and is marked ``tags_pending``: the caller queues it for
the worker's tagging job, as every other entry point does (``memory.writes``). Ids are
deterministic, so importing twice stores nothing twice.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory import entities
from memory.schema import Decay, Memory, MemoryClass, PersonId
from memory.store import MemoryStore
from providers.embedder import Embedder

BATCH = 256


class MemoryLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000)
    cls: MemoryClass | None = None  # None: tagged later by the worker
    decay: Decay | None = None
    expires_at: float | None = None
    subject: str | None = None
    speaker: str | None = None
    source: str = "import"
    created_at: float | None = None
    cues: list[Annotated[str, Field(min_length=1, max_length=40)]] | None = Field(
        default=None, max_length=16
    )

    @field_validator("expires_at", "created_at", mode="before")
    @classmethod
    def _date(cls, value: Any) -> Any:
        if isinstance(value, str):
            return dt.datetime.fromisoformat(value).timestamp()
        return value

    def to_memory(self, person: PersonId, known_names: Iterable[str]) -> Memory:
        # Missing decay: an expiry date means it expires, otherwise it never does.
        decay = self.decay or (Decay.TIME if self.expires_at else Decay.VOLUME)
        return Memory(
            text=self.text.strip(),
            person=person,
            cls=self.cls or MemoryClass.FACT,
            tags_pending=self.cls is None,
            decay=decay,
            expires_at=self.expires_at if decay is Decay.TIME else None,
            subject=self.subject,
            entities=entities.entities_for(self.text, self.subject, known_names),
            speaker=self.speaker,
            source=self.source,
            created_at=self.created_at or time.time(),
        )


class LineError(ValueError):
    """A JSONL line that is not a memory; ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def parse_lines(raw_lines: Iterable[str]) -> list[MemoryLine]:
    parsed = []
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            parsed.append(MemoryLine.model_validate(orjson.loads(raw)))
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise LineError(number, str(exc).splitlines()[0]) from exc
    return parsed


def import_memories(
    lines: list[MemoryLine], person: PersonId, embedder: Embedder, store: MemoryStore
) -> list[Memory]:
    """Embed and upsert; names introduced anywhere in the batch tag every memory mentioning them.
    Returns what was stored (those with ``tags_pending`` still need the tagging job)."""
    known = {name for line in lines for name in entities.names_in(line.text)}
    known |= {
        line.subject for line in lines if line.subject and line.subject not in entities.RELATIONS
    }
    memories = [line.to_memory(person, known) for line in lines]
    for start in range(0, len(memories), BATCH):
        chunk = memories[start : start + BATCH]
        store.upsert(chunk, embedder.embed([m.text for m in chunk]))
    for line, memory in zip(lines, memories, strict=True):
        if line.cues:
            store.put_cues(person, memory, line.cues, embedder.embed(line.cues))
    return memories


def import_file(path: Path, person: PersonId, embedder: Embedder, store: MemoryStore) -> int:
    return len(import_memories(parse_lines(path.read_text().splitlines()), person, embedder, store))
