"""``hearth jobs …``: write-path jobs that failed for good, and replaying one."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from redis.asyncio import Redis
from rich.table import Table

from server.cli.common import console, with_redis

jobs_app = typer.Typer(no_args_is_help=True, help="Write-path jobs that failed for good")


@jobs_app.command("failed")
def jobs_failed(
    as_json: Annotated[bool, typer.Option("--json", help="full records as JSON")] = False,
) -> None:
    """Jobs in the dead-letter list: their session, error, and how many tries they had."""
    from workers.failures import DeadLetters

    failed = with_redis(lambda redis: DeadLetters(redis).all())
    if as_json:
        import orjson

        print(orjson.dumps([f.as_json() for f in failed], option=orjson.OPT_INDENT_2).decode())
        return
    table = Table("job", "person", "kind", "tries", "failed at", "error")
    for job in failed:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(job.failed_at))
        table.add_row(job.job_id, str(job.record.get("person", "?")), job.kind, str(job.tries),
                      at, job.error[:80])  # fmt: skip
    console.print(table)


@jobs_app.command("retry")
def jobs_retry(job_id: str) -> None:
    """Enqueue a failed job again (every write-path step is idempotent, so this is safe)."""
    from arq.connections import ArqRedis
    from pydantic import ValidationError

    from workers.contract import SessionJob, enqueue_session
    from workers.failures import DeadLetters

    async def retry(redis: Redis) -> str | None:
        failures = DeadLetters(redis)
        failed = next((j for j in await failures.all() if j.job_id == job_id), None)
        if failed is None:
            return None
        try:
            job = SessionJob.model_validate(failed.record)
        except ValidationError as exc:  # kept in the dead letters: replaying cannot help
            console.print(f"[red]{job_id} is not a session record: {exc.errors()[0]['msg']}[/red]")
            raise typer.Exit(2) from exc
        await failures.take(job_id)
        new_id = f"{job.session_id}:retry:{int(time.time())}"
        await enqueue_session(ArqRedis(connection_pool=redis.connection_pool), job, new_id)
        return new_id

    new_id = with_redis(retry)
    if new_id is None:
        console.print(f"[red]no failed job {job_id!r} (see `hearth jobs failed`)[/red]")
        raise typer.Exit(1)
    console.print(f"{job_id} enqueued again as {new_id}")
