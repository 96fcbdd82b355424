"""Opus codec (opuslib-next-bundled ships libopus) and the PCM helpers around it."""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import opuslib_next

from providers.errors import PermanentProviderError

SAMPLE_WIDTH = 2  # 16-bit signed little-endian PCM everywhere


class OpusEncoder:
    """Cuts 16-bit mono PCM into fixed frames and encodes each as one Opus packet."""

    def __init__(self, sample_rate: int, frame_ms: int, complexity: int = 5) -> None:
        self.sample_rate = sample_rate
        self.frame_samples = sample_rate * frame_ms // 1000
        # Measured on 24 kHz espeak speech, 60 ms frames, this machine class: VOIP (SILK/hybrid)
        # costs 1.25 ms per frame at complexity 10 and 0.84 ms at 5; AUDIO at complexity 5 runs
        # CELT at 0.22 ms for about the same size (~178 bytes/frame). Downlink is synthetic speech
        # played on a small speaker, and every Opus decoder (the firmware's too) plays CELT.
        self._encoder = opuslib_next.Encoder(sample_rate, 1, opuslib_next.APPLICATION_AUDIO)
        self._encoder.complexity = complexity

    def split(self, pcm: bytes) -> list[bytes]:
        """``pcm`` cut into whole frames; the last one padded with silence."""
        frame_bytes = self.frame_samples * SAMPLE_WIDTH
        frames = [pcm[i : i + frame_bytes] for i in range(0, len(pcm), frame_bytes)]
        if frames and len(frames[-1]) < frame_bytes:
            frames[-1] = frames[-1] + b"\x00" * (frame_bytes - len(frames[-1]))
        return frames

    def encode_frames(self, frames: list[bytes]) -> list[bytes]:
        """Encode in order (the encoder is stateful). libopus runs without the GIL (ctypes), so
        calling this from a worker thread uses another core."""
        return [bytes(self._encoder.encode(frame, self.frame_samples)) for frame in frames]

    def encode_pcm(self, pcm: bytes) -> list[bytes]:
        return self.encode_frames(self.split(pcm))


class OpusDecoder:
    def __init__(self, sample_rate: int, frame_ms: int) -> None:
        self.sample_rate = sample_rate
        self.frame_samples = sample_rate * frame_ms // 1000
        self._decoder = opuslib_next.Decoder(sample_rate, 1)

    def decode(self, packet: bytes) -> bytes:
        try:
            return bytes(self._decoder.decode(packet, self.frame_samples))
        except opuslib_next.OpusError as exc:
            raise PermanentProviderError("opus", f"undecodable packet: {exc}") from exc


def resample(pcm: bytes, from_rate: int, to_rate: int) -> bytes:
    """Linear-interpolation resampling of 16-bit mono PCM (speech TTS output → Opus rate)."""
    if from_rate == to_rate or not pcm:
        return pcm
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
    duration = len(samples) / from_rate
    target_len = max(1, round(duration * to_rate))
    positions = np.linspace(0, len(samples) - 1, target_len)
    out = np.interp(positions, np.arange(len(samples)), samples)
    return bytes(np.clip(out, -32768, 32767).astype("<i2").tobytes())


ENCODE_THREAD_NICE = 10


def lower_thread_priority() -> None:
    """Thread initializer for the encode pool: bulk encoding has slack (the device buffers
    ``head_start`` frames and sentences are prepared ahead), the event loop thread does not —
    so under load the kernel should run the loop first. Linux threads have their own nice."""
    # Not Linux, or not permitted: run at normal priority.
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), ENCODE_THREAD_NICE)


def encode_pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, "opus-encode", initializer=lower_thread_priority)
