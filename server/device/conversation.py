"""Short-term dialogue context of one session, and the transcript handed to the write path."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Utterance:
    role: Role
    text: str
    at: float  # unix seconds
    interrupted: bool = False
    # the household member who said it, or was answered (None: the device's person)
    person: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "text": self.text,
            "at": self.at,
            "interrupted": self.interrupted,
        }


@dataclass
class Conversation:
    """History sent to the LLM is trimmed to the last ``max_turns`` exchanges, so a long session
    costs the same per turn as a short one; the transcript keeps everything."""

    max_turns: int
    transcript: list[Utterance] = field(default_factory=list)
    # the household member identified by voice in the latest utterance (None: unknown, or no
    # enrolled voices); what is added from now on is theirs
    speaking: str | None = None

    def add(self, utterance: Utterance) -> None:
        if utterance.text.strip():
            if utterance.person is None and self.speaking is not None:
                utterance = replace(utterance, person=self.speaking)
            self.transcript.append(utterance)

    def history_messages(self) -> list[dict[str, Any]]:
        if self.max_turns == 0:
            return []
        recent: list[Utterance] = []
        users = 0
        for utterance in reversed(self.transcript):
            recent.append(utterance)
            if utterance.role == "user":
                users += 1
                if users >= self.max_turns:
                    break
        return [{"role": u.role, "content": u.text} for u in reversed(recent)]


def by_person(transcript: list[Utterance]) -> dict[str | None, list[Utterance]]:
    """The transcript split by whose it is, in order of first appearance (None: the device's
    person)."""
    parts: dict[str | None, list[Utterance]] = {}
    for utterance in transcript:
        parts.setdefault(utterance.person, []).append(utterance)
    return parts
