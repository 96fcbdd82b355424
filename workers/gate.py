"""What a write job asks before it calls the LLM: is the engine up, and wait until it is.

``hearth up`` passes its supervisor's view of the write path's local server, so a job waits for
a restarted server instead of burning its retries against a dead one; an external LLM has no
gate (always up: its failures go through the normal retry policy).
"""

from __future__ import annotations

from typing import Protocol


class LLMGate(Protocol):
    def is_up(self) -> bool: ...

    async def wait_up(self) -> None: ...


class AlwaysUp:
    def is_up(self) -> bool:
        return True

    async def wait_up(self) -> None:
        return None
