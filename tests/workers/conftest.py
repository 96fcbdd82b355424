"""Write-path fixtures: a real Redis, a real arq worker, Qdrant through qdrant-client (its local
engine, in memory), the real embedder, and a scripted write-path LLM that checks its prompts."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from arq.connections import ArqRedis, create_pool
from qdrant_client import QdrantClient
from redis.asyncio import Redis

from config.settings import HearthSettings
from memory.qdrant_store import QdrantMemoryStore
from providers.embedder import UseEmbedder
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from tests.conftest import make_settings
from tests.support.scripted_llm import ScriptedLLM
from tests.support.write_llm import WriteScript
from workers.codec import job_pool
from workers.contract import REMEMBER_SESSION
from workers.gate import LLMGate
from workers.settings import QUEUE, build_worker, redis_settings

DAY = "2026-11-25"  # a Wednesday
DAY_TS = time.mktime(time.strptime(f"{DAY} 20:00:00", "%Y-%m-%d %H:%M:%S"))


@dataclass
class WriteRig:
    settings: HearthSettings
    memory: MemoryEngine
    script: WriteScript
    llm: ScriptedLLM
    redis: Redis
    redis_url: str
    arq: ArqRedis

    async def enqueue(self, record: dict[str, Any], job_id: str | None = None) -> str:
        job_id = job_id or str(record["session_id"])
        await job_pool(self.arq).enqueue_job(
            REMEMBER_SESSION, record, _job_id=job_id, _queue_name=QUEUE
        )
        return job_id

    async def run_worker(self, llm_gate: LLMGate | None = None) -> int:
        worker = build_worker(
            self.redis_url,
            settings=self.settings,
            memory=self.memory,
            burst=True,
            handle_signals=False,
            llm_gate=llm_gate,
        )
        try:
            await worker.main()
            return worker.jobs_complete
        finally:
            await worker.close()

    def merge_with(self, mode: str) -> None:
        """``write.merge`` for the next worker: ``model`` exercises mem0's merge call."""
        write = self.settings.write.model_copy(update={"merge": mode})
        self.settings = self.settings.model_copy(update={"write": write})

    def texts(self, person: str = "zhang") -> list[str]:
        return sorted(m.text for m in self.memory.store.scroll(person).memories)  # type: ignore[arg-type]


def session(
    session_id: str,
    *said: str,
    person: str = "zhang",
    speaker: str = "老张",
    source: str = "device",
    at: float = DAY_TS,
) -> dict[str, Any]:
    transcript: list[dict[str, Any]] = []
    for i, text in enumerate(said):
        transcript.append(
            {
                "role": "user",
                "text": text,
                "at": at + i * 10,
                "speaker": speaker,
                "interrupted": False,
            }
        )
        transcript.append(
            {
                "role": "assistant",
                "text": "好的，我记住了。",
                "at": at + i * 10 + 3,
                "speaker": "me",
                "interrupted": False,
            }
        )
    return {
        "session_id": session_id,
        "device_id": "aa:bb:cc:dd:ee:01",
        "client_id": "c",
        "person": person,
        "started_at": at - 60,
        "ended_at": at + 60 * len(said),
        "end_reason": "closed_by_device",
        "source": source,
        "transcript": transcript,
    }


@pytest.fixture
def qdrant_memory(embedder: UseEmbedder, tmp_path: Path) -> MemoryEngine:
    settings = make_settings(tmp_path)
    store = QdrantMemoryStore(QdrantClient(location=":memory:"), "hearth_test", embedder.dim)
    return MemoryEngine(embedder, store, ReadPath(embedder, store, settings.memory))


@pytest.fixture
async def rig(
    tmp_path: Path, redis: Redis, redis_url: str, qdrant_memory: MemoryEngine
) -> AsyncIterator[WriteRig]:
    script = WriteScript(day=DAY)
    llm = ScriptedLLM()
    llm.responder = script
    await llm.start()
    settings = make_settings(
        tmp_path,
        llm={"base_url": llm.base_url, "model": "scripted"},
        write={"retry_base_s": 0, "max_tries": 3},
    )
    arq = await create_pool(redis_settings(redis_url))
    try:
        yield WriteRig(settings, qdrant_memory, script, llm, redis, redis_url, arq)
    finally:
        await arq.aclose()
        await llm.stop()
