"""Who is speaking on a device: identified beside ASR from the audio the VAD cut, the member's
person recalled for the turn and handed the words at the end; a household with no enrolled
voice is served exactly as before (real stack on loopback, real model, real recordings)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from redis.asyncio import Redis

from bench.speech import SpeechSample, recorded_samples
from bench.voice_recordings import Speaker
from server.device.conversation import Conversation
from server.device.session import SessionRecord, by_speaker
from server.persons import default_person
from server.traces import TraceStore
from server.voices.embedder import VoiceEmbedder
from server.voices.enrol import enrol
from server.voices.features import pcm16_to_float
from server.voices.store import VoiceStore
from tests.conftest import RunningHearth
from tests.server.voices.conftest import pcm, real_speakers, voice_embedder, weights_path
from tests.support.scripted_llm import Reply
from tests.support.waiting import wait_until
from workers.contract import Said

__all__ = ["real_speakers", "voice_embedder"]  # the shared fixtures, used here by name


@pytest.fixture
def hearth_overrides() -> dict[str, Any]:
    return {"voices": {"weights_file": str(weights_path().resolve())}}


@pytest.fixture(scope="module")
def speech() -> dict[str, SpeechSample]:
    return {s.name: s for s in recorded_samples()}


def _owner_sentences(speech: dict[str, SpeechSample]) -> list[bytes]:
    """Three sentences of the recorded natural voice (its four clips, two at a time)."""
    w = {name: pcm16_to_float(s.pcm) for name, s in speech.items()}
    pairs = [("16k_greet.wav", "16k_take_photo.wav"), ("16k_play_music.wav", "test_16k.wav"),
             ("16k_take_photo.wav", "16k_play_music.wav")]  # fmt: skip
    return [pcm(np.concatenate([w[a], w[b]])) for a, b in pairs]


async def _turn(hearth: RunningHearth, device_id: str, audio: bytes) -> str:
    hearth.llm.responder = lambda req: Reply("好的。")
    device = hearth.device(device_id)
    await device.connect()
    result = await device.speak(audio, mode="auto")
    await device.close()
    assert result.stt, "the utterance was heard"
    return device.session_id


async def _traced_person(redis: Redis, session_id: str) -> str:
    async def traced() -> bool:
        return bool(await TraceStore(redis, 60).turns(session_id))

    await wait_until(traced, within_s=10)
    return str((await TraceStore(redis, 60).turns(session_id))[-1]["person"])


async def test_an_enrolled_member_is_recalled_for_and_handed_their_words(
    hearth: RunningHearth,
    redis: Redis,
    voice_embedder: VoiceEmbedder,
    real_speakers: list[Speaker],
    speech: dict[str, SpeechSample],
) -> None:
    device_id = "aa:bb:cc:00:46:01"
    household = default_person(device_id)
    store = VoiceStore(redis)
    await enrol(store, voice_embedder, household, "owner", "主人", _owner_sentences(speech))
    guest = [pcm(w) for w in real_speakers[0].enrol]
    await enrol(store, voice_embedder, household, "guest", "客人", guest)

    session_id = await _turn(hearth, device_id, speech["16k_take_photo.wav"].pcm)

    assert await _traced_person(redis, session_id) == "owner"  # recall ran for the member
    record = await hearth.ended.wait_for(f"{session_id}~owner", within_s=15)
    assert record.person == "owner"
    assert [u.role for u in record.transcript] == ["user", "assistant"]
    assert session_id not in hearth.ended.records  # nothing was left for the device's person


async def test_an_unknown_voice_stays_the_devices_person(
    hearth: RunningHearth,
    redis: Redis,
    voice_embedder: VoiceEmbedder,
    real_speakers: list[Speaker],
    speech: dict[str, SpeechSample],
) -> None:
    device_id = "aa:bb:cc:00:46:02"
    household = default_person(device_id)
    guest = [pcm(w) for w in real_speakers[0].enrol]
    await enrol(VoiceStore(redis), voice_embedder, household, "guest", "客人", guest)

    session_id = await _turn(hearth, device_id, speech["16k_take_photo.wav"].pcm)

    assert await _traced_person(redis, session_id) == household
    record = await hearth.ended.wait_for(session_id, within_s=15)
    assert record.person == household
    assert all(u.person is None for u in record.transcript)
    assert not any("~" in sid for sid in hearth.ended.records)


async def test_a_household_without_voices_is_served_as_before(
    hearth: RunningHearth, redis: Redis, speech: dict[str, SpeechSample]
) -> None:
    device_id = "aa:bb:cc:00:46:03"
    session_id = await _turn(hearth, device_id, speech["16k_take_photo.wav"].pcm)
    assert await _traced_person(redis, session_id) == default_person(device_id)
    record = await hearth.ended.wait_for(session_id, within_s=15)
    assert record.person == default_person(device_id)
    assert list(hearth.ended.records) == [session_id]


def _record(transcript: list[Said]) -> SessionRecord:
    return SessionRecord("s1", "aa:bb", "c", "device-aabb", 0.0, 1.0, "normal", transcript)


def test_a_session_with_no_member_is_handed_on_as_it_is() -> None:
    record = _record(
        [Said(role="user", text="你好", at=1.0), Said(role="assistant", text="你好。", at=2.0)]
    )
    assert by_speaker(record) == [record]


def test_a_mixed_session_is_split_by_member_in_order() -> None:
    conversation = Conversation(max_turns=4)
    for who, text in (
        (None, "今天几号"),
        ("kid", "我对花生过敏"),
        ("gran", "我要吃药"),
        ("kid", "好的"),
    ):
        conversation.speaking = who
        conversation.add(Said(role="user", text=text, at=1.0))
        conversation.add(Said(role="assistant", text="嗯。", at=1.0))
    parts = by_speaker(_record(conversation.transcript))
    assert [(p.session_id, p.person) for p in parts] == [
        ("s1", "device-aabb"), ("s1~kid", "kid"), ("s1~gran", "gran")
    ]  # fmt: skip
    assert [u.text for u in parts[1].transcript] == ["我对花生过敏", "嗯。", "好的", "嗯。"]
