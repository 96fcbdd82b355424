"""The declarative arq ``WorkerSettings`` for ``hearth worker`` and the in-process worker."""

from __future__ import annotations

from typing import Any

from arq.connections import RedisSettings
from arq.worker import Worker, func

from config import keys
from config.settings import HearthSettings
from memory.engine import MemoryParts, build_core
from providers.llm import JsonLLM, StructuredLLM
from workers import mem0_stages
from workers.codec import dump, load, migrate_queued
from workers.context import KEY, WorkerContext, worker_context
from workers.contract import REMEMBER_SESSION
from workers.gate import AlwaysUp, LLMGate
from workers.jobs import cue_pending, remember_session, tag_pending
from workers.tag_requests import CUE_PENDING, TAG_PENDING
from workers.writepath import WritePath

QUEUE = keys.QUEUE
JOB_TIMEOUT_S = 1800  # extract + merge + tag on a slow local model; a killed worker's job is
# picked up again once arq's in-progress lease (this + 10 s) runs out


def build_write_llm(settings: HearthSettings, local_base_url: str | None) -> JsonLLM:
    """The write path's LLM: ``write.*`` when set, else the conversation LLM (local or not)."""
    w = settings.write
    base_url = w.base_url or settings.llm.base_url or local_base_url
    if not base_url:
        from config.settings import SettingsError

        raise SettingsError("write.base_url", "no LLM for the write path (set llm.base_url)")
    local = w.base_url is None and settings.llm.base_url is None
    model = w.model or ("local" if local else settings.llm.model)
    api_key = (w.api_key if w.base_url else settings.llm.api_key).get_secret_value()
    style = w.structured_output
    if style == "auto":
        style = "json_object" if local else "json_schema"
    return JsonLLM(
        base_url=base_url,
        model=model,
        api_key=api_key,
        timeout_s=w.timeout_s,
        max_tokens=w.max_tokens,
        style=style,
    )


def build_worker(
    redis_url: str,
    *,
    settings: HearthSettings | None = None,
    memory: MemoryParts | None = None,
    llm: StructuredLLM | None = None,
    local_llm_url: str | None = None,
    burst: bool = False,
    handle_signals: bool = True,
    llm_gate: LLMGate | None = None,
) -> Worker:
    """A worker for the ``hearth:queue``. With ``settings`` (and memory enabled) the write path
    runs; a shared ``memory`` engine is used in-process (``hearth up``: the embedded store
    allows one process), otherwise the worker builds its own."""
    max_tries = settings.write.max_tries if settings else 5

    async def startup(ctx: dict[str, Any]) -> None:
        await migrate_queued(ctx["redis"])  # jobs an older Hearth queued as pickles
        hearth = WorkerContext(
            max_tries=max_tries, budget_s=JOB_TIMEOUT_S - 30, llm_gate=llm_gate or AlwaysUp()
        )
        ctx[KEY] = hearth
        if settings is None or not settings.memory.enabled or not settings.write.enabled:
            return  # transcripts are still archived
        hearth.retry_base_s = settings.write.retry_base_s
        mem0_stages.warm()  # mem0's import takes seconds: not inside the first job
        engine = memory or build_core(settings)
        hearth.owned_memory = engine if memory is None else None
        hearth.write_path = WritePath(
            ctx["redis"],
            engine.embedder,
            engine.store,
            llm or build_write_llm(settings, local_llm_url),
            settings.write,
            settings.api.speaker_limit,
        )

    async def shutdown(ctx: dict[str, Any]) -> None:
        owned = worker_context(ctx).owned_memory
        if owned is not None:
            owned.close()

    return Worker(
        functions=[
            func(
                remember_session,
                name=REMEMBER_SESSION,
                timeout=JOB_TIMEOUT_S,
                # arq drops a job past its max_tries without running it: leave room so the job
                # itself always sees its last try and dead-letters it (workers.jobs)
                max_tries=max_tries + RESTART_SLACK,
            ),
            func(tag_pending, name=TAG_PENDING, max_tries=1, timeout=JOB_TIMEOUT_S),
            func(cue_pending, name=CUE_PENDING, max_tries=1, timeout=JOB_TIMEOUT_S),
        ],
        redis_settings=RedisSettings.from_dsn(redis_url),
        queue_name=QUEUE,
        burst=burst,
        handle_signals=handle_signals,
        keep_result=3600,
        max_jobs=4,
        poll_delay=0.1,  # arq picks up at most max_jobs per poll: 0.5 s capped us at 8 jobs/s
        on_startup=startup,
        job_serializer=dump,  # JSON, never pickle (workers.codec)
        job_deserializer=load,
        on_shutdown=shutdown,
    )


RESTART_SLACK = 3


def redis_settings(redis_url: str) -> Any:
    return RedisSettings.from_dsn(redis_url)
