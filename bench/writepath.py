"""``hearth bench writepath``: the write path's own cost, and its LLM cost and quality.

Part 1 — an instant in-process LLM (answers extraction, merge and tagging in microseconds), a
real arq worker, a private Redis, the embedded store and the real embedder: jobs per second per
worker, time per job (which then excludes the LLM), and LLM calls per session for sessions with
1, 3 and 6 facts. Part 2 (``--local``) — the real local model: seconds per typical 6-turn Chinese
session, and tagging accuracy on a labelled set (``bench/data/tagging_labels.jsonl``).
"""

from __future__ import annotations

import ast
import asyncio
import datetime as dt
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from arq.connections import create_pool
from arq.jobs import Job
from rich.console import Console
from rich.table import Table

from bench.corpus import unique_items
from bench.device import pct
from bench.results import Figure
from config.settings import HearthSettings, load_settings
from memory.schema import PersonId
from providers.llm import JsonLLM, Message
from providers.processes import EmbeddedRedis, LocalLLMServer, free_port
from server.memory.engine import build_memory
from workers import tagging
from workers.codec import job_pool, load
from workers.contract import REMEMBER_SESSION
from workers.settings import QUEUE, build_worker, redis_settings
from workers.writepath import WritePath

console = Console()
DAY = dt.date(2026, 11, 25)


class InstantWriteLLM:
    """Extraction: every user line is a fact. Merge: every fact is an ADD. Tagging: every
    memory is a fact about 我. Counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], name: str
    ) -> str:
        self.calls += 1
        text = "\n".join(str(m["content"]) for m in messages)
        if name == "facts":
            return orjson.dumps({"facts": re.findall(r"^用户：(.+)$", text, re.M)}).decode()
        if name == "merge":
            facts = ast.literal_eval(re.findall(r"```\s*(\[.*?\])\s*```", text, re.S)[-1])
            ops = [{"id": str(i), "text": f, "event": "ADD"} for i, f in enumerate(facts)]
            return orjson.dumps({"memory": ops}).decode()
        listed = re.findall(r"^- (.+)$", text.split("记忆：", 1)[-1], re.M)
        items = [
            {"text": t, "cls": "fact", "decay": "volume", "expires_at": None, "subject": "我"}
            for t in listed
        ]
        return orjson.dumps({"items": items}).decode()


def record(session_id: str, person: str, said: list[str], at: float) -> dict[str, Any]:
    transcript: list[dict[str, Any]] = []
    for i, text in enumerate(said):
        transcript += [
            {"role": "user", "text": text, "at": at + i, "speaker": person},
            {"role": "assistant", "text": "好的。", "at": at + i + 0.5, "speaker": "me"},
        ]
    return {
        "session_id": session_id,
        "person": person,
        "device_id": "bench",
        "source": "device",
        "ended_at": at + 60,
        "transcript": transcript,
    }


async def instant(settings: HearthSettings, sessions: int) -> dict[str, Any]:
    texts = [str(i.memory["text"]) for i in unique_items(sessions * 3 + 100, seed=5)]
    redis_server = EmbeddedRedis(settings.data_dir / "redis")
    await redis_server.start()
    memory = build_memory(settings)
    llm = InstantWriteLLM()
    arq = await create_pool(redis_settings(redis_server.url))
    try:
        now = time.time()
        for n in range(sessions):  # typical: 3 facts per session, 10 persons
            said = texts[n * 3 : n * 3 + 3]
            await job_pool(arq).enqueue_job(
                REMEMBER_SESSION,
                record(f"b{n}", f"p{n % 10}", said, now),
                _job_id=f"b{n}",
                _queue_name=QUEUE,
            )
        worker = build_worker(
            redis_server.url,
            settings=settings,
            memory=memory,
            llm=llm,
            burst=True,
            handle_signals=False,
        )
        began = time.perf_counter()
        await worker.main()
        wall = time.perf_counter() - began
        await worker.close()
        durations = []
        for n in range(sessions):
            info = await Job(f"b{n}", arq, _queue_name=QUEUE, _deserializer=load).result_info()
            assert info is not None and info.success, f"job b{n} failed: {info}"
            durations.append((info.finish_time - info.start_time).total_seconds() * 1000)
        per_facts = {}
        write_path = WritePath(arq, memory.embedder, memory.store, llm, settings.write)
        alone = []
        for n in range(50):  # one job at a time: no queueing behind other jobs
            said = texts[sessions * 3 + n % 30 : sessions * 3 + n % 30 + 3]
            began = time.perf_counter()
            await write_path.remember(record(f"a{n}", f"q{n}", said, now))
            alone.append((time.perf_counter() - began) * 1000)
        for facts in (1, 3, 6):
            before = llm.calls
            said = texts[-100 + facts * 10 : -100 + facts * 10 + facts]
            await write_path.remember(record(f"f{facts}", "solo", said, now))
            per_facts[facts] = llm.calls - before
        return {
            "sessions": sessions,
            "wall": wall,
            "p50": pct(durations, 0.5),
            "p99": pct(durations, 0.99),
            "alone50": pct(alone, 0.5),
            "alone99": pct(alone, 0.99),
            "calls": per_facts,
        }
    finally:
        await arq.aclose()
        memory.close()
        redis_server.stop()


SESSIONS = [
    [
        "我老婆对海鲜过敏，尤其是虾",
        "她一吃虾就起疹子",
        "下周三我们结婚十周年",
        "我想订个餐厅",
        "她喜欢安静一点的地方",
        "最好离西湖近一点",
    ],
    [
        "我女儿叫小橙子",
        "她今年六岁了",
        "每周六上午上钢琴课",
        "她对花生过敏",
        "最近在学游泳",
        "她最喜欢的颜色是粉色",
    ],
    [
        "我爸每天早上吃降压药",
        "他有高血压好几年了",
        "他爱听京剧",
        "明天下午他要去医院复查",
        "我想提醒他带病历",
        "他不太会用手机",
    ],
]


async def local(settings: HearthSettings, folder: Path, model: Path) -> dict[str, Any]:
    server = LocalLLMServer(
        settings.local_llm.model_copy(update={"port": free_port()}), model, folder
    )
    await server.start()
    redis_server = EmbeddedRedis(folder / "redis-local")
    await redis_server.start()
    memory = build_memory(settings.model_copy(update={"data_dir": folder / "local"}))
    llm = JsonLLM(
        base_url=server.base_url,
        model="local",
        api_key="",
        timeout_s=settings.write.timeout_s,
        max_tokens=settings.write.max_tokens,
        style="json_object",
    )
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_server.url)
    try:
        write_path = WritePath(redis, memory.embedder, memory.store, llm, settings.write)
        at = dt.datetime.combine(DAY, dt.time(20)).timestamp()
        seconds, stored = [], []
        for n, said in enumerate(SESSIONS):
            began = time.perf_counter()
            outcome = await write_path.remember(record(f"l{n}", "family", said, at))
            seconds.append(time.perf_counter() - began)
            stored.append((outcome.facts, len(outcome.added), outcome.llm_calls))
            console.print(f"session {n + 1}: {seconds[-1]:.1f} s, {outcome.facts} facts")
        for m in memory.store.scroll(PersonId("family")).memories:
            console.print(f"  stored: {m.text} | {m.cls.value} {m.decay.value} {m.subject}")
        labels_file = Path(__file__).with_name("data") / "tagging_labels.jsonl"
        labels = [orjson.loads(line) for line in labels_file.read_text().splitlines() if line]
        hits = {"cls": 0, "decay": 0, "expires_at": 0, "subject": 0, "all": 0, "aligned": 0}
        for start in range(0, len(labels), 4):  # a job touches a few memories at a time
            batch = labels[start : start + 4]
            got = await tagging.tag(llm, [b["text"] for b in batch], DAY)
            for label in batch:
                tags = got[label["text"]]
                if tags is None:
                    continue
                hits["aligned"] += 1
                expiry = (
                    dt.datetime.fromtimestamp(tags.expires_at).date().isoformat()
                    if tags.expires_at
                    else None
                )
                checks = {
                    "cls": tags.cls.value == label["cls"],
                    "decay": tags.decay.value == label["decay"],
                    "expires_at": expiry == label["expires_at"],
                    "subject": (tags.subject or "") == label["subject"],
                }
                for key, ok in checks.items():
                    hits[key] += ok
                hits["all"] += all(checks.values())
        return {"seconds": seconds, "stored": stored, "hits": hits, "labels": len(labels)}
    finally:
        await redis.aclose()
        memory.close()
        redis_server.stop()
        server.stop()


def main(sessions: int, with_local: bool) -> list[Figure]:
    """Print the figures; return the results table's row (the instant-LLM throughput)."""
    found: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="hearth-bench-write-") as tmp:
        folder = Path(tmp)
        settings = load_settings(data_dir=folder)
        if sessions:
            result = asyncio.run(instant(settings, sessions))
            _print_instant(result)
            found = figures(result)
        if not with_local:
            return found
        home = load_settings()  # the installed model lives under the real data_dir
        model = home.resolve(home.local_llm.model_file).resolve()
        _print_local(asyncio.run(local(settings, folder, model)))
    return found


