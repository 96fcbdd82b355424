"""Functions stay short enough to read at once: none in ``server/``, ``workers/`` or ``memory/``
is longer than ``LONGEST`` lines, from its ``def`` to its last line (docstring, comments and the
functions it defines inside included). A longer one is split into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["server", "workers", "memory"]
LONGEST = 80


def _functions() -> list[tuple[str, int]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                    found.append((where, (node.end_lineno or node.lineno) - node.lineno + 1))
    return found


def test_no_function_is_longer_than_80_lines() -> None:
    long = [f"  {where}: {lines} lines" for where, lines in _functions() if lines > LONGEST]
    assert long == [], f"functions longer than {LONGEST} lines:\n" + "\n".join(long)


def test_the_functions_are_really_measured() -> None:
    measured = dict(_functions())
    [recall] = [
        lines
        for where, lines in measured.items()
        if where.startswith("server/memory/readpath.py:") and where.endswith(" recall")
    ]
    assert 10 < recall <= LONGEST  # ReadPath.recall: once ~170 lines, now its steps in order
    assert any(where.startswith("workers/") for where in measured)
