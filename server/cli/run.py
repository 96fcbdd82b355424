"""``hearth up`` / ``serve`` / ``worker`` / ``status`` / ``agent-context``: running Hearth, and
asking how it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from server.cli.common import console, run_async, settings_or_exit

if TYPE_CHECKING:
    from server.runtime import EngineUnavailable

run_app = typer.Typer()


@run_app.command()
def up(
    degraded: Annotated[
        bool,
        typer.Option(
            "--degraded",
            help="serve even if the local model cannot start (turns say it is unavailable; "
            "the supervisor keeps restarting it)",
        ),
    ] = False,
) -> None:
    """Everything on embedded defaults in one process tree (Ctrl-C stops all of it)."""
    from providers.llama_build import cpu_supports_baseline
    from server.runtime import EngineUnavailable, run

    settings = settings_or_exit()
    missing = cpu_supports_baseline() if settings.embedded_llm else []
    if missing and not degraded:
        console.print(unsupported_cpu(missing))
        raise typer.Exit(3)
    try:
        run_async(lambda: run(settings, "up", degraded=degraded))
    except EngineUnavailable as exc:
        console.print(engine_unavailable(exc), highlight=False)
        raise typer.Exit(3) from exc


def unsupported_cpu(missing: list[str]) -> str:
    return (
        f"[red]This CPU lacks {', '.join(missing)}[/red], which the local model's engine needs "
        "(Hearth builds llama.cpp for x86-64 with AVX2, FMA and F16C: Intel Haswell / AMD Zen "
        "or newer). Point Hearth at another OpenAI-compatible server with HEARTH_LLM__BASE_URL, "
        "or run `hearth up --degraded` to serve without a model."
    )


def engine_unavailable(exc: EngineUnavailable) -> str:
    from rich.markup import escape

    from providers.processes import log_tail

    lines = log_tail(exc.log_file, 8) if exc.log_file else []
    tail = escape("\n".join(f"    {line}" for line in lines))
    crash = "general protection" in tail or "illegal instruction" in tail.lower()
    hints = [
        "`hearth models install` re-assembles a missing or damaged model file;",
        "`.venv/bin/python -m providers.llama_build ensure --rebuild` rebuilds the engine "
        "(a crash such as 'general protection fault' or 'Illegal instruction' means the "
        "installed build does not fit this CPU);"
        if crash or exc.part != "redis"
        else "check that redis-server is installed and data/redis is writable;",
        "HEARTH_LLM__BASE_URL points Hearth at another OpenAI-compatible server;",
        "`hearth up --degraded` serves anyway: turns say the model is unavailable, and the "
        "supervisor keeps restarting it.",
    ]
    log_line = f"Its log: {exc.log_file}" + (f", last lines:\n{tail}" if tail else "")
    if exc.log_file is None:
        log_line = "It never started."
    return (
        f"[red]Hearth did not start: {exc.part} could not serve.[/red]\n"
        f"What failed: {escape(exc.reason)}\n{log_line}\nWhat to try:\n"
        + "\n".join(f"  - {hint}" for hint in hints)
    )


@run_app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
) -> None:
    """The running Hearth's parts: each child process up or down, restarts, last exit."""
    import json

    from server.cli.memory import running_admin

    settings = settings_or_exit()
    admin = running_admin(settings)
    if admin is None:
        console.print("[red]Hearth is not running[/red] (no answer from its admin API)")
        raise typer.Exit(1)
    import httpx

    base, token = admin
    response = httpx.get(f"{base}/admin/status", headers={"Authorization": f"Bearer {token}"})
    data = response.json()
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        table = Table("part", "state", "pid", "restarts", "last exit", "for", "log")
        for part in data["children"]:
            state = part["state"]
            if "next_start_in_s" in part:
                state += f" (next try in {part['next_start_in_s']} s)"
            colour = "green" if part["state"] == "up" else "red"
            table.add_row(
                part["name"], f"[{colour}]{state}[/{colour}]", str(part["pid"] or "-"),
                str(part["restarts"]), part["last_exit"] or "-", f"{part['for_s']} s",
                part["log"],
            )  # fmt: skip
        console.print(table)
        console.print("ready" if data["ready"] else "[red]not ready[/red]", f"(llm: {data['llm']})")
        for name, engine in data.get("engines", {}).items():
            console.print(f"{name}: llama.cpp {engine['engine']} ({engine['reason']})")
    raise typer.Exit(0 if data["ready"] else 1)


@run_app.command()
def serve() -> None:
    """Device server + HTTP against external Redis / Qdrant / LLM (production)."""
    from server.runtime import run

    settings = settings_or_exit()
    run_async(lambda: run(settings, "serve"))


@run_app.command()
def worker() -> None:
    """The write-path worker as its own process (production)."""
    from server.runtime import run_worker

    settings = settings_or_exit()
    run_async(lambda: run_worker(settings))


@run_app.command("agent-context", context_settings={"allow_extra_args": True})
def agent_context(
    person: Annotated[str | None, typer.Option(help="default: mcp.agent_person")] = None,
) -> None:
    """The memory block for a prompt on stdin (for agent prompt hooks; see hearth-agent-context)."""
    from server.agent_context import main as agent_main

    raise typer.Exit(agent_main(["--person", person] if person else []))
