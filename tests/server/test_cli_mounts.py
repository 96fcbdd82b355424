"""``hearth bench``: mounted through the ``hearth.commands`` entry point that pyproject.toml
declares, so server/ never imports bench/; an install whose metadata lacks it says so."""

from __future__ import annotations

import tomllib
from importlib.metadata import EntryPoint, EntryPoints
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from server.cli.mounts import COMMANDS, mount_offered

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _root_with(offered: EntryPoints) -> typer.Typer:
    app = typer.Typer(no_args_is_help=True, add_completion=False)

    @app.command("status")
    def status() -> None:  # a root with a single sub-app would run it as the root
        pass

    mount_offered(app, "bench", offered)
    return app


def test_pyproject_offers_the_bench_app_under_the_commands_group() -> None:
    from bench.cli import bench_app

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    value = project["entry-points"][COMMANDS]["bench"]
    assert EntryPoint(name="bench", value=value, group=COMMANDS).load() is bench_app


def test_an_offered_app_is_mounted_under_its_name() -> None:
    entry = EntryPoint(name="bench", value="bench.cli:bench_app", group=COMMANDS)
    result = runner.invoke(_root_with(EntryPoints([entry])), ["bench", "--help"])
    assert result.exit_code == 0, result.output
    assert "readpath" in result.output and "writepath" in result.output


@pytest.mark.parametrize("args", [["bench"], ["bench", "--help"], ["bench", "readpath", "-n", "3"]])
def test_a_missing_entry_point_says_how_to_mend_it(args: list[str]) -> None:
    result = runner.invoke(_root_with(EntryPoints([])), args)
    assert result.exit_code == 1, result.output
    assert "not installed" in result.output and "pip install -e ." in result.output


def test_an_entry_point_that_is_not_a_typer_app_is_refused() -> None:
    entry = EntryPoint(name="bench", value="bench.cli:READPATH_SCALES", group=COMMANDS)
    with pytest.raises(TypeError, match="not a typer app"):
        _root_with(EntryPoints([entry]))
