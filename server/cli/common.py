"""What every ``hearth`` sub-command shares: the console, settings (a configuration error is
exit 2 with the key named), running a coroutine, and the configured or running Redis."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
import uvloop
from redis.asyncio import Redis
from rich.console import Console

from config.run_files import redis_url_file
from config.settings import HearthSettings, SettingsError, load_settings
from server.logs import configure_logging

console = Console()
T = TypeVar("T")


def configuration_error(exc: SettingsError) -> typer.Exit:
    console.print(f"[red]configuration error:[/red] {exc}")
    return typer.Exit(2)


def settings_or_exit() -> HearthSettings:
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise configuration_error(exc) from exc
    configure_logging(settings.log_level, settings.log_format)
    return settings


def run_async(coro_fn: Callable[[], Awaitable[T]]) -> T:
    try:
        return uvloop.run(coro_fn())  # type: ignore[arg-type]
    except SettingsError as exc:
        raise configuration_error(exc) from exc


def redis_url(settings: HearthSettings) -> str:
    if settings.redis.url:
        return settings.redis.url
    path = redis_url_file(settings.data_dir)
    if not path.is_file():
        console.print("[red]no Redis configured and `hearth up` is not running[/red]")
        raise typer.Exit(1)
    return path.read_text().strip()


def with_redis(action: Callable[[Redis], Awaitable[T]]) -> T:
    """Run one operator action against the configured (or running `hearth up`'s) Redis."""
    settings = settings_or_exit()

    async def go() -> T:
        redis = Redis.from_url(redis_url(settings))
        try:
            return await action(redis)
        finally:
            await redis.aclose()

    return run_async(go)
