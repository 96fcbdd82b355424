"""Early transcription: ASR starts when the speaker pauses, not when the silence wait ends.

The listener ends an utterance after ``min_silence_ms`` of silence (500 ms: Chinese sentences
have shorter pauses inside them). Most of that wait is dead time before ASR can start. At the
first ``early_asr_ms`` of a pause the listener emits ``SpeechPaused`` with the audio so far;
``EarlyTranscripts`` starts transcribing it at once, padded with digital silence to the full
wait (a clipped ending changed 7 of 26 transcripts, both ways, in ``latency-early-1202g``).
When the utterance then ends with no more voice in it (the same voiced time, the paused audio
its prefix), that transcript is the utterance's: ASR overlapped the rest of the wait. When the
speaker went on, it is stale: cancelled if the recogniser has not begun it, its text dropped if
it has (the recogniser runs one job at a time, so a stale job costs at most one ASR pass, while
the person is still talking).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server import metrics
from server.device.listening import SpeechPaused, UtteranceEnded

Recognise = Callable[[bytes], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Heard:
    text: str
    done_at: float  # when the recogniser returned


@dataclass(slots=True)
class EarlyTranscript:
    pcm: bytes
    voiced_ms: int
    started_at: float
    task: asyncio.Task[Heard]

    def covers(self, utterance: UtteranceEnded) -> bool:
        """The utterance is this audio plus silence: nothing was said after the pause."""
        return utterance.voiced_ms == self.voiced_ms and utterance.pcm.startswith(self.pcm)


class EarlyTranscripts:
    """At most one early transcript per session: the one for the pause still open."""

    def __init__(self, clock: Callable[[], float], min_silence_ms: int) -> None:
        self._clock = clock
        self._min_silence_ms = min_silence_ms
        self._pending: EarlyTranscript | None = None

    async def hear(self, audio: bytes, recognise: Recognise) -> Heard:
        """``audio`` recognised, with when it was: what an utterance not heard early waits on."""
        text = await recognise(audio)
        return Heard(text, self._clock())

    def start(self, pause: SpeechPaused, recognise: Recognise) -> None:
        self.discard()  # a pause after more speech supersedes the last one
        task = asyncio.create_task(self.hear(pause.as_ended(self._min_silence_ms), recognise))
        task.add_done_callback(_retrieve)
        self._pending = EarlyTranscript(pause.pcm, pause.voiced_ms, self._clock(), task)

    def take(self, utterance: UtteranceEnded) -> EarlyTranscript | None:
        """The early transcript that heard all of ``utterance``, or None (the stale one is
        discarded either way: an utterance ends every pause before it)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return None
        if pending.covers(utterance):
            metrics.ASR_EARLY.labels(outcome="used").inc()
            return pending
        _cancel(pending)
        return None

    def discard(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            _cancel(pending)


def _cancel(pending: EarlyTranscript) -> None:
    metrics.ASR_EARLY.labels(outcome="stale").inc()
    pending.task.cancel()


def _retrieve(task: asyncio.Task[Heard]) -> None:
    """A stale transcript's failure is nobody's: read it so asyncio does not report it."""
    if not task.cancelled():
        with contextlib.suppress(Exception):
            task.exception()
