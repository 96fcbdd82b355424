"""What each reply check took out of a bench run (bench.checks, bench.check_runs), read from small
run folders written the way `hearth bench heard` and `hearth bench e2e` write theirs
(tests/bench/checks_runs/)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from bench import results
from bench.check_runs import Drop, read_run
from bench.checks import (
    CHECKS,
    EVENTS,
    FIGURE,
    LABELS,
    UNKNOWN,
    Removal,
    check_of,
    load_labels,
    outcome,
    removals,
    report,
)
from server.device.claims import CANNOT
from server.device.reply_checks import APOLOGY_EMPTY
from server.understanding.grounding import DONT_KNOW

RUNS = Path(__file__).parent / "checks_runs"
HEARD, E2E, LOG_ONLY = RUNS / "heard-mini", RUNS / "e2e-mini", RUNS / "log-only"
SOURCES = Path(__file__).resolve().parents[2] / "server"


def _checks(folder: Path) -> dict[tuple[str, str], str]:
    """(turn id, sentence) → the check it went to."""
    return {
        (r.id, r.sentence): r.check for turn in read_run(folder, EVENTS) for r in removals(turn)
    }


def test_each_removal_goes_to_the_check_its_reason_names_and_a_continuation_to_the_one_before() -> (
    None
):
    found = _checks(HEARD)
    assert found[("r1", "提醒一下，")] == "reminder repeated"
    assert found[("r1", "做个鸡蛋饼吧，")] == "unsafe recommendation"
    assert found[("r1", "蛋饼又香又软。")] == "unsafe recommendation"  # leans on the one before
    assert found[("r2", "翠翠是只画眉。")] == "memory lacks the answer"
    assert found[("r3", "备用钥匙在对门龙老师家（关于我）。")] == "prompt note"


def test_a_removal_in_both_results_and_log_is_one_and_a_log_only_one_joins_its_question() -> None:
    turns = {turn.id: turn for turn in read_run(HEARD, EVENTS)}
    assert [d.said for d in turns["r1"].drops] == ["提醒一下，", "做个鸡蛋饼吧，", "蛋饼又香又软。"]
    assert turns["r1"].drops[1].event == "turn.unsafe_recommendation_dropped"
    assert turns["r1"].drops[1].detail == "朵朵对鸡蛋过敏"
    assert turns["r1"].drops[2].event == ""  # heeding's continuation is never logged
    # the echo only the log saw: the turn of its question, which ended in the apology
    [echo] = turns["r4"].drops
    assert (echo.said, echo.why, echo.event) == (
        "超市低钠盐打折，多囤几袋。",
        "",
        "turn.echo_dropped",
    )
    assert turns["r2"].related == ("我养了只画眉叫翠翠",)  # a heard run keeps them in its log
    assert turns["r5"].drops == []
    assert len(turns) == 5


def test_a_folder_with_only_a_log_gives_the_turn_of_its_question_with_no_reply() -> None:
    [turn] = read_run(LOG_ONLY, EVENTS)
    assert (turn.run, turn.id, turn.question, turn.reply) == (
        "log-only",
        "L2",
        "明天北坑多沙兜",
        None,
    )
    assert [r.check for r in removals(turn)] == ["echo", "claimed action"]  # turn.tool_call skipped
    assert outcome(turn.reply, removals(turn)) is None


def test_the_trace_reason_wins_and_an_unknown_reason_is_said_so() -> None:
    logged_as_invented = Drop(
        "还有呢。", "continues a sentence not spoken", "turn.invented_fact_replaced"
    )
    assert check_of(logged_as_invented, "unsafe recommendation") == "invented fact"
    assert check_of(Drop("x", "continues a sentence not spoken"), None) == UNKNOWN
    assert check_of(Drop("x", "a reason no check gives"), "echo") == UNKNOWN
    assert check_of(Drop("x", "", "turn.machinery_dropped"), None) == "machinery"


def _removal(check: str) -> Removal:
    return Removal("run", "t", "q", "s", check, "", "", "", (), (), (), None)


@pytest.mark.parametrize(
    ("reply", "came_to"),
    [
        (DONT_KNOW["zh"], "fallback"),
        (APOLOGY_EMPTY["zh"], "fallback"),
        ("好的，" + APOLOGY_EMPTY["zh"], "fallback"),
        ("提醒一下：朵朵对鸡蛋过敏。" + CANNOT["zh"], "fallback"),
        ("提醒一下：朵朵对鸡蛋过敏。", "reminder only"),
        ("提醒一下：朵朵对鸡蛋过敏。可以煮小米粥。", None),
        (None, None),
    ],
)
def test_a_turn_left_with_only_hearths_fixed_sentences(
    reply: str | None, came_to: str | None
) -> None:
    assert outcome(reply, [_removal("echo")]) == came_to


def test_a_turn_whose_sentences_were_only_cut_is_never_a_fallback() -> None:
    assert outcome(DONT_KNOW["zh"], [_removal("prompt note")]) is None
    assert outcome(DONT_KNOW["zh"], []) is None


def test_the_report_counts_removals_cuts_fallbacks_and_precision_on_labelled_removals() -> None:
    found = report([HEARD, E2E, LOG_ONLY], RUNS / "labels.jsonl")
    checks = {row["check"]: row for row in found["checks"]}
    assert found["turns"] == 5 + 2 + 1
    unsafe = checks["unsafe recommendation"]
    assert (unsafe["removed"], unsafe["labelled"], unsafe["right"]) == (2, 2, 2)
    assert (unsafe["fallback_turns"], unsafe["reminder_only_turns"]) == (0, 1)
    lacks = checks["memory lacks the answer"]
    assert (lacks["fallback_turns"], lacks["wrong_turns"], lacks["precision"]) == (1, 1, 0.0)
    claimed = checks["claimed action"]  # two in e2e, one only logged
    assert (claimed["removed"], claimed["fallback_turns"], claimed["labelled"]) == (3, 1, 1)
    assert checks["echo"]["removed"] == 2 and checks["echo"]["fallback_turns"] == 1
    assert checks["prompt note"]["cut"] == 1 and checks["prompt note"]["removed"] == 0
    assert checks["machinery"]["fallback_turns"] == 0  # the model's words were still said
    assert checks["told back"]["removed"] == 0 and checks["told back"]["precision"] is None
    labelled = [r for r in found["removals"] if r["label"] is not None]
    assert len(labelled) == 4 and len(found["removals"]) == 11


def test_the_command_prints_the_table_writes_the_report_and_records_only_with_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.cli import app

    table = tmp_path / "results.json"
    table.write_text(json.dumps({"about": "", "results": []}))
    monkeypatch.setattr(results, "RESULTS", table)
    out = tmp_path / "checks.json"
    args = ["bench", "checks", str(HEARD), str(E2E), "--labels", str(RUNS / "labels.jsonl")]
    done = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "Reply checks over heard-mini, e2e-mini (7 turns)" in done.output
    assert json.loads(out.read_text())["runs"] == ["heard-mini", "e2e-mini"]
    assert json.loads(table.read_text())["results"] == []
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--record"])
    assert done.exit_code == 0, done.output
    [row] = json.loads(table.read_text())["results"]
    assert (row["bench"], row["figure"]) == ("checks", FIGURE)
    assert row["value"].startswith("unsafe recommendation 2/2; claimed action 1/1;")
    assert "memory lacks the answer 0/1 removed rightly; 3 of 7 turns" in row["value"]


def test_every_reason_the_reply_checks_write_is_a_checks_reason() -> None:
    """A new check, or a reworded reason, must join ``CHECKS`` or its removals go uncounted."""
    source = (SOURCES / "device" / "reply_checks.py").read_text()
    written = re.findall(r"self\._drop\(\w+, f?\"([^\"{]+)", source)
    written += re.findall(r"why = \"([^\"{]+)\"", source)
    written += re.findall(r"f\"(not in memory: )\{", source)
    assert len(written) >= 9
    reasons = tuple(reason for check in CHECKS for reason in check.reasons)
    for why in written:
        assert why.startswith(reasons) or why.startswith("continues"), why
    events = set(re.findall(r"log\.\w+\(\s*\"(turn\.\w+_(?:dropped|replaced|cut))\"", source))
    assert events <= EVENTS, events - EVENTS


def test_the_shipped_labels_judge_every_removal_once() -> None:
    labels = load_labels(LABELS)
    assert len(labels) > 200
    assert {row["check"] for row in labels.values()} <= {c.name for c in CHECKS}
    assert all(isinstance(row["should_remove"], bool) and row["note"] for row in labels.values())


def test_the_report_is_written_into_the_first_run_when_no_out_is_given(tmp_path: Path) -> None:
    from bench.checks import REPORT, main

    folder = tmp_path / "heard-mini"
    folder.mkdir()
    for name in ("results.json", "hearth.log"):
        (folder / name).write_text((HEARD / name).read_text())
    main([folder], None, None, Console(file=io.StringIO()))
    written = json.loads((folder / REPORT).read_text())
    assert written["labels"] is None
    assert all(r["label"] is None for r in written["removals"])
