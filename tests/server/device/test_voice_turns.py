"""Spoken turns through the real stack on loopback: Opus frames from a device client → Silero
VAD → faster-whisper → ``stt`` → scripted LLM → espeak TTS → Opus back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import orjson
import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed

from bench.device_client import HELLO, DeviceClient, TurnResult
from bench.speech import SpeechSample, character_error_rate, recorded_samples
from providers.errors import TransientProviderError
from server.device.session import DeviceSession
from tests.conftest import RunningHearth, start_hearth
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.waiting import wait_until

SILENCE_1S = b"\0" * 32000


@pytest.fixture(scope="module")
def speech() -> dict[str, SpeechSample]:
    return {s.name: s for s in recorded_samples()}


def counter(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def utterances(outcome: str) -> float:
    return counter("hearth_voice_utterances_total", outcome=outcome)


def session_of(hearth: RunningHearth, device: DeviceClient) -> DeviceSession:
    return next(s for s in hearth.server.sessions if s.creds.device_id == device.device_id)


async def settled(hearth: RunningHearth, device: DeviceClient) -> DeviceSession:
    """Every frame sent so far has been read by the server (ping → pong is ordered after them)
    and no transcription is still running."""
    await device.send_json({"type": "ping"})
    async with asyncio.timeout(10):
        while (message := await device.recv_json()) is None or message.get("type") != "pong":
            pass
    session = session_of(hearth, device)
    await wait_until(lambda: not session._asr_tasks, within_s=30)
    return session


async def test_spoken_turn_in_auto_mode_is_transcribed_and_answered(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    hearth.llm.responder = lambda req: Reply("这是一个水杯。")
    device = hearth.device()
    await device.connect()
    result = await device.speak(speech["16k_take_photo.wav"].pcm, mode="auto")
    await device.close()

    assert result.stt is not None
    assert character_error_rate("看看这个是什么", result.stt) <= 0.15, result.stt
    assert hearth.llm.last_user_text() == result.stt
    assert result.text == "这是一个水杯。"
    assert len(result.frames) > 5


async def test_a_spoken_turn_traces_where_its_time_went(
    hearth: RunningHearth, redis: Redis, speech: dict[str, SpeechSample]
) -> None:
    """Every stage from the person's last voiced frame to the first Opus frame, in order, as
    ms after the end of speech: what ``hearth bench latency`` splits."""
    from server.device.turn import STAGES
    from server.traces import TraceStore

    hearth.llm.responder = lambda req: Reply("这是一个水杯。")
    device = hearth.device()
    await device.connect()
    result = await device.speak(speech["16k_take_photo.wav"].pcm, mode="auto")
    await device.close()
    assert result.first_frame_at is not None

    async def timing() -> dict[str, float]:
        turns = await TraceStore(redis, 60).turns(device.session_id)
        return dict(turns[-1]["timing"]) if turns else {}

    async def traced() -> bool:
        return bool(await timing())

    await wait_until(traced, within_s=10)
    stages = await timing()
    assert set(stages) == set(STAGES), stages  # every stage
    # ASR began at the pause, before the silence wait ended; the rest in the order they happen
    assert 0 <= stages["asr_start"] <= stages["utterance_end"] <= stages["asr_done"], stages
    after = [s for s in STAGES if s not in ("utterance_end", "asr_start")]
    assert sorted(after, key=stages.__getitem__) == after, stages


async def test_asr_starts_at_a_pause_and_a_pause_inside_the_sentence_loses_nothing(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    """A 300 ms pause mid-sentence (more than ``early_asr_ms``, less than ``min_silence_ms``):
    the transcript begun there is dropped, the utterance is heard whole, and the transcript
    begun at the final pause is the one used."""
    used = counter("hearth_asr_early_total", outcome="used")
    stale = counter("hearth_asr_early_total", outcome="stale")
    hearth.llm.responder = lambda req: Reply("我是一个语音助手。")
    # 40 ms of the first sample's tail, 200 ms of silence, the second's 120 ms lead-in
    first = speech["test_16k.wav"].pcm[: 32 * 1300]
    device = hearth.device()
    await device.connect()
    result = await device.speak(first + b"\0" * (32 * 200) + speech["16k_greet.wav"].pcm)
    await device.close()
    assert result.stt is not None
    assert character_error_rate("你是什么模型你好啊", result.stt) <= 0.25, result.stt
    assert counter("hearth_asr_early_total", outcome="stale") >= stale + 1
    assert counter("hearth_asr_early_total", outcome="used") == used + 1
    assert hearth.llm.last_user_text() == result.stt


async def test_manual_mode_transcribes_nothing_until_listen_stop(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "manual"})
    # a long pause inside the press must not end the utterance
    await device.send_audio(speech["test_16k.wav"].pcm + SILENCE_1S + speech["16k_greet.wav"].pcm)
    session = await settled(hearth, device)
    assert session.voice is not None and session.voice.listener.in_speech
    assert hearth.llm.requests == []

    await device.send_json({"type": "listen", "state": "stop"})
    result = await device.collect(TurnResult())
    await device.close()
    assert result.stt is not None
    assert character_error_rate("你是什么模型你好啊", result.stt) <= 0.25, result.stt
    assert len(hearth.llm.requests) == 1


async def test_wake_word_audio_is_not_a_request(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    asr_before = counter("hearth_asr_seconds_count")
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "auto"})
    await device.send_audio(speech["16k_greet.wav"].pcm)  # the wake phrase, no pause after it
    await device.send_json({"type": "listen", "state": "detect", "text": "你好小智"})
    greeting = await device.collect(TurnResult())
    await device.send_audio(SILENCE_1S)
    await settled(hearth, device)
    await device.close()

    assert greeting.stt == hearth.settings.session.greeting
    assert [hearth.llm.last_user_text()] == [hearth.settings.session.greeting]
    assert len(hearth.llm.requests) == 1
    assert counter("hearth_asr_seconds_count") == asr_before  # the wake audio was never sent to ASR


async def test_realtime_speech_during_the_reply_barges_in(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    long_reply = "好的，我来给你讲一个很长很长的故事。" * 6
    hearth.llm.responder = lambda req: Reply(
        long_reply if hearth.llm.last_user_text() == "讲个故事" else "我看到了一个杯子。"
    )
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "realtime"})
    await device.send_json({"type": "listen", "state": "detect", "text": "讲个故事"})
    assert device.ws is not None
    async with asyncio.timeout(30):  # wait for the reply's first audio
        while not isinstance(await device.ws.recv(), bytes):
            pass
    loop = asyncio.get_running_loop()
    started = loop.time()
    talking = asyncio.create_task(  # the mic streams while we keep reading, as on a device
        device.send_audio(speech["16k_take_photo.wav"].pcm + SILENCE_1S, pace=True)
    )
    stop_after: float | None = None
    new_turn: str | None = None
    async with asyncio.timeout(30):
        while new_turn is None:
            raw = await device.ws.recv()
            if isinstance(raw, bytes):
                continue
            message = orjson.loads(raw)
            if message.get("type") == "tts" and message.get("state") == "stop" and not stop_after:
                stop_after = loop.time() - started
            if message.get("type") == "stt":
                new_turn = message["text"]
    await talking
    await device.close()

    assert stop_after is not None and stop_after < 1.5, stop_after  # ~0.3 s of voice + a frame
    assert character_error_rate("看看这个是什么", new_turn) <= 0.15, new_turn
    assert counter("hearth_voice_barge_ins_total") >= 1


async def test_exit_phrase_says_goodbye_and_ends_the_session(hearth: RunningHearth) -> None:
    device = hearth.device()
    await device.connect()
    result = await device.ask("好的，拜拜")
    assert result.text == hearth.settings.session.goodbye
    assert device.ws is not None
    with pytest.raises(ConnectionClosed) as closed:
        async with asyncio.timeout(5):
            while True:
                await device.ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
    record = await hearth.ended.wait_for(device.session_id)
    assert record.end_reason == "exit_phrase"
    assert [u.text for u in record.transcript] == ["好的，拜拜", hearth.settings.session.goodbye]
    assert len(hearth.llm.requests) == 0  # no LLM call to say goodbye


# ---- bad input --------------------------------------------------------------------------------


async def test_undecodable_packets_are_dropped_and_the_utterance_survives(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    dropped = counter("hearth_voice_frames_dropped_total", reason="undecodable")
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "auto"})
    assert device.ws is not None
    await device.ws.send(b"\xff\xff\xff")  # libopus: corrupted stream
    await device.ws.send(b"")  # empty
    result = await device.speak(speech["test_16k.wav"].pcm)
    await device.close()
    assert counter("hearth_voice_frames_dropped_total", reason="undecodable") == dropped + 2
    assert result.stt is not None and character_error_rate("你是什么模型", result.stt) <= 0.2


async def test_frames_at_another_rate_and_size_are_still_understood(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    from providers.opus import resample

    device = hearth.device()
    await device.connect()  # hello says 16 kHz / 60 ms; the device sends 24 kHz / 20 ms
    pcm_24k = resample(speech["16k_take_photo.wav"].pcm, 16000, 24000)
    result = await device.speak(pcm_24k, sample_rate=24000, frame_ms=20)
    await device.close()
    assert result.stt is not None
    assert character_error_rate("看看这个是什么", result.stt) <= 0.15, result.stt


async def test_audio_without_listen_start_is_ignored(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    dropped = counter("hearth_voice_frames_dropped_total", reason="not_listening")
    device = hearth.device()
    await device.connect()
    frames = await device.send_audio(speech["test_16k.wav"].pcm + SILENCE_1S)
    await settled(hearth, device)
    result = await device.ask("你好")  # the session still serves
    await device.close()
    assert counter("hearth_voice_frames_dropped_total", reason="not_listening") == dropped + frames
    assert result.stt == "你好"
    assert len(hearth.llm.requests) == 1


async def test_noise_makes_no_turn(hearth: RunningHearth) -> None:
    import numpy as np

    noise = np.random.default_rng(7).normal(0, 600, 48000).astype("<i2").tobytes()
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "auto"})
    await device.send_audio(noise + SILENCE_1S)
    await settled(hearth, device)
    result = await device.ask("你好")
    await device.close()
    assert result.stt == "你好"
    assert len(hearth.llm.requests) == 1


@pytest.mark.parametrize("hearth_overrides", [{"vad": {"max_utterance_s": 2.5,
                                                       "min_silence_ms": 5000}}])  # fmt: skip
async def test_a_stream_that_never_goes_silent_is_cut_and_answered(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "auto"})
    # 6+ s of talk whose pauses are far shorter than min_silence_ms: only the cap can cut it
    talk = b"".join(s.pcm for s in speech.values())
    await device.send_audio(talk)
    result = await device.collect(TurnResult())
    await device.close()
    assert result.stt  # the first 2.5 s were transcribed and answered


async def test_disconnect_mid_utterance_keeps_the_partial_transcript(
    hearth: RunningHearth, speech: dict[str, SpeechSample]
) -> None:
    device = hearth.device()
    await device.connect()
    await device.send_json({"type": "listen", "state": "start", "mode": "auto"})
    await device.send_audio(speech["16k_take_photo.wav"].pcm[: 32000 * 1])  # cut off mid-word
    await settled(hearth, device)
    await device.close()
    record = await hearth.ended.wait_for(device.session_id, within_s=30)
    [heard] = record.transcript
    assert heard.role == "user" and heard.interrupted
    assert character_error_rate("看看这个是什么", heard.text) <= 0.5, heard.text
    assert hearth.llm.requests == []


class FailingASR:
    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        self.calls += 1
        raise TransientProviderError(self.name, "engine crashed")


async def test_asr_failure_gives_a_spoken_apology_and_the_session_goes_on(
    tmp_path: Path,
    redis: Redis,
    redis_url: str,
    scripted_llm: ScriptedLLM,
    speech: dict[str, SpeechSample],
) -> None:
    asr = FailingASR()
    async with start_hearth(
        tmp_path, redis_url, scripted_llm.base_url, scripted_llm, asr=asr
    ) as hearth:
        device = hearth.device()
        await device.connect(HELLO)
        apology = await device.speak(speech["test_16k.wav"].pcm)
        typed = await device.ask("你好")
        await device.close()
    assert asr.calls == 1
    assert apology.stt is None
    assert apology.text == hearth.settings.session.asr_apology
    assert typed.stt == "你好" and typed.text
