"""``hearth persons …``: person_map (which person a device speaks for) and speaker names."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

import typer
from rich.table import Table

from memory.identity import IdentityError
from server.cli.common import T, console, with_redis
from server.persons import PersonMap

persons_app = typer.Typer(no_args_is_help=True, help="person_map: which person a device speaks for")


def _with_person_map(action: Callable[[PersonMap], Awaitable[T]]) -> T:
    return with_redis(lambda redis: action(PersonMap(redis)))


@persons_app.command("map")
def persons_map(
    device_id: str,
    person: str,
    speaker: Annotated[
        str | None, typer.Option(help="the name this person's words are stored under")
    ] = None,
) -> None:
    """Map DEVICE_ID to PERSON; its next connection uses it, on every server process."""
    try:
        mapped = _with_person_map(lambda pm: pm.map(device_id, person))
        if speaker is not None:
            _name_speaker(mapped, speaker)
    except IdentityError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    console.print(f"{device_id} → {mapped}")


@persons_app.command("speaker")
def persons_speaker(person: str, speaker: str) -> None:
    """Name the speaker PERSON's own words are stored under (default: the person id)."""
    try:
        name = _name_speaker(person, speaker)
    except IdentityError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    console.print(f"{person} speaks as {name}")


def _name_speaker(person: str, speaker: str) -> str:
    return _with_person_map(lambda pm: pm.name_speaker(person, speaker))


@persons_app.command("unmap")
def persons_unmap(device_id: str) -> None:
    """Remove a mapping; the device becomes its own person again."""
    removed = _with_person_map(lambda pm: pm.unmap(device_id))
    console.print(f"{device_id}: {'unmapped' if removed else 'was not mapped'}")


@persons_app.command("list")
def persons_list() -> None:
    table = Table("device", "person", "speaker")
    mapped = _with_person_map(lambda pm: pm.all())
    speakers = _with_person_map(lambda pm: pm.speakers())
    for device, person in sorted(mapped.items()):
        table.add_row(device, person, speakers.get(person, person))
    console.print(table)
