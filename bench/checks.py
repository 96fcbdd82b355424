"""``hearth bench checks``: how often each reply check took out what should have been said.

The reply checks (``server.device.reply_checks`` and the modules it calls) keep a sentence of
the model's from being spoken, or cut part of it out, and say why in the turn's trace and in the
device log. This bench reads those back from bench run folders (``bench.check_runs``), gives each
removal to the check that made it (``CHECKS``: its trace reasons, its log event), and counts per
check the sentences removed, the sentences cut, and the turns left saying only Hearth's fixed
sentences (the apology, "I don't know", "I can't do that here", "got it") or only its own
safety reminder. With a labels file (each removal judged by a person: should it have gone?) it
gives each check's precision: the removals that were right among those labelled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.check_runs import Drop, TurnRecord, read_run
from bench.results import Figure
from server.device.claims import CANNOT, REMINDER
from server.device.reply_checks import ACKNOWLEDGED, ACKNOWLEDGED_AFTER, APOLOGY_EMPTY
from server.understanding.grounding import DONT_KNOW

LABELS = Path(__file__).resolve().parent / "data" / "reply_checks" / "labels-2026-12-03.jsonl"
REPORT = "checks.json"
FIGURE = "reply checks: precision per check"


@dataclass(frozen=True, slots=True)
class Check:
    """One reply check: where it lives, the log event it writes for a sentence, and how the
    turn trace's ``why`` begins for it (older wordings too)."""

    name: str
    where: str
    event: str
    reasons: tuple[str, ...]
    cuts: bool = False  # it cuts a piece out of the sentence; the rest is still spoken


# fmt: off
CHECKS: tuple[Check, ...] = (
    Check("echo", "echo.echoes", "turn.echo_dropped", ("gives the question back",)),
    Check("machinery", "machinery.machinery_in", "turn.machinery_dropped", ("machinery:",)),
    Check("prompt note", "machinery.without_notes", "turn.prompt_note_cut",
          ("a memory line's note from the prompt",), cuts=True),
    Check("tool call as text", "machinery.without_markup", "turn.markup_dropped",
          ("tool call as text",), cuts=True),
    Check("reminder repeated", "claims.repeats_reminder", "turn.reminder_repeat_dropped",
          ("reminder repeated",)),
    Check("told back", "reply_checks._not_told_back", "turn.told_back_dropped",
          ("reminds the person of what they just said",)),
    Check("reminder not due", "reply_checks._not_told_back", "turn.reminder_not_due_dropped",
          ("a reminder on a command or chit-chat",)),
    Check("statement told back", "reply_checks._not_restated",
          "turn.statement_told_back_dropped", ("tells the person's statement back",)),
    Check("going along after a reminder", "reply_checks._not_restated",
          "turn.going_along_dropped", ("goes along with what Hearth's reminder warns of",)),
    Check("hanging clause", "reply_checks._released", "turn.fragment_dropped",
          ("a clause whose continuation was not spoken",)),
    Check("unsafe recommendation", "heeding.recommends_against",
          "turn.unsafe_recommendation_dropped",
          ("recommends what a constraint forbids", "recommends what a said constraint forbids")),
    Check("claimed action", "claims.claims_action", "turn.claimed_action_replaced",
          ("claimed action",)),
    Check("memory lacks the answer", "grounding.unsupported",
          "turn.answer_memory_lacks_dropped", ("memory holds no answer",)),
    Check("invented fact", "grounding.unsupported", "turn.invented_fact_replaced",
          ("not in memory:",)),
    Check("unheld allergy", "grounding.unheld_allergies", "turn.unheld_allergy_dropped",
          ("an allergy memory does not hold",)),
)
# fmt: on
EVENTS = frozenset(check.event for check in CHECKS)
UNKNOWN = "unknown"
# a sentence leaning on one just dropped goes with it (heeding and grounding both say so): the
# check that dropped the one before it; grounding's alone logs it (as an invented fact)
CONTINUES = "continues a sentence not spoken"
_BY_EVENT = {check.event: check for check in CHECKS}
_BY_NAME = {check.name: check for check in CHECKS}

