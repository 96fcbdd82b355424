"""The declarative arq ``WorkerSettings`` for ``hearth worker`` and the in-process worker."""

from __future__ import annotations

from typing import Any

from arq.connections import RedisSettings
from arq.worker import Worker, func

from workers.jobs import remember_session

QUEUE = "hearth:queue"
FUNCTIONS = [func(remember_session, name="remember_session", max_tries=5, timeout=300)]


def build_worker(redis_url: str, *, burst: bool = False, handle_signals: bool = True) -> Worker:
    return Worker(
        functions=FUNCTIONS,
        redis_settings=RedisSettings.from_dsn(redis_url),
        queue_name=QUEUE,
        burst=burst,
        handle_signals=handle_signals,
        keep_result=3600,
        max_jobs=4,
    )


def redis_settings(redis_url: str) -> Any:
    return RedisSettings.from_dsn(redis_url)
