"""A real `hearth worker` process killed mid-job: the re-delivered job stores nothing twice and
repeats no LLM call it had already made."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from arq.connections import create_pool
from redis.asyncio import Redis

from memory.schema import MemoryClass, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from tests.support.scripted_llm import ScriptedLLM
from tests.support.waiting import wait_until
from tests.support.write_llm import WriteScript
from tests.workers.conftest import session
from workers.codec import job_pool
from workers.contract import REMEMBER_SESSION
from workers.settings import QUEUE, redis_settings

HEARTH = Path(sys.executable).with_name("hearth")


async def start_worker(
    data_dir: Path, redis_url: str, llm: ScriptedLLM
) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "HEARTH_DATA_DIR": str(data_dir),
        "HEARTH_REDIS__URL": redis_url,
        "HEARTH_LLM__BASE_URL": llm.base_url,
        "HEARTH_LLM__MODEL": "scripted",
        "HEARTH_WRITE__RETRY_BASE_S": "0",
        "HEARTH_LOG_LEVEL": "warning",
    }
    return await asyncio.create_subprocess_exec(str(HEARTH), "worker", cwd=data_dir, env=env)


async def test_killed_worker_rerun_stores_nothing_twice(
    tmp_path: Path, redis: Redis, redis_url: str, embedder: UseEmbedder
) -> None:
    script = WriteScript()
    script.facts = {"我老婆对海鲜过敏": ["我老婆对海鲜过敏，尤其是虾"]}
    script.tags = {"我老婆对海鲜过敏，尤其是虾": ("safety", "volume", None, "老婆")}
    script.hang_tagging = asyncio.Event()
    llm = ScriptedLLM()
    llm.responder = script
    await llm.start()
    arq = await create_pool(redis_settings(redis_url))
    try:
        record = session("s-crash", "我老婆对海鲜过敏，尤其是虾")
        record["ended_at"] = None  # "now": the scripted prompts need no fixed date here
        await job_pool(arq).enqueue_job(
            REMEMBER_SESSION, record, _job_id="s-crash", _queue_name=QUEUE
        )
        first = await start_worker(tmp_path, redis_url, llm)
        await wait_until(lambda: "tag" in script.calls, within_s=90)  # applied, tagging in flight
        first.send_signal(signal.SIGKILL)
        await asyncio.wait_for(first.wait(), 10)
        hung, script.hang_tagging = script.hang_tagging, None
        hung.set()
        # what the leases running out does (arq's after the job timeout, ours after 30 s)
        await redis.delete("arq:in-progress:s-crash", "hearth:lock:person:zhang")
        second = await start_worker(tmp_path, redis_url, llm)
        try:

            async def finished() -> bool:
                return bool(await redis.exists("arq:result:s-crash"))

            for _ in range(900):
                if await finished():
                    break
                await asyncio.sleep(0.1)
            assert await finished(), "the re-delivered job never finished"
        finally:
            second.send_signal(signal.SIGTERM)
            await asyncio.wait_for(second.wait(), 30)
    finally:
        await arq.aclose()
        await llm.stop()
    assert script.problems == []
    # no stage ran twice but the cut one; the constraint then gets its cues, once
    assert script.calls == ["extract", "tag", "tag", "cue"]
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    try:
        memories = store.scroll(PersonId("zhang")).memories
    finally:
        store.close()
    assert [m.text for m in memories] == ["我老婆对海鲜过敏，尤其是虾"]
    assert memories[0].cls is MemoryClass.SAFETY and not memories[0].tags_pending
