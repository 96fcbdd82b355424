"""Sub-apps that packages above ``server`` offer to the root command line (``hearth bench``),
found through the ``hearth.commands`` entry-point group of pyproject.toml, so that ``server``
never imports a package above it."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoints, entry_points

import typer

from server.cli.common import console

COMMANDS = "hearth.commands"
# a missing sub-app answers every argument, --help included, with why it is missing
_ANY_ARGUMENTS = {"allow_extra_args": True, "ignore_unknown_options": True}


def mount_offered(app: typer.Typer, name: str, offered: EntryPoints | None = None) -> None:
    """Mount the sub-app offered as ``hearth NAME``; when no installed package offers it (an
    install whose metadata predates the entry point), a command that says so and exits 1."""
    found = (entry_points(group=COMMANDS) if offered is None else offered).select(name=name)
    if not found:
        app.command(
            name,
            help=f"(not installed: no {name!r} entry point in {COMMANDS!r})",
            context_settings=_ANY_ARGUMENTS,
            add_help_option=False,
        )(_missing(name))
        return
    entry = next(iter(found))
    sub = entry.load()
    if not isinstance(sub, typer.Typer):
        raise TypeError(f"entry point {entry.value!r} ({COMMANDS}: {name}) is not a typer app")
    app.add_typer(sub, name=name)


def _missing(name: str) -> Callable[[], None]:
    def missing() -> None:
        console.print(
            f"[red]`hearth {name}` is not installed:[/red] no {name!r} entry point in the "
            f"{COMMANDS!r} group; re-install Hearth (`pip install -e .`) to refresh its metadata"
        )
        raise typer.Exit(1)

    return missing
