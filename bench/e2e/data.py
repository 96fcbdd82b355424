"""The bench's fixed inputs: the memory snapshot and the question sets (``bench/data/e2e``).

Dates are relative to the run day, so a snapshot never goes stale: ``{d+3}`` renders as
「12月2日（周三）」 three days from ``today``, ``expires_in_days`` becomes ``expires_at``.
"""

from __future__ import annotations

import datetime as dt
import re
import zlib
from pathlib import Path
from typing import Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field

DATA = Path(__file__).resolve().parents[1] / "data" / "e2e"
SNAPSHOT_FILE = DATA / "snapshot.yaml"
QUESTIONS_FILE = DATA / "questions.yaml"
CONVERSATIONS_FILE = DATA / "conversations.yaml"
WEEKDAYS = "一二三四五六日"
_RELATIVE = re.compile(r"\{d([+-]\d+)\}")

MemoryCategory = Literal[
    "extraction", "temporal", "update", "multi_session", "implicit", "refusal", "noise",
    "name_relation", "pet_nickname", "world_knowledge", "unanchored", "action",
]  # fmt: skip
Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")
SafetyRule = Literal["surface", "look", "quiet"]
MEMORY_CATEGORIES: tuple[MemoryCategory, ...] = (
    "extraction", "temporal", "update", "multi_session", "implicit", "refusal", "noise",
    "name_relation", "pet_nickname", "world_knowledge", "unanchored", "action",
)  # fmt: skip
SAFETY_RULES: tuple[SafetyRule, ...] = ("surface", "look", "quiet")


def render_dates(text: str, today: dt.date) -> str:
    def one(match: re.Match[str]) -> str:
        day = today + dt.timedelta(days=int(match.group(1)))
        return f"{day.month}月{day.day}日（周{WEEKDAYS[day.weekday()]}）"

    return _RELATIVE.sub(one, text)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SnapshotMemory(_Strict):
    id: str
    text: str
    cls: Literal["safety", "fact", "preference", "event"] = "fact"
    subject: str | None = None
    expires_in_days: float | None = None


class Snapshot(_Strict):
    person: str
    speaker: str | None = None
    memories: list[SnapshotMemory]

    def texts(self, today: dt.date) -> dict[str, str]:
        """snapshot id → the text as stored on this run day."""
        return {m.id: render_dates(m.text, today) for m in self.memories}

    def jsonl(self, today: dt.date, cues: dict[str, list[str]] | None = None) -> str:
        """The snapshot in ``hearth memory import`` format (no LLM involved); ``cues``: the
        "when it matters" cues per memory text a ``hearth bench cues`` run made."""
        midnight = dt.datetime.combine(today, dt.time()).timestamp()
        lines = []
        for m in self.memories:
            line: dict[str, object] = {"text": render_dates(m.text, today), "cls": m.cls,
                                       "source": "bench"}  # fmt: skip
            if m.subject:
                line["subject"] = m.subject
            if cues and cues.get(str(line["text"])):
                line["cues"] = cues[str(line["text"])]
            if self.speaker:
                line["speaker"] = self.speaker
            if m.expires_in_days is not None:
                line["decay"] = "time"
                line["expires_at"] = midnight + m.expires_in_days * 86400
            lines.append(orjson.dumps(line).decode())
        return "\n".join(lines)


class Question(_Strict):
    id: str
    question: str
    expect: list[str] = Field(default_factory=list)  # memory categories
    answer: str = ""
    constraint: str | None = None  # safety: the constraint that applies (surface)
    mention: list[str] = Field(default_factory=list)  # safety: words that count as mentioning
    must: list[str] = Field(default_factory=list)  # rubric: facts that must appear ("a|b")
    must_not: list[str] = Field(default_factory=list)  # rubric: facts that must not appear
    kind: str = ""  # filled on load: the category or rule
    layer: Literal["memory", "safety"] = "memory"

    @property
    def split(self) -> Split:
        """Fixed once, by rule: the parity of the id's CRC-32. Tune on dev; test is reported,
        never tuned on."""
        return split_of(self.id)


def split_of(question_id: str) -> Split:
    return "dev" if zlib.crc32(question_id.encode()) % 2 == 0 else "test"


class QuestionSet(_Strict):
    memory: dict[MemoryCategory, list[Question]]
    safety: dict[SafetyRule, list[Question]]

    def all(self) -> list[Question]:
        out = []
        for category in MEMORY_CATEGORIES:
            out += [q.model_copy(update={"kind": category}) for q in self.memory.get(category, [])]
        for rule in SAFETY_RULES:
            out += [q.model_copy(update={"kind": rule, "layer": "safety"})
                    for q in self.safety.get(rule, [])]  # fmt: skip
        return out


def load_snapshot(path: Path = SNAPSHOT_FILE) -> Snapshot:
    return Snapshot.model_validate(yaml.safe_load(path.read_text()))


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    questions = QuestionSet.model_validate(yaml.safe_load(path.read_text())).all()
    ids = [q.id for q in questions]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{path}: question ids repeat")
    return questions
