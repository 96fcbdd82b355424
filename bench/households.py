"""``hearth bench households``: the read path on household sets written outside the project.

A set (``../shared/data/external/households.json``, the frozen ``bench/data/frozen/recall-*``)
holds persons with the memories the write path would have stored, and questions with what must
be recalled. Each person's memories are imported into a fresh embedded store (an event's
``expires_in_days`` sets its expiry from now) and every question goes through the real
``ReadPath`` in-process, scored on what a device turn would inject:

- *recall*: every ``expect_safety`` / ``expect_any_group`` id injected; *safety*: every
  ``expect_safety`` id in the safety group; *noise clean*: nothing injected for an
  ``expect_empty`` question (a command or chit-chat the classifier is sure of injects nothing);
  *forbidden*: a ``forbid`` id injected (an expired event, another household's memory);
  *leaks*: a memory of another person injected; *lines*: injected lines per question.
- *Said first*: the constraints Hearth says itself before any model (``ReadResult.applies``):
  every ``expect_safety`` id of a question said; a constraint said beside them that the
  question does not expect; a constraint said for a question that expects none.
- Beside it, *plain top-5 cosine* on the same embedder and memories (five lines every time).
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.results import Figure
from config.settings import HearthSettings
from memory.importer import MemoryLine, import_memories
from memory.schema import MemoryClass, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import Embedder
from server.memory.household import HouseholdNames
from server.memory.readpath import ReadPath, quiet_kind

DAY = 86400.0
TOP_K = 5
# the scenarios of a requests set whose requests must inject nothing when they concern nothing
NOISE_SCENARIOS = frozenset(("chit_chat", "device_command", "unrelated_task"))


@dataclass(frozen=True)
class Question:
    id: str
    person: str
    kind: str
    text: str
    expect_safety: tuple[str, ...]
    expect_any: tuple[str, ...]
    expect_empty: bool
    forbid: tuple[str, ...]


@dataclass
class HouseholdSet:
    memories: dict[str, list[dict[str, Any]]]  # person → memory rows (with ``id``)
    questions: list[Question]


def load_set(path: Path, *, introduced: bool = False) -> HouseholdSet:
    """A set; ``introduced``: each household's members (``households.*.members``) stored as the
    name statements an introduction would leave (「我女儿叫顾一诺，小名叫诺诺、囡囡」,
    「我叫赵立新」), for a set whose memories name members only by full name."""
    data = json.loads(path.read_text())
    if "requests" in data:
        return _requests_set(data)
    memories = {}
    for person, rows in data["persons"].items():
        memories[person] = list(rows["memories"] if isinstance(rows, dict) else rows)
    if introduced:
        for household, about in data.get("households", {}).items():
            person = about.get("person", household)
            memories.setdefault(person, []).extend(introductions(person, about.get("members", [])))
    questions = [
        Question(
            q["id"],
            q["person"],
            q.get("kind", ""),
            q["text"],
            tuple(q.get("expect_safety") or ()),
            tuple(q.get("expect_any_group") or ()),
            bool(q.get("expect_empty")),
            tuple(q.get("forbid") or ()),
        )
        for q in data["questions"]
    ]
    return HouseholdSet(memories, questions)


# 「女儿 顾一诺(诺诺、囡囡；10个月大)」, 「沈佳怡(说话人)」: relation, name, what they are called
_MEMBER = re.compile(r"^(?:(\S+)\s+)?([^(（\s]+)\s*[(（]([^)）]*)[)）]")


def introductions(person: str, members: Sequence[str]) -> list[dict[str, Any]]:
    """The name statements a household's member list stands for: the speaker's own name, and
    each member's relation, name and the short names the list gives (its first clause)."""
    rows: list[dict[str, Any]] = []
    for at, member in enumerate(members):
        match = _MEMBER.match(member.strip())
        if match is None:
            continue
        relation, name, notes = match.groups()
        if "说话人" in notes:
            text, subject = f"我叫{name}", "我"
        elif relation:
            called = [c.strip() for c in re.split(r"[、，,]", re.split(r"[；;]", notes)[0])]
            called = [c for c in called if c and len(c) <= 4 and "叫" not in c]
            text = f"我{relation}叫{name}" + (f"，小名叫{'、'.join(called)}" if called else "")
            subject = relation
        else:
            continue
        rows.append({"id": f"{person}-introduced-{at}", "text": text, "cls": "fact",
                     "decay": "volume", "subject": subject})  # fmt: skip
    return rows


def _requests_set(data: dict[str, Any]) -> HouseholdSet:
    """A set of requests (``hearth bench heard``'s kind) read as recall questions: the
    constraints a request concerns must be in the safety group; a request expecting a plain
    acknowledgement and concerning nothing is scored as noise."""
    questions = []
    for r in data["requests"]:
        concerns = tuple(c["memory"] for c in r.get("concerns") or ())
        questions.append(Question(
            r["id"], r["household"], r.get("scenario", ""), r["text"], concerns, (),
            not concerns and r.get("scenario") in NOISE_SCENARIOS, (),
        ))  # fmt: skip
    return HouseholdSet(dict(data["memories"]), questions)


