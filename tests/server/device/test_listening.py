"""The sans-I/O Listener with scripted voice probabilities: no audio, no model, no clock."""

from __future__ import annotations

import pytest

from config.settings import VadSettings, load_settings
from server.device.listening import (
    BYTES_PER_MS,
    EndReason,
    Listener,
    ListenerEvent,
    SpeechPaused,
    SpeechStarted,
    UtteranceEnded,
)

FRAME_MS = 60


def settings(**changes: object) -> VadSettings:
    return load_settings().vad.model_copy(update=changes)


def frame(marker: int) -> bytes:
    """60 ms of 'audio' whose bytes say which frame it was."""
    return bytes([marker % 256]) * (FRAME_MS * BYTES_PER_MS)


def feed(listener: Listener, probabilities: list[float], start: int = 0) -> list[ListenerEvent]:
    events: list[ListenerEvent] = []
    for n, p in enumerate(probabilities, start):
        events += listener.feed(frame(n), p, now=n * FRAME_MS / 1000)
    return events


def utterances(events: list[ListenerEvent]) -> list[UtteranceEnded]:
    return [e for e in events if isinstance(e, UtteranceEnded)]


def test_auto_mode_cuts_after_the_silence_and_keeps_the_pre_roll() -> None:
    listener = Listener(settings(min_silence_ms=300, pre_roll_ms=120, min_speech_ms=100))
    listener.start("auto")
    # 5 silent frames, 6 voiced, then silence until the cut (300 ms = 5 frames)
    events = feed(listener, [0.0] * 5 + [0.9] * 6 + [0.0] * 8)
    [utterance] = utterances(events)
    assert utterance.reason is EndReason.SILENCE
    assert utterance.voiced_ms == 6 * FRAME_MS
    # pre-roll: the 2 frames (120 ms) before the onset, i.e. frames 3 and 4, then 5..10 voiced,
    # then 5 silent frames up to the cut
    first_bytes = [utterance.pcm[i * FRAME_MS * BYTES_PER_MS] for i in range(13)]
    assert first_bytes == list(range(3, 16))
    assert utterance.speech_ended_at == pytest.approx(10 * FRAME_MS / 1000)


def test_a_short_burst_makes_no_utterance() -> None:
    listener = Listener(settings(min_speech_ms=180, min_silence_ms=300))
    listener.start("auto")
    events = feed(listener, [0.9, 0.9] + [0.0] * 10)  # a 120 ms cough
    assert events == []


def test_hysteresis_keeps_a_soft_syllable_inside_the_utterance() -> None:
    listener = Listener(settings(threshold=0.5, min_silence_ms=180, min_speech_ms=60))
    listener.start("auto")
    # 0.4 is below the threshold but above threshold-0.15: not silence, the count does not grow
    events = feed(listener, [0.9, 0.0, 0.0, 0.4, 0.4, 0.4, 0.9] + [0.0] * 3)
    [utterance] = utterances(events)
    assert utterance.voiced_ms == 2 * FRAME_MS
    assert len(utterance.pcm) == 10 * FRAME_MS * BYTES_PER_MS


def test_a_stream_that_never_goes_silent_is_cut_at_the_cap() -> None:
    listener = Listener(settings(max_utterance_s=3))
    listener.start("auto")
    events = feed(listener, [0.9] * 120)  # 7.2 s of voice
    cut = utterances(events)
    assert [u.reason for u in cut] == [EndReason.MAX_LENGTH, EndReason.MAX_LENGTH]
    assert all(u.duration_s == pytest.approx(3.0) for u in cut)


def test_manual_mode_waits_for_listen_stop_whatever_the_silences() -> None:
    listener = Listener(settings(min_silence_ms=120))
    listener.start("manual")
    events = feed(listener, [0.9] * 5 + [0.0] * 20 + [0.9] * 5)
    assert utterances(events) == []
    [utterance] = utterances(listener.stop(now=2.0))
    assert utterance.reason is EndReason.LISTEN_STOP
    assert utterance.duration_s == pytest.approx(30 * FRAME_MS / 1000)
    assert not listener.listening


def test_manual_press_without_voice_makes_no_utterance() -> None:
    listener = Listener(settings())
    listener.start("manual")
    feed(listener, [0.05] * 30)
    assert listener.stop(now=2.0) == []


