"""``hearth device …``: device tokens and enrollment."""

from __future__ import annotations

import time

import typer
from rich.table import Table

from server.cli.common import console, settings_or_exit, with_redis

device_app = typer.Typer(no_args_is_help=True, help="Device tokens and enrollment")


@device_app.command("token")
def device_token(device_id: str, client_id: str) -> None:
    """Mint a device token bound to DEVICE_ID (MAC) and CLIENT_ID."""
    from server.auth import MAC_PATTERN, normalise_mac
    from server.runtime import authority_for

    settings = settings_or_exit()
    if not MAC_PATTERN.match(normalise_mac(device_id)):
        console.print("[red]DEVICE_ID must be a MAC address like aa:bb:cc:dd:ee:ff[/red]")
        raise typer.Exit(2)
    print(authority_for(settings).mint(device_id, client_id, time.time()))


@device_app.command("approve")
def device_approve(code: str) -> None:
    """Approve the device that shows activation CODE; its next OTA check gets a token."""
    from server.devices import DeviceRegistry

    device = with_redis(lambda redis: DeviceRegistry(redis).approve_code(code))
    if device is None:
        console.print(f"[red]no device is waiting with code {code}[/red]")
        raise typer.Exit(1)
    console.print(f"approved {device}")


@device_app.command("list")
def device_list() -> None:
    """Approved devices."""
    from server.devices import DeviceRegistry

    approved = with_redis(lambda redis: DeviceRegistry(redis).approved())
    table = Table("device", "client", "approved at")
    for device, info in sorted(approved.items()):
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(str(info.get("approved_at", 0)))))
        table.add_row(device, str(info.get("client_id", "")), at)
    console.print(table)
