"""The pacer as pure arithmetic: time is passed in."""

from __future__ import annotations

import itertools

from server.device.pacing import AudioPacer


def simulate(pacer: AudioPacer, frames: int) -> list[float]:
    now, sent = 0.0, []
    for _ in range(frames):
        now += pacer.delay_before_next(now)
        sent.append(now)
        pacer.frame_sent(now)
    return sent


def test_head_start_then_real_time() -> None:
    sent = simulate(AudioPacer(60, 5, 0, batch=1), 20)
    assert sent[:5] == [0.0] * 5
    gaps = [b - a for a, b in itertools.pairwise(sent[5:])]
    assert all(abs(g - 0.06) < 1e-9 for g in gaps)


def test_batched_refill_keeps_the_buffer_between_3_and_5_frames() -> None:
    pacer = AudioPacer(60, 5, 0, batch=2)
    now = 0.0
    for _ in range(200):
        now += pacer.delay_before_next(now)
        buffered = pacer.delay_until_played(now)
        assert buffered >= 3 * 0.06 - 1e-9 or now == 0.0
        pacer.frame_sent(now)
        assert pacer.delay_until_played(now) <= 6 * 0.06 + 1e-9
    # 200 frames last 12 s; sending them took ~12 s minus the head start: real time overall
    assert 11.5 < now < 12.0


def test_underrun_rebuilds_the_head_start() -> None:
    pacer = AudioPacer(60, 5, 0)
    pacer.frame_sent(0.0)
    # TTS stalled for a second: the device ran dry, so frames flow at once again
    assert pacer.delay_before_next(1.0) == 0.0


def test_tts_stop_waits_for_playback_plus_tail() -> None:
    pacer = AudioPacer(60, 5, 120)
    for _ in range(5):
        pacer.frame_sent(0.0)
    assert abs(pacer.delay_until_played(0.0) - (0.3 + 0.12)) < 1e-9
