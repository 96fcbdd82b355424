"""The write model a bench talks to: ``--llm-url`` (an OpenAI-compatible server, structured output
as ``json_schema``), or the installed local model started for the run on a free loopback port
(``json_object`` + schema grammar, as ``hearth up``'s write server)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from config.settings import HearthSettings
from providers.llm import JsonLLM
from providers.processes import LocalLLMServer, free_port

if TYPE_CHECKING:
    from workers.writepath import WritePath


@contextlib.asynccontextmanager
async def write_model(
    llm_url: str | None, model: str, home: HearthSettings, settings: HearthSettings,
    scratch: Path,
) -> AsyncIterator[JsonLLM]:  # fmt: skip
    """``home``: where the installation keeps its model files; ``settings``: the run's own
    (timeouts, tokens, the local server's threads); ``scratch``: the run's folder for logs."""
    server = None
    if llm_url is None:
        weights = home.resolve(home.local_llm.model_file).resolve()
        local = settings.local_llm.model_copy(update={"port": free_port()})
        server = LocalLLMServer(local, weights, scratch)
        await server.start()
    try:
        yield JsonLLM(
            base_url=llm_url or (server.base_url if server else ""),
            model=model, api_key=os.environ.get("HEARTH_BENCH_LLM_KEY", ""),
            timeout_s=settings.write.timeout_s, max_tokens=settings.write.max_tokens,
            style="json_object" if server else "json_schema",
        )  # fmt: skip
    finally:
        if server is not None:
            server.stop()


@contextlib.asynccontextmanager
async def write_rig(
    llm_url: str | None, model: str, home: HearthSettings, prefix: str
) -> AsyncIterator[tuple[WritePath, HearthSettings]]:
    """A real write path in a scratch folder: a private Redis, the embedded store, the real
    embedder and the write model (``write_model``); everything stopped on the way out."""
    from redis.asyncio import Redis

    from config.settings import load_settings
    from providers.processes import EmbeddedRedis
    from server.memory.engine import build_memory
    from workers.writepath import WritePath

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        scratch = Path(tmp)
        settings = load_settings(data_dir=scratch)
        redis_server = EmbeddedRedis(scratch / "redis")
        await redis_server.start()
        memory = build_memory(settings)
        redis = Redis.from_url(redis_server.url)
        try:
            async with write_model(llm_url, model, home, settings, scratch) as llm:
                yield WritePath(redis, memory.embedder, memory.store, llm, settings.write), settings
        finally:
            await redis.aclose()
            memory.close()
            redis_server.stop()
