"""Real-time pacing of downlink audio (device-protocol.md §1.6), as pure arithmetic.

The device buffers what we send. We keep its buffer about ``head_start`` frames deep: the first
frames of a turn go out at once, then frames follow in real time, topped up ``batch`` at a time
(waking once per two frames halves timer wake-ups at hundreds of devices while the device still
holds at least ``head_start - batch`` frames). After an underrun (slow TTS) the head start is
rebuilt. Sending faster than real time makes devices stutter or overflow.
"""

from __future__ import annotations


class AudioPacer:
    def __init__(self, frame_ms: int, head_start_frames: int, tail_ms: int, batch: int = 2) -> None:
        self.frame_s = frame_ms / 1000
        self.lead_s = head_start_frames * self.frame_s
        self.refill_s = min(batch, max(1, head_start_frames)) * self.frame_s
        self.tail_s = tail_ms / 1000
        self._played_until: float | None = None  # when the device finishes what it has

    def delay_before_next(self, now: float) -> float:
        """Seconds to wait before sending the next frame."""
        if self._played_until is None:
            return 0.0
        ahead = self._played_until - now
        if ahead < self.lead_s:  # room in the device buffer: keep filling
            return 0.0
        return ahead - self.lead_s + self.refill_s

    def frame_sent(self, now: float) -> None:
        start = now if self._played_until is None else max(self._played_until, now)
        self._played_until = start + self.frame_s

    def delay_until_played(self, now: float) -> float:
        """Seconds until everything sent has played, plus the tail before ``tts stop``."""
        if self._played_until is None:
            return 0.0
        return max(0.0, self._played_until - now) + self.tail_s

    def reset(self) -> None:
        self._played_until = None