def test_wake_word_audio_is_discarded_and_its_tail_suppressed() -> None:
    listener = Listener(settings(wake_suppress_ms=240, min_silence_ms=180, min_speech_ms=60))
    listener.start("auto")
    assert utterances(feed(listener, [0.9] * 8)) == []  # 「你好小智」 arriving before the detect
    listener.detected(wake_word=True)
    # the first 4 frames after the detect are the phrase's tail: ignored even though voiced
    events = feed(listener, [0.9] * 4 + [0.0] * 2 + [0.9] * 3 + [0.0] * 3, start=100)
    [utterance] = utterances(events)
    assert utterance.voiced_ms == 3 * FRAME_MS
    assert utterance.pcm[0] != 100 % 256  # nothing from before the suppression ended


def test_typed_text_discards_buffered_audio_without_suppressing_what_follows() -> None:
    listener = Listener(settings(wake_suppress_ms=600, min_silence_ms=180, min_speech_ms=60))
    listener.start("auto")
    feed(listener, [0.9] * 8)
    listener.detected(wake_word=False)
    [utterance] = utterances(feed(listener, [0.9] * 3 + [0.0] * 3, start=100))
    assert utterance.voiced_ms == 3 * FRAME_MS


def test_speech_started_fires_once_after_the_barge_in_time() -> None:
    listener = Listener(settings(barge_in_ms=180))
    listener.start("realtime")
    events = feed(listener, [0.9] * 10)
    started = [e for e in events if isinstance(e, SpeechStarted)]
    assert len(started) == 1
    assert started[0].at == pytest.approx(2 * FRAME_MS / 1000)  # the third voiced frame


def test_disconnect_mid_utterance_flushes_the_partial_speech() -> None:
    listener = Listener(settings())
    listener.start("auto")
    feed(listener, [0.9] * 10)
    [utterance] = utterances(listener.flush(now=1.0))
    assert utterance.reason is EndReason.DISCONNECT
    assert listener.flush(now=1.1) == []


def test_audio_outside_listening_is_ignored() -> None:
    listener = Listener(settings())
    assert feed(listener, [0.9] * 50) == []
    listener.start("auto")
    listener.stop(now=0.0)
    assert feed(listener, [0.9] * 50) == []


# ---- a pause: ASR may start early ---------------------------------------------------------------


def pauses(events: list[ListenerEvent]) -> list[SpeechPaused]:
    return [e for e in events if isinstance(e, SpeechPaused)]


def test_a_pause_offers_the_audio_so_far_once_before_the_utterance_ends() -> None:
    listener = Listener(settings(min_silence_ms=480, early_asr_ms=180, min_speech_ms=100))
    listener.start("auto")
    events = feed(listener, [0.9] * 6 + [0.0] * 8)  # 360 ms of voice, then 480 ms of silence
    [pause] = pauses(events)
    [utterance] = utterances(events)
    assert events.index(pause) < events.index(utterance)
    assert pause.voiced_ms == utterance.voiced_ms == 6 * FRAME_MS
    # the paused audio is the utterance's prefix: voice and the pause's first 180 ms (3 frames)
    assert len(pause.pcm) == 9 * FRAME_MS * BYTES_PER_MS and pause.silence_ms == 180
    assert utterance.pcm.startswith(pause.pcm)
    # padded to the wait, it is as long as the utterance the listener then cuts
    assert len(pause.as_ended(480)) == len(utterance.pcm)


def test_speech_after_a_pause_makes_a_new_pause_with_more_voice() -> None:
    listener = Listener(settings(min_silence_ms=480, early_asr_ms=180, min_speech_ms=100))
    listener.start("auto")
    # a 240 ms pause inside the sentence, then more voice, then the end
    events = feed(listener, [0.9] * 4 + [0.0] * 4 + [0.9] * 3 + [0.0] * 8)
    first, last = pauses(events)
    [utterance] = utterances(events)
    assert first.voiced_ms == 4 * FRAME_MS and last.voiced_ms == utterance.voiced_ms == 7 * FRAME_MS
    assert utterance.pcm.startswith(last.pcm) and len(last.pcm) > len(first.pcm)


def test_no_pause_for_a_cough_in_push_to_talk_or_when_switched_off() -> None:
    cough = Listener(settings(min_speech_ms=180, min_silence_ms=480, early_asr_ms=120))
    cough.start("auto")
    assert pauses(feed(cough, [0.9, 0.9] + [0.0] * 10)) == []  # 120 ms of voice: no utterance
    off = Listener(settings(min_speech_ms=100, min_silence_ms=480, early_asr_ms=0))
    off.start("auto")
    events = feed(off, [0.9] * 6 + [0.0] * 8)
    assert pauses(events) == [] and len(utterances(events)) == 1
    manual = Listener(settings(min_speech_ms=100, early_asr_ms=120))
    manual.start("manual")
    assert pauses(feed(manual, [0.9] * 6 + [0.0] * 20)) == []
