"""Opus codec (opuslib-next-bundled ships libopus) and the PCM helpers around it."""

from __future__ import annotations

import numpy as np
import opuslib_next

from providers.errors import PermanentProviderError

SAMPLE_WIDTH = 2  # 16-bit signed little-endian PCM everywhere


class OpusEncoder:
    """Cuts 16-bit mono PCM into fixed frames and encodes each as one Opus packet."""

    def __init__(self, sample_rate: int, frame_ms: int) -> None:
        self.sample_rate = sample_rate
        self.frame_samples = sample_rate * frame_ms // 1000
        self._encoder = opuslib_next.Encoder(sample_rate, 1, opuslib_next.APPLICATION_VOIP)

    def encode_pcm(self, pcm: bytes) -> list[bytes]:
        """All frames of ``pcm``; the last one is padded with silence."""
        frame_bytes = self.frame_samples * SAMPLE_WIDTH
        packets: list[bytes] = []
        for start in range(0, len(pcm), frame_bytes):
            chunk = pcm[start : start + frame_bytes]
            if len(chunk) < frame_bytes:
                chunk = chunk + b"\x00" * (frame_bytes - len(chunk))
            packets.append(bytes(self._encoder.encode(chunk, self.frame_samples)))
        return packets


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
