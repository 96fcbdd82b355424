"""``hearth device …``: device tokens and enrollment."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.table import Table

from server.cli.common import console, settings_or_exit, with_redis

device_app = typer.Typer(no_args_is_help=True, help="Device tokens and enrollment")


@device_app.command("token")
def device_token(device_id: str, client_id: str) -> None:
    """Approve the pair DEVICE_ID (MAC) + CLIENT_ID and mint a token bound to it."""
    from server.auth import MAC_PATTERN, normalise_mac
    from server.devices import DeviceRegistry
    from server.runtime import authority_for

    settings = settings_or_exit()
    device = normalise_mac(device_id)
    if not MAC_PATTERN.match(device):
        console.print("[red]DEVICE_ID must be a MAC address like aa:bb:cc:dd:ee:ff[/red]")
        raise typer.Exit(2)
    if settings.auth.enrollment == "approve":
        with_redis(lambda redis: DeviceRegistry(redis).approve(device, client_id))
    print(authority_for(settings).mint(device, client_id, time.time()))


@device_app.command("approve")
def device_approve(code: str) -> None:
    """Approve the device that shows activation CODE; its next OTA check gets a token."""
    from server.devices import DeviceRegistry

    approval = with_redis(lambda redis: DeviceRegistry(redis).approve_code(code))
    if approval is None:
        console.print(f"[red]no device is waiting with code {code}[/red]")
        raise typer.Exit(1)
    console.print(f"approved {approval.device_id} (client {approval.client_id})")


@device_app.command("list")
def device_list() -> None:
    """Approved devices."""
    from server.devices import DeviceRegistry

    approved = with_redis(lambda redis: DeviceRegistry(redis).approved())
    table = Table("device", "client", "approved at")
    for a in approved:
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(a.approved_at))
        table.add_row(a.device_id, a.client_id, at)
    console.print(table)


@device_app.command("revoke")
def device_revoke(
    device_id: str,
    client_id: Annotated[
        str | None, typer.Option("--client", help="only this Client-Id (default: every one)")
    ] = None,
) -> None:
    """Withdraw a device's approval: its token stops working at the next connection, and a
    running Hearth closes its open connections now."""
    from server.auth import normalise_mac
    from server.devices import DeviceRegistry

    device = normalise_mac(device_id)
    revoked = with_redis(lambda redis: DeviceRegistry(redis).revoke(device, client_id))
    if not revoked:
        console.print(
            f"[red]{device} has no approval{' for ' + client_id if client_id else ''}[/red]"
        )
        raise typer.Exit(1)
    for a in revoked:
        console.print(f"revoked {a.device_id} (client {a.client_id})")