# what Hearth says in a turn's place: the apology, "I don't know", "I can't", "got it"
FIXED = tuple(
    sorted(
        {*APOLOGY_EMPTY.values(), *ACKNOWLEDGED.values(), *ACKNOWLEDGED_AFTER.values(),
         *DONT_KNOW.values(), *CANNOT.values()},
        key=len, reverse=True,
    )
)  # fmt: skip
# Hearth's own safety reminders (「提醒一下：…。」), said first or in a dropped sentence's place
_HEARTH_REMINDERS = re.compile(
    "(?:" + "|".join(re.escape(r) for r in REMINDER.values()) + r")[^。]*。"
)
_BARE_ACK = re.compile(r"^\s*(?:好的|好|嗯|OK)?[，,。.！!\s]*$")


def check_of(drop: Drop, before: str | None) -> str:
    """The check that made ``drop`` (by the trace's reason, else by its log event); ``before``:
    the check of the turn's drop before it."""
    if drop.why.startswith(CONTINUES):
        return "invented fact" if drop.event == "turn.invented_fact_replaced" else before or UNKNOWN
    if drop.why:
        return next((c.name for c in CHECKS if drop.why.startswith(c.reasons)), UNKNOWN)
    found = _BY_EVENT.get(drop.event)
    return UNKNOWN if found is None else found.name


@dataclass(frozen=True, slots=True)
class Removal:
    """One sentence a check took out, with what a reviewer needs to judge it."""

    run: str
    id: str
    question: str
    sentence: str
    check: str
    why: str
    event: str
    detail: str
    constraints: tuple[str, ...]
    related: tuple[str, ...]
    said_first: tuple[str, ...]
    reply: str | None


def removals(turn: TurnRecord) -> list[Removal]:
    found: list[Removal] = []
    before: str | None = None
    for drop in turn.drops:
        check = check_of(drop, before)
        before = check
        found.append(
            Removal(
                turn.run, turn.id, turn.question, drop.said, check, drop.why, drop.event,
                drop.detail, turn.constraints, turn.related, turn.said_first, turn.reply,
            )
        )  # fmt: skip
    return found


def outcome(reply: str | None, removed: Sequence[Removal]) -> str | None:
    """What a turn with whole sentences removed came to when none of the model's words were left:
    ``fallback`` (Hearth's fixed sentence in their place) or ``reminder only``; None otherwise."""
    if reply is None or not any(not _cuts(r.check) for r in removed):
        return None
    rest = _HEARTH_REMINDERS.sub("", reply)
    fixed = False
    for sentence in FIXED:
        if sentence in rest:
            rest, fixed = rest.replace(sentence, ""), True
    if not _BARE_ACK.match(rest):
        return None
    if fixed:
        return "fallback"
    return "reminder only" if _HEARTH_REMINDERS.search(reply) else "fallback"


def _cuts(check: str) -> bool:
    found = _BY_NAME.get(check)
    return found is not None and found.cuts


Key = tuple[str, str, str]  # run, turn id, sentence


def load_labels(path: Path | None) -> dict[Key, dict[str, Any]]:
    """The labels file's rows by (run, id, sentence); none without one."""
    if path is None or not path.is_file():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {(r["run"], str(r["id"]), r["sentence"]): r for r in rows}


@dataclass(slots=True)
class CheckTally:
    check: str
    where: str
    removed: int = 0
    cut: int = 0
    fallback_turns: int = 0
    reminder_only_turns: int = 0
    wrong_turns: int = 0  # of those, turns where a removal of its was labelled wrong
    labelled: int = 0
    right: int = 0

    @property
    def precision(self) -> float | None:
        return self.right / self.labelled if self.labelled else None


