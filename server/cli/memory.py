"""``hearth memory …``: import and recall, through the running server or directly."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import httpx
import orjson
import typer
from rich.console import Console
from rich.table import Table

from config.run_files import admin_url_file
from config.secrets import secret_value
from config.settings import HearthSettings

memory_app = typer.Typer(no_args_is_help=True, help="Household memory (operators, tests)")
console = Console()


def running_admin(settings: HearthSettings) -> tuple[str, str] | None:
    """(base URL, token) of a running server's admin API, or None when nothing is running."""
    path = admin_url_file(settings.data_dir)
    if not path.is_file():
        return None
    base = path.read_text().strip()
    try:
        httpx.get(f"{base}/health", timeout=2).raise_for_status()
    except httpx.HTTPError:
        return None  # stale file from a crashed run
    return base, secret_value(None, settings.data_dir, "admin_token")


def _call(admin: tuple[str, str], path: str, body: dict[str, Any]) -> dict[str, Any]:
    base, token = admin
    response = httpx.post(f"{base}{path}", json=body, timeout=120,
                          headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    data: dict[str, Any] = response.json()
    if response.status_code != 200:
        console.print(f"[red]{data.get('error', response.text)}[/red]")
        raise typer.Exit(1)
    return data


def _settings() -> HearthSettings:
    from server.cli.common import settings_or_exit

    return settings_or_exit()


@memory_app.command("import")
def import_(
    file: Path,
    person: Annotated[str, typer.Option("--person", "-p", help="the person (store) to load into")],
) -> None:
    """Load memories from JSON Lines (no LLM call). Importing twice stores nothing twice."""
    from memory.identity import person_id
    from memory.importer import LineError, import_memories, parse_lines
    from memory.schema import CUED_CLASSES
    from server.memory.engine import build_memory

    settings = _settings()
    text = sys.stdin.read() if str(file) == "-" else file.read_text()
    admin = running_admin(settings)
    if admin is not None:
        count = _call(admin, "/admin/memory/import", {"person": person, "jsonl": text})["imported"]
    else:
        try:
            lines = parse_lines(text.splitlines())
        except LineError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from exc
        engine = build_memory(settings)
        try:
            stored = import_memories(lines, person_id(person), engine.embedder, engine.store)
            engine.index()
        finally:
            engine.close()
        count = len(stored)
        pending = sum(m.tags_pending for m in stored)
        if pending:  # no running Hearth, so no worker to ask
            console.print(
                f"{pending} lines had no cls: stored as facts with tags pending; import them "
                "through a running Hearth (`hearth up`) to have them tagged"
            )
        uncued = sum(not line.cues and line.cls in CUED_CLASSES for line in lines)
        if uncued:
            console.print(
                f"{uncued} constraints or preferences came without cues: import them through a "
                "running Hearth to have the worker make them"
            )
    console.print(f"imported {count} memories for {person}")


@memory_app.command("cues")
def cues(person: Annotated[str, typer.Option("--person", "-p")]) -> None:
    """(Re)make the "when it matters" cues of a person's constraints and preferences (memories
    from before cues existed, or after changing the write model): the running worker does it."""
    admin = running_admin(_settings())
    if admin is None:
        console.print("[red]cues are made by the worker: start Hearth (`hearth up`) first[/red]")
        raise typer.Exit(1)
    data = _call(admin, "/admin/memory/cues", {"person": person})
    console.print(f"{data['cues_pending']} memories of {data['person']} queued for cues")


@memory_app.command("recall")
def recall(
    question: str,
    person: Annotated[str, typer.Option("--person", "-p")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Run exactly the read path a device turn runs and show what it would inject."""
    import asyncio

    from memory.identity import person_id
    from server.logs import STDERR, configure_logging
    from server.memory.engine import build_memory

    settings = _settings()
    # what it prints is the answer (``--json`` is read by scripts): events go to stderr
    configure_logging(settings.log_level, settings.log_format, stream=STDERR)
    admin = running_admin(settings)
    if admin is not None:
        data = _call(admin, "/admin/memory/recall", {"person": person, "question": question})
    else:
        engine = build_memory(settings)

        async def read() -> dict[str, Any]:
            who = person_id(person)
            if engine.names is not None:  # as a device session opening reads them
                await engine.names.read(who)
            return (await engine.read_path.recall(who, question)).as_json()

        try:
            data = asyncio.run(read())
        finally:
            engine.close()
    if as_json:
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    table = Table("group", "why", "score", "cls", "text")
    for group in ("safety", "related"):
        for item in data["groups"][group]:
            why = f"cue: {item['cue']}" if item.get("cue") else item["why"]
            table.add_row(group, why, f"{item['score']:.3f}", item["cls"], item["text"])
    console.print(table)
    console.print(data["prompt_block"] or "[dim](nothing injected)[/dim]")
    console.print(f"timings ms: {data['timings_ms']}")
