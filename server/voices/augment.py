"""Enrolment copies of a voice as the device may hear it later: across the room and in noise.

A voiceprint made only from clean enrolment sentences scores a far, reverberant utterance of the
same person far below a near utterance of somebody else. Enrolment therefore also embeds each
sentence through a simulated room (low-passed, with a reverberant tail) and with background
noise, and keeps one voiceprint per condition; identification takes a member's best.
Deterministic (seeded): the same sentences always give the same voiceprints.
"""

from __future__ import annotations

import numpy as np

RATE = 16000
CONDITIONS = ("near", "room", "noisy")


def _one_pole_lowpass(wav: np.ndarray, cutoff_hz: float) -> np.ndarray:
    # y[n] = y[n-1] + a (x[n] - y[n-1]) as a convolution with its (truncated) impulse response
    a = 1 - np.exp(-2 * np.pi * cutoff_hz / RATE)
    response = a * (1 - a) ** np.arange(64, dtype=np.float32)
    return np.convolve(wav, response, mode="full")[: len(wav)].astype(np.float32)


def room(wav: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Low-passed at 3 kHz, with a reverberant tail (RT60 0.5 s) as loud as the direct sound."""
    dry = _one_pole_lowpass(wav, 3000.0)
    n = int(0.5 * RATE)
    tail = rng.standard_normal(n).astype(np.float32) * np.exp(-6.9 * np.arange(n) / n)
    tail *= np.sqrt(1.0 / float(np.sum(tail[1:] ** 2)))
    tail[0] = 1.0
    wet = np.convolve(dry, tail)[: len(wav)]
    return (wet / max(float(np.max(np.abs(wet))), 1e-9) * 0.5).astype(np.float32)


def noisy(wav: np.ndarray, rng: np.random.Generator, snr_db: float = 15.0) -> np.ndarray:
    """White noise at ``snr_db`` below the speech."""
    noise = rng.standard_normal(len(wav)).astype(np.float32)
    power = float(np.mean(wav**2)) or 1e-9
    noise *= np.sqrt(power / 10 ** (snr_db / 10))
    return (wav + noise).astype(np.float32)


def conditions(wav: np.ndarray, seed: int = 0) -> dict[str, np.ndarray]:
    """The sentence as heard near the device, across the room, and in noise."""
    rng = np.random.default_rng(seed)
    return {"near": wav, "room": room(wav, rng), "noisy": noisy(wav, rng)}
