"""``hearth bench contention``: does a device turn still answer quickly while a write job runs?
(Issue 19, item 6: "a turn during a write job answers within 1.3× of its quiet latency; the job
still finishes and loses nothing".)

For each setting of ``local_llm.pause_write_during_turns`` (on, off) the bench starts its own
``hearth up`` with the write path on and the installed local models, then over the real device
protocol:

1. asks ``turns`` plain typed questions on one open connection with nothing else running —
   detect → first Opus frame, the *quiet* latency (the connection stays open: a closed session
   would queue a write job of its own and the phase would not be quiet);
2. says a short household conversation on another connection and hangs up, which queues its
   write job;
3. as soon as that job is running, asks the same questions on a third open connection while it
   runs — the *during* latency (same history length as the quiet ones) — and records how many
   were asked before the job ended;
4. waits for the job and reads its outcome (it must finish: facts extracted, memories written).

Prints p50 / max per phase and the ratio, writes ``summary.json`` under ``--out/NAME``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from arq.jobs import Job, JobStatus
from redis.asyncio import Redis
from rich.table import Table

from bench.device_client import DeviceClient
from bench.e2e.hearth import running_hearth
from bench.results import Figure
from config.run_files import redis_url_file
from server.cli.common import console
from workers.codec import load

QUESTIONS = ("一加一等于几？", "讲一个很短的笑话", "天空为什么是蓝色的？", "推荐一首轻音乐",
             "一年有几个季节？", "用一句话夸夸我")  # fmt: skip
CONVERSATION = (
    "我女儿叫小橙子，今年五岁，在上幼儿园",
    "她对花生过敏，吃了会起疹子",
    "我老婆下个月要去北京出差一周",
    "我们家周六上午一般去公园散步",
)
JOB_START_S = 120.0
TURN_TIMEOUT_S = 300.0


async def _ttfa(device: DeviceClient, question: str) -> float:
    """detect → first Opus frame of one typed turn (seconds)."""
    seconds = (await device.ask(question, within_s=TURN_TIMEOUT_S)).first_audio_s
    if seconds is None:
        raise RuntimeError(f"no audio for {question!r}")
    return seconds


async def _phase(pause: bool, turns: int, folder: Path) -> dict[str, Any]:
    overrides = [f"local_llm.pause_write_during_turns={'true' if pause else 'false'}"]
    log_file = folder / f"hearth-pause-{'on' if pause else 'off'}.log"
    with tempfile.TemporaryDirectory(prefix="hearth-contention-") as tmp:
        async with running_hearth(Path(tmp), overrides, None, log_file,
                                  write_path=True) as hearth:  # fmt: skip
            await hearth.prepare("bench", None)
            quietly, meanwhile = hearth.device(), hearth.device()
            await quietly.connect()
            await _ttfa(quietly, "你好")  # the first turn after start warms caches: not counted
            quiet = [await _ttfa(quietly, q) for q in QUESTIONS[:turns]]
            session = await hearth.say(list(CONVERSATION), TURN_TIMEOUT_S)
            redis = Redis.from_url(redis_url_file(hearth.settings.data_dir).read_text().strip())
            try:
                job = Job(session, redis, _deserializer=load)
                deadline = time.monotonic() + JOB_START_S
                while await job.status() != JobStatus.in_progress:
                    if await job.status() == JobStatus.complete or time.monotonic() > deadline:
                        raise RuntimeError("the write job did not start (or ended at once)")
                    await asyncio.sleep(0.2)
                started = time.monotonic()
                during: list[float] = []
                await meanwhile.connect()
                await _ttfa(meanwhile, "你好")  # as on the quiet connection: not counted
                for q in QUESTIONS[:turns]:
                    if await job.status() == JobStatus.complete:
                        break
                    during.append(await _ttfa(meanwhile, q))
                deadline = time.monotonic() + 1800
                while await job.status() not in (JobStatus.complete, JobStatus.not_found):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the write job did not finish in 30 min")
                    await asyncio.sleep(0.5)
                job_s = time.monotonic() - started
                info = await job.result_info()
                outcome = info.result if info is not None else "finished (result not kept)"
            finally:
                await redis.aclose()
                await quietly.close()
                await meanwhile.close()
    return {"pause": pause, "quiet_s": quiet, "during_s": during, "job_seconds": round(job_s, 1),
            "job_outcome": outcome}  # fmt: skip


def _p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


async def main(turns: int, out: Path, name: str) -> dict[str, Any]:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    phases = [await _phase(pause, turns, folder) for pause in (True, False)]
    table = Table(title="hearth bench contention — detect → first audio, plain typed turns")
    for column in ("pause_write_during_turns", "quiet p50", "during job p50", "during max",
                   "ratio p50", "turns during", "job s", "job outcome"):  # fmt: skip
        table.add_column(column)
    for p in phases:
        quiet, during = _p50(p["quiet_s"]), _p50(p["during_s"])
        p["quiet_p50"], p["during_p50"] = quiet, during
        p["ratio"] = round(during / quiet, 2) if quiet and during else None
        outcome = p["job_outcome"] if isinstance(p["job_outcome"], dict) else {}
        kept = f"facts={outcome.get('facts')} added={len(outcome.get('added') or [])}"
        table.add_row("on" if p["pause"] else "off", f"{quiet} s", f"{during} s",
                      f"{max(p['during_s'], default=0):.2f} s", str(p["ratio"]),
                      str(len(p["during_s"])), str(p["job_seconds"]),
                      kept)  # fmt: skip
    console.print(table)
    summary = {"turns": turns, "phases": phases, "date": time.strftime("%Y-%m-%d %H:%M")}
    (folder / "summary.json").write_bytes(
        orjson.dumps(summary, option=orjson.OPT_INDENT_2, default=str)
    )
    console.print(f"written: {folder / 'summary.json'}")
    return summary


def figures(summary: dict[str, Any]) -> list[Figure]:
    """The results table's row (bench.results): a turn during a write job against a quiet one,
    the write model paused during turns and not."""
    paused = next((p for p in summary["phases"] if p["pause"]), None)
    running = next((p for p in summary["phases"] if not p["pause"]), None)
    if paused is None or running is None or paused["ratio"] is None:
        return []
    without = "-" if running["ratio"] is None else f"{running['ratio']:.2f}×"
    return [
        Figure(
            "a turn's first audio during a write job vs quiet, p50",
            f"{paused['ratio']:.2f}× ({paused['during_p50']:.2f} s vs {paused['quiet_p50']:.2f} s)"
            f" with the write model paused; {without} without",
        )
    ]
