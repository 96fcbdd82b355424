"""README.md and the documentation site in docs/: the README stays a user's manual of at most
400 lines, neither speaks of the history of its making (that is CHANGELOG.md's), every ``hearth``
command their shell blocks show is one the command line accepts, and the site builds with
warnings as errors. (The API examples run against a live API in
``tests/server/api/test_readme_examples.py``.)"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer

from server.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))

HISTORY = {
    "an issue number": re.compile(r"\bissues?\s*#?\d+|(?<![\w&])#\d+\b", re.IGNORECASE),
    "session talk": re.compile(
        r"\b(this|last|previous|first|second|third|fourth|fifth|sixth|seventh|eighth|earlier)"
        r" sessions?\b(?! (of|id|ends|record|job|is|that))|sessions before this one",
        re.IGNORECASE,
    ),
    "a run name": re.compile(
        r"bench/runs/(?!NAME/)\w|\b[a-z]+(-[a-z0-9]+)*-1[12][0-3]\d[a-z]?\b"
        r"|`(local|retrieval|ret|latency|readpath|asr|wq|locomo|refusal|cues|ab|allergy)-[\w{},-]+`"
    ),
    "a date of the work": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
}


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)


def hearth_commands(text: str) -> list[list[str]]:
    """Each ``hearth …`` line of the shell blocks, its comment cut off, as argv."""
    commands = []
    for block in shell_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            for part in re.findall(r"\bhearth [^|)$]*", line):
                commands.append(shlex.split(part)[1:])
    return commands


def test_the_readme_is_a_manual_of_at_most_400_lines() -> None:
    assert len(README.read_text().splitlines()) <= 400


def test_the_readme_keeps_the_two_commands_as_they_are() -> None:
    text = README.read_text()
    assert "make up      # installs everything" in text
    assert "make test    # installs everything" in text
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^up: install$", makefile, re.MULTILINE)
    assert re.search(r"^test: install", makefile, re.MULTILINE)


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_history_in_the_manual_or_the_docs(page: Path) -> None:
    found = [
        (n, what, m.group(0))
        for n, line in enumerate(page.read_text().splitlines(), 1)
        for what, pattern in HISTORY.items()
        if (m := pattern.search(line))
    ]
    assert not found, f"{page.name}: history belongs in CHANGELOG.md: {found}"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_hearth_command_shown_is_one_the_cli_accepts(page: Path) -> None:
    command = typer.main.get_command(app)
    for argv in hearth_commands(page.read_text()):
        try:
            command.make_context("hearth", list(argv), resilient_parsing=False)
        except click.exceptions.Exit:
            pass
        except click.UsageError as error:
            pytest.fail(f"{page.name}: hearth {shlex.join(argv)}: {error}")


def test_the_docs_cover_every_page_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert str(page.relative_to(ROOT / "docs")) in nav, page


def test_the_docs_build_with_warnings_as_errors(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={"PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    reference = (tmp_path / "api" / "reference" / "index.html").read_text()
    assert "/api/v1/memory/store" in reference
    assert (tmp_path / "api" / "openapi.json").is_file()
