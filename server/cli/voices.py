"""``hearth voices …``: enrol, list and remove the voices of a household's members.

A household is the person its devices speak for (``hearth persons map``); each member is a
person of their own, whose memories their voice unlocks on those devices.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from redis.asyncio import Redis
from rich.table import Table

from memory.identity import IdentityError
from server.cli.common import console, settings_or_exit, with_redis
from server.voices.checks import Refusal
from server.voices.store import HouseholdFull, Voice, VoiceStore
from server.voices.wav import NotAWav, wav_to_pcm16k

voices_app = typer.Typer(no_args_is_help=True, help="Household voices: who is speaking")


@voices_app.command("enrol")
def voices_enrol(
    household: Annotated[str, typer.Argument(help="the person the home's devices speak for")],
    member: Annotated[str, typer.Argument(help="the member's person id (their memory store)")],
    sentences: Annotated[list[Path], typer.Argument(help="three WAV files, one sentence each")],
    speaker: Annotated[
        str | None, typer.Option(help="the name the member's words are stored under")
    ] = None,
) -> None:
    """Enrol MEMBER's voice in HOUSEHOLD from three spoken sentences (enrolling again replaces
    the voiceprint and keeps the member's memories)."""
    from server.voices.embedder import shared_embedder
    from server.voices.enrol import enrol_member

    settings = settings_or_exit()
    try:
        audio = [wav_to_pcm16k(path.read_bytes()) for path in sentences]
    except (OSError, NotAWav) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    embedder = shared_embedder(settings.resolve(settings.voices.weights_file))
    name = speaker or member

    async def go(redis: Redis) -> Voice:
        return await enrol_member(redis, embedder, household, member, name, audio)

    try:
        voice = with_redis(go)
    except Refusal as exc:
        console.print(f"[red]refused ({exc.reason}):[/red] {exc}")
        raise typer.Exit(1) from exc
    except (HouseholdFull, IdentityError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    console.print(f"{household}: {voice.member} enrolled as {voice.speaker}")


@voices_app.command("list")
def voices_list(household: str) -> None:
    """The enrolled members of HOUSEHOLD and the bytes of voice data it holds."""

    async def go(redis: Redis) -> tuple[list[Voice], int]:
        store = VoiceStore(redis)
        return await store.voices(household), await store.size_bytes(household)

    voices, size = with_redis(go)
    table = Table("member", "speaker", "voiceprints", "enrolled", "private")
    for v in voices:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(v.enrolled_at))
        table.add_row(v.member, v.speaker, str(len(v.prints)), when, "yes" if v.private else "")
    console.print(table)
    console.print(f"{len(voices)} voices, {size:,} bytes of voice data")


@voices_app.command("remove")
def voices_remove(household: str, member: str) -> None:
    """Delete MEMBER's voice data from HOUSEHOLD. Their memories stay in their store: forget
    them with ``hearth memory`` if the operator chooses."""
    removed = with_redis(lambda redis: VoiceStore(redis).remove(household, member))
    console.print(f"{household}: {member} {'removed' if removed else 'was not enrolled'}")


@voices_app.command("private")
def voices_private(
    household: str,
    member: str,
    private: Annotated[
        bool, typer.Option("--private/--shared", help="private: nothing of theirs to other voices")
    ] = True,
) -> None:
    """Mark MEMBER of HOUSEHOLD private (nothing of their memory is read to another voice, not
    even their constraints) or shared again (their constraints are the household's)."""
    voice = with_redis(lambda redis: VoiceStore(redis).set_private(household, member, private))
    if voice is None:
        console.print(f"{household}: {member} is not enrolled")
        raise typer.Exit(1)
    console.print(f"{household}: {voice.member} is {'private' if voice.private else 'shared'}")