def tally(
    turns: Iterable[TurnRecord], labels: dict[Key, dict[str, Any]]
) -> tuple[list[CheckTally], list[Removal], list[dict[str, Any]]]:
    """Per check: removals, cuts, turns it left with only fixed sentences, precision; and every
    removal and every such turn."""
    tallies = {c.name: CheckTally(c.name, c.where) for c in CHECKS}
    every: list[Removal] = []
    ended: list[dict[str, Any]] = []
    for turn in turns:
        found = removals(turn)
        every += found
        wrong: set[str] = set()
        for removal in found:
            row = tallies.setdefault(removal.check, CheckTally(removal.check, ""))
            if _cuts(removal.check):
                row.cut += 1
            else:
                row.removed += 1
            label = labels.get((removal.run, removal.id, removal.sentence))
            if label is not None:
                row.labelled += 1
                row.right += bool(label["should_remove"])
                if not label["should_remove"]:
                    wrong.add(removal.check)
        came_to = outcome(turn.reply, found)
        if came_to is None:
            continue
        checks = sorted({r.check for r in found if not _cuts(r.check)})
        ended.append({"run": turn.run, "id": turn.id, "outcome": came_to, "checks": checks,
                      "wrong": sorted(wrong), "reply": turn.reply})  # fmt: skip
        for name in checks:
            row = tallies[name]
            if came_to == "fallback":
                row.fallback_turns += 1
            else:
                row.reminder_only_turns += 1
            row.wrong_turns += name in wrong
    return list(tallies.values()), every, ended


def report(folders: Sequence[Path], labels_path: Path | None) -> dict[str, Any]:
    labels = load_labels(labels_path)
    turns = [turn for folder in folders for turn in read_run(folder, EVENTS)]
    tallies, every, ended = tally(turns, labels)
    return {
        "runs": [folder.name for folder in folders],
        "labels": None if labels_path is None or not labels else str(labels_path),
        "turns": len(turns),
        "checks": [{**asdict(t), "precision": t.precision} for t in tallies],
        "removals": [
            {**asdict(r), "label": _label(labels.get((r.run, r.id, r.sentence)))} for r in every
        ],
        "ended": ended,
    }


def _label(row: dict[str, Any] | None) -> bool | None:
    return None if row is None else bool(row["should_remove"])


def show(found: dict[str, Any], console: Console) -> None:
    table = Table(title=f"Reply checks over {', '.join(found['runs'])} ({found['turns']} turns)")
    columns = ("check", "removed", "cut", "→ fallback", "→ reminder only", "…wrongly", "precision")
    for column in columns:
        table.add_column(column, justify="left" if column == "check" else "right")
    for row in found["checks"]:
        table.add_row(
            row["check"], str(row["removed"]), str(row["cut"]), str(row["fallback_turns"]),
            str(row["reminder_only_turns"]), str(row["wrong_turns"]), _precision(row),
        )  # fmt: skip
    console.print(table)
    unlabelled = sum(1 for r in found["removals"] if r["label"] is None)
    if unlabelled:
        console.print(f"{unlabelled} removals without a label (precision counts labelled ones)")


def _precision(row: dict[str, Any]) -> str:
    if not row["labelled"]:
        return "–"
    return f"{row['right']}/{row['labelled']} ({100 * row['right'] / row['labelled']:.0f} %)"


def figures(found: dict[str, Any]) -> list[Figure]:
    """The results table's row: each check's right/labelled removals (the checks that removed
    something), and the turns they left with only a fixed sentence."""
    parts = [f"{r['check']} {r['right']}/{r['labelled']}" for r in found["checks"] if r["labelled"]]
    fallback = sum(1 for t in found["ended"] if t["outcome"] == "fallback")
    value = (
        f"{'; '.join(parts)} removed rightly; {fallback} of {found['turns']} turns left with "
        f"only a fixed sentence ({len(found['runs'])} runs of the local model)"
    )
    return [Figure(FIGURE, value)]


def main(
    folders: Sequence[Path], labels_path: Path | None, out: Path | None, console: Console
) -> dict[str, Any]:
    found = report(folders, labels_path)
    show(found, console)
    target = out or folders[0] / REPORT
    target.write_text(json.dumps(found, ensure_ascii=False, indent=1))
    console.print(f"report: {target}")
    return found