def hearths_class(cls: str | None) -> str | None:
    """A set's memory class as Hearth has it: a class a writer used that Hearth does not have
    (a routine, a habit) is a lasting fact, as the write path would store it."""
    if cls is None or cls in {c.value for c in MemoryClass}:
        return cls
    return MemoryClass.FACT.value


def memory_line(row: dict[str, Any], now: float) -> MemoryLine:
    days = row.get("expires_in_days")
    return MemoryLine(
        text=row["text"], cls=hearths_class(row.get("cls")), decay=row.get("decay"),
        subject=row.get("subject"), source="bench",
        expires_at=None if days is None else now + float(days) * DAY,
    )  # fmt: skip


@dataclass
class Outcome:
    question: Question
    injected: list[str]  # memory ids, safety first
    safety: list[str]
    applies: list[str]
    kind: str | None
    baseline: list[str]  # top-5 cosine ids
    owner: dict[str, str] = field(default_factory=dict)  # id → person

    @property
    def wanted(self) -> tuple[str, ...]:
        return (*self.question.expect_safety, *self.question.expect_any)

    @property
    def recalled(self) -> bool:
        return all(i in self.injected for i in self.wanted)

    @property
    def in_safety(self) -> bool:
        return all(i in self.safety for i in self.question.expect_safety)

    @property
    def clean(self) -> bool:
        return not self.injected

    @property
    def forbidden(self) -> list[str]:
        return [i for i in self.question.forbid if i in self.injected]

    @property
    def leaks(self) -> list[str]:
        return [i for i in self.injected if self.owner.get(i) != self.question.person]

    @property
    def said_all(self) -> bool:
        return all(i in self.applies for i in self.question.expect_safety)

    @property
    def said_other(self) -> bool:
        return any(i not in self.question.expect_safety for i in self.applies)

    @property
    def baseline_recalled(self) -> bool:
        return all(i in self.baseline for i in self.wanted)

    def as_json(self) -> dict[str, object]:
        q = self.question
        return {"id": q.id, "kind": q.kind, "text": q.text, "injected": self.injected,
                "safety": self.safety, "applies": self.applies, "utterance_kind": self.kind,
                "recalled": self.recalled, "in_safety": self.in_safety,
                "forbidden": self.forbidden, "leaks": self.leaks, "baseline": self.baseline,
                "said_all": self.said_all, "said_other": self.said_other,
                "baseline_recalled": self.baseline_recalled}  # fmt: skip


async def run_set(
    settings: HearthSettings, embedder: Embedder, households: HouseholdSet
) -> list[Outcome]:
    now = time.time()
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        store = EdgeMemoryStore(Path(tmp) / "edge", embedder.dim)
        key_to_id: dict[str, str] = {}
        owner: dict[str, str] = {}
        vectors: dict[str, tuple[list[str], np.ndarray]] = {}
        for person, rows in households.memories.items():
            lines = [memory_line(row, now) for row in rows]
            stored = import_memories(lines, PersonId(person), embedder, store)
            for row, memory in zip(rows, stored, strict=True):
                key_to_id[memory.key] = row["id"]
                owner[row["id"]] = person
            live = [
                (row["id"], row["text"]) for row in rows
                if row.get("expires_in_days") is None or row["expires_in_days"] > 0
            ]  # fmt: skip
            ids = [i for i, _ in live]
            vectors[person] = (ids, np.array(embedder.embed([t for _, t in live])))
        # the household's names as a device session would have read them when it opened
        names = HouseholdNames(store, settings.asr.household_names)
        for person in households.memories:
            await names.read(PersonId(person))
        read_path = ReadPath(embedder, store, settings.memory, names=names.members)
        for q in households.questions:
            recall = await read_path.recall(PersonId(q.person), q.text, now=now)
            quiet = quiet_kind(recall.kind)
            safety = [] if quiet else [key_to_id[r.memory.key] for r in recall.safety]
            related = [] if quiet else [key_to_id[r.memory.key] for r in recall.related]
            ids, matrix = vectors[q.person]
            [query] = embedder.embed([q.text])
            order = np.argsort(-(matrix @ np.array(query)))[:TOP_K]
            outcomes.append(Outcome(
                q, safety + related, safety,
                [] if quiet else [key_to_id[m.key] for m in recall.applies],
                None if recall.kind is None else recall.kind.kind.value,
                [ids[i] for i in order], owner,
            ))  # fmt: skip
        store.close()
    return outcomes


