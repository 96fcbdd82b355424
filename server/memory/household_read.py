"""A member's turn reads what the household shares.

A member identified by voice (``server.voices``) has a store of their own; what they say is
theirs. What they hear must still hold what the household knows: the grandmother asking for a
peanut snack for the child must get the child's allergy, which the father told the device. So a
member's turn recalls, concurrently and each within the read path's two round trips:

- the member's own store — every group, as for anyone;
- the household's store (the device's person: what unknown voices said) — every group;
- each other member's store that is not private — the safety group only (a constraint about
  anyone in the home concerns everyone who cooks, buys or goes out for them); their other
  memories (a surprise gift, a diagnosis they did not share) stay theirs.

A memory read from someone else's store speaks in its owner's voice: its 「我」 is the owner, not
the member now speaking. Before the read path judges whom it is about, such a memory is
rewritten with the owner named (「我对花生过敏」 → 「奶奶对花生过敏」, subject 奶奶), so the
scope rules, the constraint Hearth says first and the block all name the right person.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memory.entities import SELF_WORDS
from memory.schema import Memory, PersonId
from memory.store import Hit, MemoryStore, Search
from server.memory.read_result import ReadResult
from server.memory.render import render_block
from server.tools import Sharing

# the first person of a memory's own voice (not 我们: the family, which is everyone's)
_ME = re.compile(r"我(?!们)")


def in_owners_voice(memory: Memory, owner: str) -> Memory:
    """``memory`` with its 「我」 named: the owner (who said it, else the store's owner)."""
    name = memory.speaker or owner
    subject = name if (memory.subject or "我") in SELF_WORDS else memory.subject
    return replace(memory, id=memory.key, text=_ME.sub(name, memory.text), subject=subject)


class OwnedStore:
    """Another person's store as the member's read path sees it: searched exactly as it is, its
    memories in their owner's voice. Reads only; the read path writes nothing."""

    def __init__(self, store: MemoryStore, owner: str) -> None:
        self._store = store
        self._owner = owner

    def search_batch(self, person: PersonId, searches: list[Search], now: float) -> list[list[Hit]]:
        found = self._store.search_batch(person, searches, now)
        return [
            [replace(h, memory=in_owners_voice(h.memory, self._owner)) for h in hits]
            for hits in found
        ]

    def __getattr__(self, name: str) -> Any:  # everything else, as the store does it
        return getattr(self._store, name)


def merged(own: ReadResult, shared: Sequence[tuple[Sharing, ReadResult]], now: float,
           inline_rules: bool) -> ReadResult:  # fmt: skip
    """The member's result with what the household shares added: every other store's safety
    group, the household store's related lines after the member's own; a memory once."""
    seen = {r.memory.text for r in (*own.safety, *own.related)}
    safety, related = list(own.safety), list(own.related)
    applies = {m.text: m for m in own.applies}
    for sharing, result in shared:
        taken = [*result.safety, *(result.related if sharing.whole else ())]
        for r in taken:
            if r.memory.text not in seen:
                seen.add(r.memory.text)
                (safety if r.group == "safety" else related).append(r)
        applies.update((m.text, m) for m in result.applies if m.text not in applies)
    looked = own.looked or any(result.looked for _, result in shared)
    block = render_block(
        [r.memory for r in safety], [r.memory for r in related], now, looked=looked,
        personal=own.understood is not None and own.understood.anchored,
        inline_rules=inline_rules,
        lacking=own.grounds is not None and own.grounds.lacking and not related,
    )  # fmt: skip
    return replace(
        own, safety=tuple(safety), related=tuple(related), applies=tuple(applies.values()),
        looked=looked, block=block,
    )  # fmt: skip
