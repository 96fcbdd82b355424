"""What the read path returns for one utterance (``ReadResult``): the prompt block, the safety and
related groups, the turn's grounds, the constraints said first and the rest of the safety
group, what the person just did — the values a device turn and its reply checks take directly.
A turn's trace only records it (``ReadResult.record``); nothing reads decisions back out of the
trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from memory.schema import Memory, PersonId
from memory.utterance_kinds import KindReading, UtteranceKind
from server.memory import applies
from server.traces import TurnTrace
from server.understanding.grounding import Grounds
from server.understanding.question import Question

Why = Literal[
    "direct", "lexical", "relation", "entity", "lookup", "slot", "schedule", "cue", "nearest"
]
Group = Literal["safety", "related"]


@dataclass(frozen=True, slots=True)
class Recalled:
    memory: Memory
    score: float
    why: Why
    group: Group
    cue: str | None = None  # the cue that brought it (why == "cue")

    @property
    def promoted(self) -> bool:
        return self.group == "safety"

    def as_json(self) -> dict[str, object]:
        m = self.memory
        return {
            "id": m.key, "text": m.text, "score": round(self.score, 4), "cls": m.cls.value,
            "why": self.why, "promoted": self.promoted, "subject": m.subject, "speaker": m.speaker,
            "source": m.source, "decay": m.decay.value, "expires_at": m.expires_at,
            "cue": self.cue,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class ReadResult:
    """One recall: the groups the block shows, what was found and left out (and why), and what
    the turn does with it. ``ReadResult(question, person)`` is the result of reading nothing."""

    question: str
    person: PersonId
    safety: tuple[Recalled, ...] = ()
    related: tuple[Recalled, ...] = ()
    block: str = ""
    looked: bool = False  # the safety lookup ran for this request (understanding.lookup)
    applies: tuple[Memory, ...] = ()  # constraints the request names, said first
    grounds: Grounds | None = None  # a question for a household fact: what a reply may state
    unconcerned: tuple[Memory, ...] = ()  # others' constraints, left out
    unneeded: tuple[Memory, ...] = ()  # unasked, on a what-is-so question
    beyond: tuple[Recalled, ...] = ()  # related, past the prompt's budget
    kind: KindReading | None = None  # what the person just did (memory.utterance_kinds)
    round_trips: int = 0
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    understood: Question | None = None  # the question as the read path read it, once

    @property
    def reminder(self) -> tuple[str, ...]:
        """The constraints the request names, as the device says them first (``applies``)."""
        return tuple(applies.spoken(m) for m in self.applies)

    @property
    def unsaid(self) -> tuple[str, ...]:
        """The safety group's other constraints, as the device would say them (a reply sentence
        recommending what one forbids is replaced by it: server.device.heeding)."""
        said = {m.key for m in self.applies}
        return tuple(applies.spoken(r.memory) for r in self.safety if r.memory.key not in said)

    @property
    def safety_texts(self) -> tuple[str, ...]:
        return tuple(r.memory.text for r in self.safety)

    @property
    def related_texts(self) -> tuple[str, ...]:
        return tuple(r.memory.text for r in self.related)

    @property
    def safety_subjects(self) -> tuple[str, ...]:
        """Whom each constraint of the safety group is about ("" when unsaid)."""
        return tuple(r.memory.subject or "" for r in self.safety)

    @property
    def statement(self) -> bool:
        """The person stated something (memory.utterance_kinds), as far as the classifier knows."""
        return self.kind is not None and self.kind.kind is UtteranceKind.STATEMENT

    def quieted(self) -> ReadResult:
        """This result with nothing of memory read out (a command to the device, chit-chat)."""
        return replace(self, safety=(), related=(), applies=(), block="", grounds=None)

    def record(self, trace: TurnTrace) -> None:
        """Record this result in the turn's trace (debugging, the admin API, the benches)."""
        trace.memory = self.as_json()
        if self.kind is not None:
            trace.kind = self.kind.kind.value
            trace.kind_confidence = self.kind.confidence
        trace.grounds = self.grounds
        trace.remind = list(self.reminder)
        trace.unsaid = list(self.unsaid)

    def as_json(self) -> dict[str, object]:
        return {
            "question": self.question,
            "person": self.person,
            "groups": {
                "safety": [r.as_json() for r in self.safety],
                "related": [r.as_json() for r in self.related],
            },
            "prompt_block": self.block,
            "safety_lookup": self.looked,
            "applies": [m.text for m in self.applies],
            "unconcerned": [m.text for m in self.unconcerned],
            "unneeded": [m.text for m in self.unneeded],
            "beyond": [r.memory.text for r in self.beyond],
            "memory_lacks": self.grounds is not None and self.grounds.lacking,
            "kind": None if self.kind is None else self.kind.as_json(),
            "round_trips": self.round_trips,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }
