"""Silero VAD on real speech, fed the way the session feeds it: one decoded frame at a time."""

from __future__ import annotations

from bench.speech import recorded_samples
from providers.vad import StreamingVad, VadPool

SILENCE = b"\0" * 1920  # 60 ms


def frames(pcm: bytes, ms: int) -> list[bytes]:
    size = 32 * ms
    return [pcm[i : i + size] for i in range(0, len(pcm) - size + 1, size)]


def test_speech_scores_high_and_silence_low_for_any_frame_size() -> None:
    sample = next(s for s in recorded_samples() if s.name == "test_16k.wav")
    for ms in (20, 60, 100):
        vad = StreamingVad()
        lead = [vad.frame_probability(f) for f in frames(b"\0" * 16000, ms)]
        speech = [vad.frame_probability(f) for f in frames(sample.pcm, ms)]
        assert max(lead) < 0.2, ms
        voiced = sum(p >= 0.5 for p in speech) * ms
        assert voiced >= 600, (ms, voiced)  # the 1.5 s sentence is mostly voice


def test_pooled_instances_come_back_reset() -> None:
    pool = VadPool(keep=1)
    vad = pool.acquire()
    sample = recorded_samples()[0]
    for f in frames(sample.pcm, 60):
        vad.frame_probability(f)
    pool.release(vad)
    again = pool.acquire()
    assert again is vad
    assert again.frame_probability(SILENCE) < 0.2
