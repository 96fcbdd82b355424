"""Enrolment by voice on a device: 「记住我的声音，我是妈妈」, three sentences read after Hearth,
and the member enrolled from the audio the VAD cut — or cancelled, or refused with its reason
(real stack on loopback, real model, real recordings; the recogniser scripted, since what it
must hear is not what the recordings say)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bench.device_client import DeviceClient
from bench.voice_recordings import Speaker
from server.device.enrolment_words import SENTENCES
from server.persons import PersonMap, default_person
from server.voices.store import VoiceStore
from tests.conftest import RunningHearth, start_hearth
from tests.server.voices.conftest import pcm, real_speakers, weights_path
from tests.support.scripted_asr import ScriptedASR
from tests.support.scripted_llm import ScriptedLLM

__all__ = ["real_speakers"]  # the shared fixture, used here by name


@pytest.fixture
async def hearth_asr(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> AsyncIterator[tuple[RunningHearth, ScriptedASR]]:
    asr = ScriptedASR()
    # a pause inside a recorded sentence must not cut it in two
    vad = {"min_silence_ms": 1500, "early_asr_ms": 0}
    voices = {"weights_file": str(weights_path().resolve())}
    async with start_hearth(tmp_path, redis_url, scripted_llm.base_url, scripted_llm,
                            asr=asr, vad=vad, voices=voices) as hearth:  # fmt: skip
        yield hearth, asr


async def _say(device: DeviceClient, asr: ScriptedASR, text: str, audio: bytes) -> str:
    asr.saying = text
    result = await device.speak(audio, silence_ms=2000, within_s=60)
    assert result.stt == text
    return result.text


async def test_a_member_enrols_by_reading_three_sentences_on_the_device(
    hearth_asr: tuple[RunningHearth, ScriptedASR], redis: Redis, real_speakers: list[Speaker]
) -> None:
    hearth, asr = hearth_asr
    mum = [pcm(w) for w in real_speakers[1].enrol]
    device = hearth.device("aa:bb:cc:00:47:01")
    await device.connect()
    first = await _say(device, asr, "记住我的声音，我是妈妈。", pcm(real_speakers[1].tests[0]))
    assert "妈妈" in first and SENTENCES["zh"][0] in first
    assert SENTENCES["zh"][1] in await _say(device, asr, SENTENCES["zh"][0], mum[0])
    assert SENTENCES["zh"][2] in await _say(device, asr, SENTENCES["zh"][1], mum[1])
    assert "记住了，妈妈" in await _say(device, asr, SENTENCES["zh"][2], mum[2])
    await device.close()

    household = default_person("aa:bb:cc:00:47:01")
    [voice] = await VoiceStore(redis).voices(household)
    assert (voice.member, voice.speaker) == (f"{household}.mama", "妈妈")
    assert await PersonMap(redis).speaker_of(voice.member) == "妈妈"
    record = await hearth.ended.wait_for(device.session_id, within_s=15)
    assert record.transcript == []  # the sentences read aloud are not the household's words
    assert hearth.llm.requests == []


async def test_cancel_stops_the_enrolment_and_keeps_nothing(
    hearth_asr: tuple[RunningHearth, ScriptedASR], redis: Redis, real_speakers: list[Speaker]
) -> None:
    hearth, asr = hearth_asr
    voice = [pcm(w) for w in real_speakers[2].enrol]
    device = hearth.device("aa:bb:cc:00:47:02")
    await device.connect()
    await _say(device, asr, "Remember my voice, I'm Dad.", voice[0])
    await _say(device, asr, SENTENCES["en"][0], voice[1])
    assert "cancelled" in await _say(device, asr, "cancel", voice[2])
    await device.close()
    assert await VoiceStore(redis).voices(default_person("aa:bb:cc:00:47:02")) == []


async def test_a_sentence_read_by_someone_else_is_read_again_then_refused(
    hearth_asr: tuple[RunningHearth, ScriptedASR], redis: Redis, real_speakers: list[Speaker]
) -> None:
    hearth, asr = hearth_asr
    mum, other = [pcm(w) for w in real_speakers[1].enrol], pcm(real_speakers[3].enrol[0])
    device = hearth.device("aa:bb:cc:00:47:03")
    await device.connect()
    await _say(device, asr, "记住我的声音，我是妈妈", pcm(real_speakers[1].tests[0]))
    await _say(device, asr, SENTENCES["zh"][0], mum[0])
    await _say(device, asr, SENTENCES["zh"][1], mum[1])
    again = await _say(device, asr, SENTENCES["zh"][2], other)
    assert "第三句听起来不像同一个人读的" in again and "请再读一遍" in again
    refused = await _say(device, asr, SENTENCES["zh"][2], other)
    assert "第三句听起来不像同一个人读的" in refused and "这次没有记住你的声音" in refused
    await device.close()
    assert await VoiceStore(redis).voices(default_person("aa:bb:cc:00:47:03")) == []
