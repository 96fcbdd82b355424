"""``Listener``: where an utterance starts and ends, as a sans-I/O state machine.

Fed one decoded uplink frame at a time with its voice probability (from the VAD) and the time;
returns events. No sockets, no models, no clock: every rule is testable with scripted scores.

- ``auto`` / ``realtime``: speech starts at the first voiced frame (the ``pre_roll_ms`` before it
  are kept so the first syllable survives) and ends after ``min_silence_ms`` of silence; voiced
  time under ``min_speech_ms`` (a cough, a click) is dropped without a turn.
- ``manual`` (push-to-talk): everything between ``listen start`` and ``listen stop`` is the
  utterance; a press with no voice in it makes no turn.
- A stream that never goes silent is cut at ``max_utterance_s`` and the next one starts at once.
- After a wake word (``listen detect``), what was buffered is the wake phrase, not a request: it is
  discarded and ``wake_suppress_ms`` more audio is ignored.
- ``SpeechStarted`` fires once per utterance after ``barge_in_ms`` of voice: in realtime mode,
  while we are talking, that is a barge-in.
- ``SpeechPaused`` fires once per pause, after ``early_asr_ms`` of silence (auto / realtime): the
  audio so far, so ASR can start before the utterance is declared over
  (``server.device.early_asr``).
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass

from config.settings import VadSettings
from server.protocol.messages import ListenMode

SAMPLE_RATE = 16000
BYTES_PER_MS = SAMPLE_RATE * 2 // 1000
SILENCE_MARGIN = 0.15  # hysteresis: silence is below threshold - margin (Silero's own default)


class EndReason(enum.Enum):
    SILENCE = "silence"
    LISTEN_STOP = "listen_stop"
    MAX_LENGTH = "max_length"
    DISCONNECT = "disconnect"


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    at: float


@dataclass(frozen=True, slots=True)
class UtteranceEnded:
    pcm: bytes  # 16-bit mono 16 kHz, pre-roll included
    voiced_ms: int
    reason: EndReason
    speech_ended_at: float  # time of the last voiced frame (for end-of-speech → stt latency)

    @property
    def duration_s(self) -> float:
        return len(self.pcm) / (BYTES_PER_MS * 1000)


@dataclass(frozen=True, slots=True)
class SpeechPaused:
    pcm: bytes  # the utterance so far, pre-roll and the pause's first silence included
    voiced_ms: int
    silence_ms: int  # how much of the pause ``pcm`` holds

    def as_ended(self, min_silence_ms: int) -> bytes:
        """``pcm`` with the rest of the silence wait as digital silence: what the utterance
        will be if nothing more is said (whisper hears a clipped ending differently)."""
        return self.pcm + b"\0" * (BYTES_PER_MS * max(0, min_silence_ms - self.silence_ms))


ListenerEvent = SpeechStarted | SpeechPaused | UtteranceEnded


def frame_ms(pcm: bytes) -> int:
    return len(pcm) // BYTES_PER_MS


class Listener:
    def __init__(self, settings: VadSettings) -> None:
        self.settings = settings
        self.mode: ListenMode | None = None
        self._pre_roll: deque[bytes] = deque()
        self._pre_roll_ms = 0
        self._speech: list[bytes] = []
        self._speech_ms = 0
        self._voiced_ms = 0
        self._silence_ms = 0
        self._in_speech = False
        self._started_sent = False
        self._last_voiced_at = 0.0
        self._paused_sent = False
        self._suppress_ms = 0

    @property
    def listening(self) -> bool:
        return self.mode is not None

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    # ---- control ------------------------------------------------------------------------------

    def start(self, mode: ListenMode) -> None:
        """``listen start``. Re-sent after every reply; an utterance in progress carries on."""
        if mode != self.mode:
            self._reset()
        self.mode = mode

    def stop(self, now: float) -> list[ListenerEvent]:
        """``listen stop``: push-to-talk released (or the device left listening)."""
        events = self._finish(EndReason.LISTEN_STOP, now)
        self.mode = None
        self._reset()
        return events

    def detected(self, wake_word: bool) -> None:
        """``listen detect``: the audio so far was the wake phrase (or is superseded by typed
        text); after a real wake word, the phrase's tail is ignored too."""
        self._reset()
        self._suppress_ms = self.settings.wake_suppress_ms if wake_word else 0

    def flush(self, now: float) -> list[ListenerEvent]:
        """The device went away: whatever speech is buffered is a (partial) utterance."""
        events = self._finish(EndReason.DISCONNECT, now)
        self.mode = None
        self._reset()
        return events

    # ---- audio --------------------------------------------------------------------------------

    def feed(self, pcm: bytes, voice_probability: float, now: float) -> list[ListenerEvent]:
        if self.mode is None:
            return []
        ms = frame_ms(pcm)
        if self._suppress_ms > 0:  # counted in audio, not wall time: devices send in bursts
            self._suppress_ms -= ms
            return []
        voiced = voice_probability >= self.settings.threshold
        silent = voice_probability < self.settings.threshold - SILENCE_MARGIN
        if self.mode == "manual":
            return self._feed_manual(pcm, ms, voiced, now)
        if not self._in_speech:
            if not voiced:
                self._remember(pcm, ms)
                return []
            self._in_speech = True
            self._speech = list(self._pre_roll)
            self._speech_ms = self._pre_roll_ms
            self._pre_roll.clear()
            self._pre_roll_ms = 0
        self._append(pcm, ms)
        events: list[ListenerEvent] = []
        if voiced:
            self._voiced_ms += ms
            self._silence_ms = 0
            self._last_voiced_at = now
            self._paused_sent = False
            events += self._maybe_started(now)
        elif silent:
            self._silence_ms += ms
            events += self._maybe_paused()
        if self._silence_ms >= self.settings.min_silence_ms:
            events += self._finish(EndReason.SILENCE, now)
            self._reset()
        elif self._speech_ms >= self.settings.max_utterance_s * 1000:
            events += self._finish(EndReason.MAX_LENGTH, now)
            self._reset()
        return events

    def _feed_manual(self, pcm: bytes, ms: int, voiced: bool, now: float) -> list[ListenerEvent]:
        self._in_speech = True
        self._append(pcm, ms)
        events: list[ListenerEvent] = []
        if voiced:
            self._voiced_ms += ms
            self._last_voiced_at = now
            events += self._maybe_started(now)
        if self._speech_ms >= self.settings.max_utterance_s * 1000:
            events += self._finish(EndReason.MAX_LENGTH, now)
            self._reset()
        return events

    # ---- internals ----------------------------------------------------------------------------

    def _maybe_started(self, now: float) -> list[ListenerEvent]:
        if self._started_sent or self._voiced_ms < self.settings.barge_in_ms:
            return []
        self._started_sent = True
        return [SpeechStarted(now)]

    def _maybe_paused(self) -> list[ListenerEvent]:
        early = self.settings.early_asr_ms
        if (
            self._paused_sent
            or not 0 < early <= self._silence_ms < self.settings.min_silence_ms
            or self._voiced_ms < max(self.settings.min_speech_ms, 1)
        ):
            return []
        self._paused_sent = True
        return [SpeechPaused(b"".join(self._speech), self._voiced_ms, self._silence_ms)]

    def _remember(self, pcm: bytes, ms: int) -> None:
        self._pre_roll.append(pcm)
        self._pre_roll_ms += ms
        while self._pre_roll and self._pre_roll_ms - frame_ms(self._pre_roll[0]) >= (
            self.settings.pre_roll_ms
        ):
            self._pre_roll_ms -= frame_ms(self._pre_roll.popleft())

    def _append(self, pcm: bytes, ms: int) -> None:
        self._speech.append(pcm)
        self._speech_ms += ms

    def _finish(self, reason: EndReason, now: float) -> list[ListenerEvent]:
        if not self._in_speech or self._voiced_ms < max(self.settings.min_speech_ms, 1):
            return []
        return [
            UtteranceEnded(
                pcm=b"".join(self._speech),
                voiced_ms=self._voiced_ms,
                reason=reason,
                speech_ended_at=self._last_voiced_at or now,
            )
        ]

    def _reset(self) -> None:
        self._pre_roll.clear()
        self._pre_roll_ms = 0
        self._speech = []
        self._speech_ms = 0
        self._voiced_ms = 0
        self._silence_ms = 0
        self._in_speech = False
        self._started_sent = False
        self._last_voiced_at = 0.0
        self._paused_sent = False
