"""What an enrolment refuses, and why (``Refusal.reason`` is machine-readable).

Per sentence: ``silence`` (nothing louder than a quiet room), ``not_speech`` (sound, but Silero
VAD hears no voice in most of it: music, a tap running), ``too_short`` (less than 1.5 s of
voice). Across the sentences: ``inconsistent`` (one sentence is not the voice of the others: a
second person read it), then ``two_voices`` (a 1.6 s window of one sentence is not the voice of
the other sentences: two people taking turns in it). Thresholds are calibrated on the real
recordings of ``hearth bench voices``: one speaker's sentences agree at ≥ 0.84 and another
speaker scores ≤ 0.81; one speaker's windows score ≥ 0.70 against their other sentences, and the
second voice of a turn-taking sentence ≤ 0.68. Two people speaking over each other for a whole
sentence is not reliably caught (the mixture still resembles each of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from providers.vad import StreamingVad
from server.voices.embedder import VoiceEmbedder

RATE = 16000
SENTENCES = 3
MIN_VOICE_S = 1.5
MIN_RMS = 0.003  # about -50 dBFS: below this a "sentence" is a quiet room
QUIET_BELOW_PEAK = 10 ** (-30 / 20)  # a window this far below the loudest is not speech
MIN_SPEECH_FRACTION = 0.4  # of the sentence's loud 32 ms windows
MIN_SENTENCE_AGREEMENT = 0.80  # a sentence against the mean of the others
MIN_WINDOW_AGREEMENT = 0.69  # each 1.6 s window of a sentence against the others' mean


class Refusal(Exception):
    """An enrolment that cannot make a voiceprint: ``reason``, the 0-based ``sentence`` it
    concerns (None for the whole enrolment) and, for ``same_voice`` and ``name_taken``, the
    ``member`` it concerns and their ``speaker`` name."""

    def __init__(
        self,
        reason: str,
        message: str,
        sentence: int | None = None,
        member: str | None = None,
        speaker: str | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.sentence = sentence
        self.member = member
        self.speaker = speaker


@dataclass(frozen=True, slots=True)
class Heard:
    voice_seconds: float
    speech_fraction: float


def hear(wav: np.ndarray) -> Heard:
    """How much of ``wav`` is voice, by Silero VAD over 32 ms windows."""
    vad = StreamingVad()
    size = vad.window
    pcm = (np.clip(wav, -1, 1) * 32767).astype("<i2")
    voiced = loud = 0
    for start in range(0, len(pcm) - size + 1, size):
        chunk = pcm[start : start + size]
        if float(np.sqrt(np.mean((chunk / 32768.0) ** 2))) >= MIN_RMS:
            loud += 1
        voiced += vad.frame_probability(chunk.tobytes()) >= 0.5
    return Heard(voiced * size / RATE, voiced / loud if loud else 0.0)


def trim_quiet(wav: np.ndarray) -> np.ndarray:
    """``wav`` without its quiet start and end (32 ms windows more than 30 dB below its loudest,
    one kept on each side). An utterance cut on a device keeps its pre-roll and the silence that
    ended it, a recording in a browser the moments before and after speaking: a 1.6 s window of
    that quiet is not the voice of the other sentences (``two_voices``)."""
    size = 512
    n = len(wav) // size
    if n == 0:
        return wav
    rms = np.sqrt(np.mean(wav[: n * size].reshape(n, size) ** 2, axis=1))
    loud = np.flatnonzero(rms >= max(MIN_RMS, float(np.max(rms)) * QUIET_BELOW_PEAK))
    if loud.size == 0:
        return wav  # all quiet: the silence check says so
    first, last = max(0, int(loud[0]) - 1), min(n, int(loud[-1]) + 2)
    return wav[first * size : last * size]


def check_sentence(wav: np.ndarray, embedder: VoiceEmbedder, n: int) -> np.ndarray:
    """The sentence's (windows, dim) unit window embeddings, or a Refusal saying what is wrong
    with it."""
    if wav.size == 0 or float(np.sqrt(np.mean(wav**2))) < MIN_RMS:
        raise Refusal("silence", f"sentence {n + 1} is silence", n)
    heard = hear(wav)
    if heard.speech_fraction < MIN_SPEECH_FRACTION:
        raise Refusal("not_speech", f"sentence {n + 1} is not a voice (music or noise?)", n)
    if heard.voice_seconds < MIN_VOICE_S:
        raise Refusal(
            "too_short", f"sentence {n + 1} has {heard.voice_seconds:.1f} s of voice, "
            f"at least {MIN_VOICE_S} s needed", n,
        )  # fmt: skip
    return embedder.partials(wav)


def unit_mean(rows: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    mean = np.mean(rows, axis=0)
    return np.asarray(mean / np.linalg.norm(mean), dtype=np.float32)


def check_agreement(sentences: Sequence[np.ndarray]) -> None:
    """Every sentence, and every window of it, is the voice of the other sentences
    (``sentences``: each sentence's window embeddings, from ``check_sentence``). The sentence
    blamed is the one that agrees least."""
    means = [unit_mean(p) for p in sentences]
    rests = [unit_mean([m for j, m in enumerate(means) if j != i]) for i in range(len(means))]
    whole = [float(m @ r) for m, r in zip(means, rests, strict=True)]
    worst = int(np.argmin(whole))
    if whole[worst] < MIN_SENTENCE_AGREEMENT:
        raise Refusal(
            "inconsistent", f"sentence {worst + 1} does not sound like the other sentences", worst
        )
    windows = [float(np.min(p @ r)) for p, r in zip(sentences, rests, strict=True)]
    worst = int(np.argmin(windows))
    if windows[worst] < MIN_WINDOW_AGREEMENT:
        raise Refusal("two_voices", f"sentence {worst + 1} sounds like more than one voice", worst)