@dataclass(frozen=True)
class Summary:
    questions: int
    recall: tuple[int, int]
    safety: tuple[int, int]
    clean: tuple[int, int]
    forbidden: int
    leaks: int
    lines: float
    baseline: tuple[int, int]
    by_kind: dict[str, tuple[int, int, int]]  # kind → (recalled, baseline, of)
    said: tuple[int, int]  # every expected constraint said first / questions expecting one
    said_beside: int  # …and a constraint said beside them that is not expected
    said_unwanted: tuple[int, int]  # a constraint said / questions expecting none

    def as_json(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items()}


def summarize(outcomes: Sequence[Outcome]) -> Summary:
    targeted = [o for o in outcomes if o.wanted]
    with_safety = [o for o in outcomes if o.question.expect_safety]
    noise = [o for o in outcomes if o.question.expect_empty]
    unexpected = [o for o in outcomes if not o.question.expect_safety]
    kinds: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    base: Counter[str] = Counter()
    for o in targeted:
        kinds[o.question.kind] += 1
        hits[o.question.kind] += o.recalled
        base[o.question.kind] += o.baseline_recalled
    return Summary(
        len(outcomes),
        (sum(o.recalled for o in targeted), len(targeted)),
        (sum(o.in_safety for o in with_safety), len(with_safety)),
        (sum(o.clean for o in noise), len(noise)),
        sum(len(o.forbidden) for o in outcomes),
        sum(len(o.leaks) for o in outcomes),
        sum(len(o.injected) for o in outcomes) / max(len(outcomes), 1),
        (sum(o.baseline_recalled for o in targeted), len(targeted)),
        {k: (hits[k], base[k], n) for k, n in sorted(kinds.items())},
        (sum(o.said_all for o in with_safety), len(with_safety)),
        sum(o.said_other for o in with_safety),
        (sum(bool(o.applies) for o in unexpected), len(unexpected)),
    )


def _pct(pair: tuple[int, int]) -> str:
    right, total = pair
    return f"{right}/{total} ({right / total:.0%})" if total else "—"


def report(name: str, summary: Summary, console: Console) -> None:
    table = Table(title=f"hearth bench households — {name}")
    table.add_column("figure")
    table.add_column("Hearth")
    table.add_column(f"top-{TOP_K} cosine")
    table.add_row("recall", _pct(summary.recall), _pct(summary.baseline))
    table.add_row("safety group", _pct(summary.safety), "—")
    table.add_row("noise clean", _pct(summary.clean), f"0/{summary.clean[1]}")
    table.add_row("forbidden injected", str(summary.forbidden), "—")
    table.add_row("leaks", str(summary.leaks), "0")
    table.add_row("lines per question", f"{summary.lines:.2f}", str(TOP_K))
    table.add_row("said first: every expected constraint", _pct(summary.said), "—")
    table.add_row("said first: another beside them", str(summary.said_beside), "—")
    table.add_row("said first: where none expected", _pct(summary.said_unwanted), "—")
    for kind, (hits, base, total) in summary.by_kind.items():
        table.add_row(f"  {kind}", f"{hits}/{total}", f"{base}/{total}")
    console.print(table)


def _pct_spaced(pair: tuple[int, int]) -> str:
    right, total = pair
    return f"{right}/{total} ({right / total:.0%})".replace("%", " %") if total else "—"


def figures(summary: Summary, households: int) -> list[Figure]:
    """The results table's row (bench.results) for the external households set (its dev
    questions): recall, safety group, noise clean and leaks, Hearth vs top-5 cosine, and how
    often the constraints a reply should name are the ones Hearth says first."""
    return [Figure(
        f"external households ({households} households, {summary.questions} questions, dev): "
        f"recall / safety group / noise clean / leaks, Hearth vs top-{TOP_K} cosine",
        f"{_pct_spaced(summary.recall)} vs {_pct_spaced(summary.baseline)}; "
        f"safety {summary.safety[0]}/{summary.safety[1]}; "
        f"noise {summary.clean[0]}/{summary.clean[1]} vs 0/{summary.clean[1]}; "
        f"{summary.leaks} leaks; {summary.lines:.2f} lines vs {TOP_K}; "
        f"every expected constraint said first {summary.said[0]}/{summary.said[1]}",
    )]  # fmt: skip


async def main(
    settings: HearthSettings, embedder: Embedder, paths: Sequence[Path], out: Path | None,
    console: Console, *, introduced: bool = False,
) -> dict[str, Summary]:  # fmt: skip
    results: dict[str, Summary] = {}
    dumped: dict[str, object] = {}
    for path in paths:
        outcomes = await run_set(settings, embedder, load_set(path, introduced=introduced))
        summary = summarize(outcomes)
        report(path.name, summary, console)
        results[path.name] = summary
        dumped[path.name] = {"summary": summary.as_json(),
                             "questions": [o.as_json() for o in outcomes]}  # fmt: skip
    if out is not None:
        await asyncio.to_thread(_write, out, json.dumps(dumped, ensure_ascii=False, indent=1))
    return results


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
