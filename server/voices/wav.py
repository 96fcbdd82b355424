"""Enrolment sentences from WAV files (CLI, console upload): 16-bit PCM, any rate, mono or
stereo, to the 16 kHz mono the encoder takes."""

from __future__ import annotations

import io
import wave

import numpy as np

from providers.opus import resample

RATE = 16000


class NotAWav(ValueError):
    """The bytes are not a 16-bit PCM WAV file."""


def wav_to_pcm16k(data: bytes) -> bytes:
    try:
        with wave.open(io.BytesIO(data)) as w:
            if w.getsampwidth() != 2:
                raise NotAWav("expected 16-bit PCM samples")
            raw, channels, rate = w.readframes(w.getnframes()), w.getnchannels(), w.getframerate()
    except (wave.Error, EOFError) as exc:
        raise NotAWav(f"not a WAV file: {exc}") from exc
    if channels > 1:
        frames = np.frombuffer(raw, "<i2").reshape(-1, channels)
        raw = frames.mean(axis=1).astype("<i2").tobytes()
    return resample(raw, rate, RATE)
