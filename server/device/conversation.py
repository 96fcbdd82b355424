"""Short-term dialogue context of one session, and the transcript handed to the write path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workers.contract import Said


@dataclass
class Conversation:
    """History sent to the LLM is trimmed to the last ``max_turns`` exchanges, so a long session
    costs the same per turn as a short one; the transcript keeps everything."""

    max_turns: int
    transcript: list[Said] = field(default_factory=list)
    # the household member identified by voice in the latest utterance (None: unknown, or no
    # enrolled voices); what is added from now on is theirs
    speaking: str | None = None

    def add(self, utterance: Said) -> None:
        if utterance.text.strip():
            if utterance.person is None and self.speaking is not None:
                utterance = utterance.model_copy(update={"person": self.speaking})
            self.transcript.append(utterance)

    def history_messages(self) -> list[dict[str, Any]]:
        if self.max_turns == 0:
            return []
        recent: list[Said] = []
        users = 0
        for utterance in reversed(self.transcript):
            recent.append(utterance)
            if utterance.role == "user":
                users += 1
                if users >= self.max_turns:
                    break
        return [{"role": u.role, "content": u.text} for u in reversed(recent)]


def by_person(transcript: list[Said]) -> dict[str | None, list[Said]]:
    """The transcript split by whose it is, in order of first appearance (None: the device's
    person)."""
    parts: dict[str | None, list[Said]] = {}
    for utterance in transcript:
        parts.setdefault(utterance.person, []).append(utterance)
    return parts
