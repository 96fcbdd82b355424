"""What the reply checks took out of a bench run folder's turns, read back from what it kept.

A run folder of ``hearth bench heard`` (``results.json``: every request with its reply and the
turn trace's ``replaced`` list, each entry ``{"said", "why"}``) or ``hearth bench e2e``
(``results.jsonl``: the same per question) holds the turns; its ``hearth.log`` holds the device's
structured log, where each check logs the sentence it dropped under its own event
(``turn.echo_dropped``…). The log's turn events carry no session, so a drop belongs to the turn
of the last ``readpath.injected`` before it (the benches ask one question at a time). A removal
found in both is one removal; one found only in the log (a folder without results, or a turn
its results left out) joins the turn of that question, or a turn of its own.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEARD_RESULTS = "results.json"
E2E_RESULTS = "results.jsonl"
LOG = "hearth.log"
QUESTION_EVENT = "readpath.injected"  # server.memory: what was read for this turn's question
SESSION_EVENT = "session.open"


@dataclass(frozen=True, slots=True)
class Drop:
    """One sentence a check took out or changed: the trace's reason (``why``) and/or the log
    event that said so."""

    said: str
    why: str = ""
    event: str = ""
    detail: str = ""  # what the log event named (the constraint, the unsupported words…)


@dataclass(slots=True)
class TurnRecord:
    """One turn of a run as the checks saw it."""

    run: str
    id: str
    question: str
    reply: str | None  # None: the folder kept no reply (log only)
    said_first: tuple[str, ...] = ()  # Hearth's own reminder, before the model's reply
    constraints: tuple[str, ...] = ()  # the safety group recalled for the question
    related: tuple[str, ...] = ()
    drops: list[Drop] = field(default_factory=list)


def read_run(folder: Path, events: Collection[str]) -> list[TurnRecord]:
    """Every turn of ``folder`` with the drops its results and its log recorded; ``events``:
    the log events that report a dropped sentence."""
    run = folder.name
    turns = _results(folder, run)
    log = folder / LOG
    if log.is_file():
        _merge_log(turns, _log_turns(log, events), run)
    return turns


def _results(folder: Path, run: str) -> list[TurnRecord]:
    heard, e2e = folder / HEARD_RESULTS, folder / E2E_RESULTS
    if heard.is_file():
        document = json.loads(heard.read_text())
        if isinstance(document, dict) and "requests" in document:
            return [_heard_turn(run, r) for r in document["requests"]]
    if e2e.is_file():
        lines = e2e.read_text().splitlines()
        return [_e2e_turn(run, json.loads(line)) for line in lines if line.strip()]
    return []


def _heard_turn(run: str, row: dict[str, Any]) -> TurnRecord:
    return TurnRecord(
        run, str(row["id"]), str(row.get("text", "")), row.get("reply"),
        tuple(row.get("said_first") or ()), tuple(row.get("safety") or ()),
        drops=_trace_drops(row),
    )  # fmt: skip


def _e2e_turn(run: str, row: dict[str, Any]) -> TurnRecord:
    groups = row.get("groups") or {}
    return TurnRecord(
        run, str(row["id"]), str(row.get("question", "")), row.get("reply"),
        tuple(row.get("said_first") or ()), tuple(groups.get("safety") or ()),
        tuple(groups.get("related") or ()), _trace_drops(row),
    )  # fmt: skip


def _trace_drops(row: dict[str, Any]) -> list[Drop]:
    return [Drop(str(r.get("said", "")), str(r.get("why", ""))) for r in row.get("replaced") or ()]


@dataclass(slots=True)
class _LogTurn:
    line: int  # where its question was read (0: before any)
    question: str
    constraints: tuple[str, ...] = ()
    said_first: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    drops: list[Drop] = field(default_factory=list)


def _log_turns(log: Path, events: Collection[str]) -> list[_LogTurn]:
    """The log's turns that dropped something, in order."""
    turns: list[_LogTurn] = []
    current = _LogTurn(0, "")
    for number, event in _events(log):
        name = event.get("event")
        if name == SESSION_EVENT:
            current = _LogTurn(number, "")
        elif name == QUESTION_EVENT:
            current = _LogTurn(
                number, str(event.get("question", "")), tuple(event.get("safety") or ()),
                tuple(event.get("said_first") or ()), tuple(event.get("related") or ()),
            )  # fmt: skip
        elif name in events and "said" in event:
            if not current.drops:
                turns.append(current)
            current.drops.append(Drop(str(event["said"]), "", str(name), _detail(event)))
    return turns


def _events(log: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The log's JSON lines (the workers' and libraries' plain lines between them skipped)."""
    with log.open(errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield number, event


def _detail(event: dict[str, Any]) -> str:
    for key in ("constraint", "named", "unsupported", "question"):
        if event.get(key):
            value = event[key]
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def _merge_log(turns: list[TurnRecord], logged: list[_LogTurn], run: str) -> None:
    """Each logged drop onto its turn: the same sentence there already is the same removal
    (its event noted), another joins that turn; a question no turn asked is a turn of its own.
    A question asked twice matches its turns in order."""
    by_question: dict[str, list[TurnRecord]] = {}
    for turn in turns:
        by_question.setdefault(turn.question, []).append(turn)
    for entry in logged:
        matched = _take_matching(by_question.get(entry.question) or [], entry)
        turn = matched or TurnRecord(
            run, f"L{entry.line}", entry.question, None, entry.said_first, entry.constraints
        )
        if matched is None:
            turns.append(turn)
        turn.related = turn.related or entry.related  # a heard run keeps them in its log only
        _join(turn, entry.drops)


def _take_matching(candidates: list[TurnRecord], entry: _LogTurn) -> TurnRecord | None:
    """The first turn of this question whose drops include one the log saw (else the first)."""
    said = {d.said for d in entry.drops}
    for i, turn in enumerate(candidates):
        if any(d.said in said for d in turn.drops):
            return candidates.pop(i)
    return candidates.pop(0) if candidates else None


def _join(turn: TurnRecord, logged: list[Drop]) -> None:
    unmatched = list(range(len(turn.drops)))
    for drop in logged:
        same = next((i for i in unmatched if turn.drops[i].said == drop.said), None)
        if same is None:
            turn.drops.append(drop)
            continue
        unmatched.remove(same)
        kept = turn.drops[same]
        turn.drops[same] = Drop(kept.said, kept.why, drop.event, drop.detail)
