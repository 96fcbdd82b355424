"""The one bounded polling helper tests may use, for state with no event to await."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

POLL_S = 0.01


async def wait_until(
    predicate: Callable[[], bool | Awaitable[bool]], within_s: float = 5.0
) -> None:
    """Return once ``predicate`` holds; fail with TimeoutError after ``within_s``."""
    async with asyncio.timeout(within_s):
        while True:
            result = predicate()
            if not isinstance(result, bool):
                result = await result
            if result:
                return
            await asyncio.sleep(POLL_S)