def figures(result: dict[str, Any]) -> list[Figure]:
    """The results table's row (bench.results): write jobs per second per worker on the instant
    LLM, and the LLM calls a session takes."""
    calls = sorted(set(result["calls"].values()))
    said = " to ".join(str(c) for c in calls[:: max(len(calls) - 1, 1)])
    return [Figure(
        "write jobs per second per worker (instant LLM)",
        f"{result['sessions'] / result['wall']:.1f}; {said} LLM calls per session",
    )]  # fmt: skip


def _print_instant(result: dict[str, Any]) -> None:
    table = Table("figure", "value", title="write path, instant LLM (1 worker, max_jobs 4)")
    table.add_row("sessions (3 facts each, 10 persons)", str(result["sessions"]))
    table.add_row("jobs per second per worker", f"{result['sessions'] / result['wall']:.1f}")
    table.add_row(
        "one job alone p50 / p99 (ms, LLM excluded)",
        f"{result['alone50']:.1f} / {result['alone99']:.1f}",
    )
    table.add_row(
        "job under load (4 at once) p50 / p99 (ms)",
        f"{result['p50']:.1f} / {result['p99']:.1f}",
    )
    for facts, calls in result["calls"].items():
        table.add_row(f"LLM calls for a session with {facts} facts", str(calls))
    console.print(table)


def _print_local(found: dict[str, Any]) -> None:
    table = Table("figure", "value", title="write path, local Qwen2.5-1.5B (llama.cpp, 2 threads)")
    for n, (secs, (facts, added, calls)) in enumerate(
        zip(found["seconds"], found["stored"], strict=True)
    ):
        table.add_row(
            f"6-turn session {n + 1}: seconds",
            f"{secs:.1f} ({facts} facts, {added} added, {calls} LLM calls)",
        )
    table.add_row("seconds per session (mean)", f"{sum(found['seconds']) / 3:.1f}")
    total = found["labels"]
    for key in ("aligned", "cls", "decay", "expires_at", "subject", "all"):
        table.add_row(f"tagging {key}", f"{found['hits'][key]}/{total}")
    console.print(table)
