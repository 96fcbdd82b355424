"""The current results table, ``docs/benchmarks/results.json``: each bench replaces its own rows.

A bench run with ``--record`` ends by calling ``record`` with the figures it measured; each
figure's row (the same bench and figure) is replaced in place, a new figure joins after the
bench's other rows, and every other row is left as it is. A row says what was measured
(figure, value), how (the command line, without ``--record``), where (the CPU model and core
count, from ``/proc/cpuinfo``) and when (today's date). The documentation renders the file
(``scripts/docs_hooks.py``).
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "results.json"
CPUINFO = Path("/proc/cpuinfo")
FLAG = "--record"

# the option each recording bench takes (bench/cli.py)
Record = Annotated[
    bool, typer.Option(FLAG, help="replace this bench's rows in docs/benchmarks/results.json")
]


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure: what it is (the row's key within its bench) and its value."""

    figure: str
    value: str


def machine(cpuinfo: Path = CPUINFO) -> str:
    """「Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz, 2 cores」: the CPU model and the cores
    this process may use."""
    model = ""
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() == "model name":
                model = " ".join(value.split())
                break
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model or 'unknown CPU'}, {cores or 1} cores"


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that ran, as a reader would type it again: ``hearth bench …``, ``--record``
    left out."""
    args = list(sys.argv if argv is None else argv)
    words = [a for a in args[1:] if a != FLAG]
    return shlex.join(["hearth", *words])


def record(
    bench: str,
    figures: Sequence[Figure],
    *,
    command: str | None = None,
    path: Path | None = None,
    where: str | None = None,
    today: datetime.date | None = None,
) -> list[dict[str, Any]]:
    """Replace ``bench``'s rows for these figures in the results file; returns the rows written.
    ``path`` defaults to ``RESULTS``; ``command``, ``where`` and ``today`` to this process's
    command line, machine and date."""
    path = path or RESULTS
    document = json.loads(path.read_text())
    rows: list[dict[str, Any]] = document["results"]
    stamp = {
        "command": command if command is not None else command_line(),
        "machine": where if where is not None else machine(),
        "date": (today or datetime.date.today()).isoformat(),
    }
    written = [{"bench": bench, "figure": f.figure, "value": f.value, **stamp} for f in figures]
    document["results"] = _merged(rows, bench, written)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1))
    return written


def _merged(
    rows: list[dict[str, Any]], bench: str, written: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``rows`` with each written row in place of the one with its bench and figure, the new
    ones after the bench's last row (at the end when the bench had none)."""
    new = {row["figure"]: row for row in written}
    merged = [new.pop(r["figure"]) if _is(r, bench) and r["figure"] in new else r for r in rows]
    fresh = [row for row in written if row["figure"] in new]
    last = max((i for i, r in enumerate(merged) if _is(r, bench)), default=len(merged) - 1)
    return [*merged[: last + 1], *fresh, *merged[last + 1 :]]


def _is(row: dict[str, Any], bench: str) -> bool:
    return bool(row.get("bench") == bench)
