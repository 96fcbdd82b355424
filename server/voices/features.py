"""The encoder's input: a 40-band mel power spectrogram (25 ms Hann window, 10 ms hop, 16 kHz)
cut into 1.6 s partial windows, computed with numpy alone.

It reproduces what Resemblyzer computes with librosa (``melspectrogram`` with a centred,
zero-padded STFT and Slaney mel filters; not a log spectrogram) and its partial slicing (1.3
partials a second, a last partial kept when three quarters of it is audio), so that the
published weights see the input they were trained on.
"""

from __future__ import annotations

from functools import cache

import numpy as np

RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160  # 1.6 s
PARTIALS_PER_S = 1.3
MIN_COVERAGE = 0.75
TARGET_DBFS = -30.0
_INT16_MAX = 2**15 - 1


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0


def normalize_volume(wav: np.ndarray) -> np.ndarray:
    """Raise a quiet utterance to -30 dBFS (never lower a loud one), as the encoder expects."""
    rms = float(np.sqrt(np.mean((wav * _INT16_MAX) ** 2))) if wav.size else 0.0
    if rms == 0.0:
        return wav
    change = TARGET_DBFS - 20 * np.log10(rms / _INT16_MAX)
    return wav if change < 0 else (wav * 10 ** (change / 20)).astype(np.float32)


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    # Slaney: linear below 1 kHz, logarithmic above
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    logstep = np.log(6.4) / 27.0
    mels = f / f_sp
    above = f >= min_log_hz
    mels[above] = min_log_hz / f_sp + np.log(f[above] / min_log_hz) / logstep
    return mels


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    freqs = f_sp * m
    above = m >= min_log_mel
    freqs[above] = min_log_hz * np.exp(logstep * (m[above] - min_log_mel))
    return freqs


@cache
def mel_filters() -> np.ndarray:
    """(N_MELS, N_FFT // 2 + 1) Slaney-normalised triangular filters, 0 Hz to Nyquist."""
    fft_freqs = np.linspace(0, RATE / 2, N_FFT // 2 + 1)
    edges = _mel_to_hz(
        np.linspace(_hz_to_mel(np.array([0.0]))[0], _hz_to_mel(np.array([RATE / 2]))[0], N_MELS + 2)
    )
    gaps = np.diff(edges)
    ramps = edges[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / gaps[:-1, None]
    upper = ramps[2:] / gaps[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (edges[2 : N_MELS + 2] - edges[:N_MELS]))[:, None]
    return weights.astype(np.float32)


@cache
def _window() -> np.ndarray:
    n = np.arange(N_FFT)
    return (0.5 - 0.5 * np.cos(2 * np.pi * n / N_FFT)).astype(np.float32)  # periodic Hann


def mel_spectrogram(wav: np.ndarray) -> np.ndarray:
    """(frames, N_MELS) mel power spectrogram of a float waveform at 16 kHz."""
    padded = np.pad(wav.astype(np.float32), N_FFT // 2)
    n_frames = 1 + (len(padded) - N_FFT) // HOP
    frames = np.lib.stride_tricks.as_strided(
        padded, (n_frames, N_FFT), (padded.strides[0] * HOP, padded.strides[0])
    )
    power = np.abs(np.fft.rfft(frames * _window(), axis=1)) ** 2
    mel: np.ndarray = power.astype(np.float32) @ mel_filters().T
    return mel.astype(np.float32)


def partial_windows(wav: np.ndarray) -> np.ndarray:
    """(partials, PARTIAL_FRAMES, N_MELS): the utterance's 1.6 s windows (at least one)."""
    n_samples = len(wav)
    n_frames = int(np.ceil((n_samples + 1) / HOP))
    step = int(np.round((RATE / PARTIALS_PER_S) / HOP))
    starts = list(range(0, max(1, n_frames - PARTIAL_FRAMES + step + 1), step))
    last = starts[-1] * HOP
    coverage = (n_samples - last) / (PARTIAL_FRAMES * HOP)
    if coverage < MIN_COVERAGE and len(starts) > 1:
        starts.pop()
    end = (starts[-1] + PARTIAL_FRAMES) * HOP
    if end >= n_samples:
        wav = np.pad(wav, (0, end - n_samples))
    mel = mel_spectrogram(wav)
    return np.asarray(np.stack([mel[s : s + PARTIAL_FRAMES] for s in starts]), np.float32)
