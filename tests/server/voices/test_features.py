"""The encoder's input computed with numpy: Slaney mel bands and 1.6 s partial windows."""

from __future__ import annotations

import numpy as np

from server.voices.features import (
    N_MELS,
    PARTIAL_FRAMES,
    RATE,
    mel_filters,
    mel_spectrogram,
    normalize_volume,
    partial_windows,
)


def test_mel_bands_cover_the_spectrum_in_rising_order() -> None:
    filters = mel_filters()
    assert filters.shape == (N_MELS, 201)
    assert (filters >= 0).all()
    peaks = filters.argmax(axis=1)
    assert (np.diff(peaks) >= 0).all() and peaks[-1] > peaks[0]


def test_a_tone_lands_in_the_band_of_its_frequency() -> None:
    t = np.arange(RATE) / RATE
    for hz in (300.0, 1000.0, 4000.0):
        mel = mel_spectrogram(np.sin(2 * np.pi * hz * t).astype(np.float32))
        band = int(mel.mean(axis=0).argmax())
        assert mel_filters()[band, round(hz / (RATE / 400))] > 0


def test_three_seconds_make_three_partial_windows_and_short_audio_one() -> None:
    assert partial_windows(np.zeros(3 * RATE, np.float32)).shape == (3, PARTIAL_FRAMES, N_MELS)
    assert partial_windows(np.zeros(RATE // 2, np.float32)).shape == (1, PARTIAL_FRAMES, N_MELS)


def test_quiet_speech_is_raised_and_loud_speech_left_alone() -> None:
    quiet = np.full(1000, 0.001, np.float32)
    loud = np.full(1000, 0.5, np.float32)
    assert float(np.abs(normalize_volume(quiet)).max()) > 0.01
    np.testing.assert_array_equal(normalize_volume(loud), loud)
