"""The names a household uses, for the speech recogniser.

Whisper hears a name it has never seen as the nearest common words (「小橙子」 → 「小城自」,
「周杰伦」 → 「周结轮」); given the name in its "previous text" it writes it right. The names
come from the person's own memories — the names they introduce (「女儿叫小橙子」), their
subjects and entities, the registered speakers who said them — read from the store in the
background when a session opens and again when they are ``REFRESH_S`` old: an utterance never
waits on this, a name the write path learned from one session is heard in the next, and a store
that is down costs the recogniser its hint, nothing else (logged).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable

import structlog

from memory import entities
from memory.schema import Memory, PersonId
from memory.store import MemoryStore, Search, store_call

log = structlog.get_logger(__name__)

SCAN = 500  # the person's newest memories read per refresh (names recur; old ones too)
REFRESH_S = 300.0  # how long a person's names are kept before they are read again
RETRY_S = 30.0  # after a failed read


def ranked_names(memories: Iterable[Memory], limit: int) -> list[str]:
    """The household's names, those most memories are about first (ties: first seen)."""
    counts: Counter[str] = Counter()
    for memory in memories:
        about = [memory.subject, *memory.entities, memory.speaker]
        names = entities.household_names([memory.text], about)
        counts.update(name for name in names if not any(ch.isdigit() for ch in name))
    return [name for name, _ in counts.most_common(limit)]


class HouseholdNames:
    """Per person, the names to give the recogniser: what is known now, never awaited."""

    def __init__(
        self,
        store: MemoryStore,
        limit: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._limit = limit
        self._clock = clock
        self._known: dict[PersonId, tuple[float, tuple[str, ...]]] = {}  # read at, names
        self._reading: dict[PersonId, asyncio.Task[None]] = {}

    def known(self, person: PersonId) -> tuple[str, ...]:
        """The person's names as last read (none yet: ``()``); a stale or missing entry starts
        a read in the background."""
        entry = self._known.get(person)
        if entry is None or self._clock() >= entry[0]:
            self.refresh(person)
        return entry[1] if entry is not None else ()

    def refresh(self, person: PersonId) -> None:
        """Read the person's names again in the background (a session opens), unless a read
        is already under way."""
        if person not in self._reading:
            task = asyncio.create_task(self.read(person))
            self._reading[person] = task
            task.add_done_callback(lambda _: self._reading.pop(person, None))

    async def read(self, person: PersonId) -> None:
        """Read the person's names now."""
        previous = self._known.get(person, (0.0, ()))[1]
        try:
            memories = await store_call(
                self._store, self._store.newest, person, Search([], 0), None, SCAN
            )
        except Exception as exc:  # the store down: the recogniser goes on without the hint
            log.warning("asr.names_unavailable", person=person, error=str(exc))
            self._known[person] = (self._clock() + RETRY_S, previous)
            return
        names = tuple(ranked_names(memories, self._limit))
        if names != previous:
            log.info("asr.names", person=person, names=list(names))
        self._known[person] = (self._clock() + REFRESH_S, names)
