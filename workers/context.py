"""What the worker's jobs get besides arq's own keys, as one typed object (``ctx["hearth"]``):
the write path (None when memory or the write path is disabled: transcripts are still
archived), the LLM gate, the retry policy's numbers and the memory engine the worker owns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.engine import MemoryParts
from workers.gate import AlwaysUp, LLMGate
from workers.writepath import WritePath

KEY = "hearth"


@dataclass
class WorkerContext:
    max_tries: int = 5
    budget_s: float = 1770.0  # our own deadline, before arq's job timeout: a timeout is retried
    retry_base_s: float = 2.0
    llm_gate: LLMGate = field(default_factory=AlwaysUp)
    write_path: WritePath | None = None
    owned_memory: MemoryParts | None = None  # built by this worker, closed at shutdown


def worker_context(ctx: dict[str, Any]) -> WorkerContext:
    """The typed context (defaults when a job runs outside a Hearth worker, as in tests)."""
    found = ctx.get(KEY)
    return found if isinstance(found, WorkerContext) else WorkerContext()
