"""Credentials: ``hearth api-key …`` (memory API keys), ``hearth mcp …`` (MCP tokens, stdio) and
``hearth console create-user``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memory.identity import IdentityError
from server.cli.common import console, run_async, settings_or_exit, with_redis
from server.logs import configure_logging

api_key_app = typer.Typer(no_args_is_help=True, help="Memory API keys, bound to stores")
mcp_app = typer.Typer(no_args_is_help=True, help="Hearth as an MCP server: tokens, stdio")
console_app = typer.Typer(no_args_is_help=True, help="The memory console: accounts")


@api_key_app.command("create")
def api_key_create(
    store: Annotated[
        list[str], typer.Option("--store", "-s", help="a store it may use; '*' = every store")
    ],
    name: Annotated[str, typer.Option(help="a label for operators")] = "",
) -> None:
    """Create a memory API key bound to stores. The secret is printed once, never stored."""
    from memory.identity import person_id
    from memory.registry import ALL_STORES, ApiKeys

    try:
        stores = [s if s == ALL_STORES else person_id(s, "store") for s in store]
    except IdentityError as exc:
        console.print(f"[red]{exc.message}[/red]")
        raise typer.Exit(2) from exc
    secret, key = with_redis(lambda redis: ApiKeys(redis).create(name or ",".join(stores), stores))
    console.print(f"key {key.id} for stores {', '.join(stores)}:")
    print(secret)


@api_key_app.command("list")
def api_key_list() -> None:
    from memory.registry import ApiKeys

    table = Table("id", "name", "stores", "created")
    for key in with_redis(lambda redis: ApiKeys(redis).all()):
        table.add_row(key.id, key.name, ", ".join(key.stores), key.created_at)
    console.print(table)


@api_key_app.command("revoke")
def api_key_revoke(key_id: str) -> None:
    """Revoke a key by the id `hearth api-key list` shows; it stops working at once."""
    from memory.registry import KEY_ID_MIN, ApiKeys

    if len(key_id.strip()) < KEY_ID_MIN:
        console.print(f"[red]give at least {KEY_ID_MIN} characters of the key id[/red]")
        raise typer.Exit(2)
    revoked = with_redis(lambda redis: ApiKeys(redis).revoke(key_id))
    console.print(f"{key_id}: {'revoked' if revoked else 'no such key'}")
    if not revoked:
        raise typer.Exit(1)


@mcp_app.command("token-create")
def mcp_token_create(
    person: Annotated[str, typer.Option("--person", "-p", help="whose memory the token reaches")],
    endpoint: Annotated[str, typer.Option(help="agent (full) or device (check_safety)")] = "agent",
    source: Annotated[str, typer.Option(help="source name its writes are recorded under")] = "mcp",
    name: Annotated[str, typer.Option(help="a label (the MCP client's name)")] = "",
) -> None:
    """Mint an MCP token bound to one person and source; the secret is printed once."""
    from memory.identity import IdentityError, person_id
    from server.mcp.tokens import ENDPOINTS, McpTokens

    if endpoint not in ENDPOINTS:
        raise typer.BadParameter(f"--endpoint is one of {ENDPOINTS}")
    try:
        person = person_id(person)  # Zhang and zhang are one person
    except IdentityError as exc:
        raise typer.BadParameter(exc.message) from exc
    label = name or f"{source}@{person}"
    token = with_redis(lambda redis: McpTokens(redis).create(label, person, source, endpoint))
    console.print(f"{endpoint} token for person {person} (source {source}):")
    print(token)


@mcp_app.command("token-list")
def mcp_token_list() -> None:
    from server.mcp.tokens import McpTokens

    table = Table("id", "name", "person", "source", "endpoint")
    for t in with_redis(lambda redis: McpTokens(redis).all()):
        table.add_row(t["id"], t["name"], t["person"], t["source"], t["endpoint"])
    console.print(table)


@mcp_app.command("token-revoke")
def mcp_token_revoke(token_id: str) -> None:
    from server.mcp.tokens import McpTokens

    if not with_redis(lambda redis: McpTokens(redis).revoke(token_id)):
        console.print(f"[red]no single token starts with {token_id}[/red]")
        raise typer.Exit(1)
    console.print(f"revoked {token_id}")


@mcp_app.command("stdio")
def mcp_stdio(
    person: Annotated[str | None, typer.Option(help="default: mcp.stdio_person")] = None,
) -> None:
    """The agent tools over stdio for a local agent; the person comes from configuration. Opens
    the memory store itself: with the embedded store, not while `hearth up` runs."""
    from server.mcp.endpoints import serve_stdio

    settings = settings_or_exit()
    # stdout carries the MCP protocol: every log line goes to stderr
    configure_logging(settings.log_level, settings.log_format, stream=sys.stderr)
    chosen = person or settings.mcp.stdio_person
    if not chosen:
        Console(stderr=True).print("[red]set mcp.stdio_person (or --person)[/red]")
        raise typer.Exit(2)
    run_async(lambda: serve_stdio(settings, chosen))


@console_app.command("create-user")
def console_create_user(
    name: str,
    person: Annotated[str, typer.Option("--person", "-p", help="whose memories the account sees")],
    admin: Annotated[
        bool, typer.Option("--admin", help="may edit person_map, mint tokens")
    ] = False,
    password_stdin: Annotated[bool, typer.Option(help="read the password from stdin")] = False,
) -> None:
    """Create (or reset) a console account; the password is hashed with scrypt."""
    from server.console.accounts import AccountError, Accounts

    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    try:
        account = with_redis(lambda redis: Accounts(redis).create(name, password, person, admin))
    except AccountError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    role = "admin" if account.admin else "user"
    console.print(f"console {role} {account.name} → person {account.person}")
