"""What an enrolment refuses, and why (``Refusal.reason`` is machine-readable).

Per sentence: ``silence`` (nothing louder than a quiet room), ``not_speech`` (sound, but Silero
VAD hears no voice in most of it: music, a tap running), ``too_short`` (less than 1.5 s of
voice), ``two_voices`` (its 1.6 s windows disagree about who is speaking: two people taking
turns). Across the sentences: ``inconsistent`` (one sentence is not the voice of the others: a
second person read it, or two spoke over each other). Thresholds are calibrated on real
recordings (``hearth bench voices``): one speaker's sentences agree at ≥ 0.84, another speaker
scores ≤ 0.81 against them.
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
MIN_SPEECH_FRACTION = 0.4  # of the sentence's loud 32 ms windows
MIN_WINDOW_AGREEMENT = 0.45  # two 1.6 s windows of one voice score above this
MIN_SENTENCE_AGREEMENT = 0.80  # a sentence against the mean of the others


class Refusal(Exception):
    """An enrolment that cannot make a voiceprint: ``reason``, the 0-based ``sentence`` it
    concerns (None for the whole enrolment) and, for ``same_voice``, the ``member`` it
    matches."""

    def __init__(
        self, reason: str, message: str, sentence: int | None = None, member: str | None = None
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.sentence = sentence
        self.member = member


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


def check_sentence(wav: np.ndarray, embedder: VoiceEmbedder, n: int) -> np.ndarray:
    """The sentence's unit embedding, or a Refusal saying what is wrong with it."""
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
    partials = embedder.partials(wav)
    agreement = partials @ partials.T
    if len(partials) > 1 and float(agreement.min()) < MIN_WINDOW_AGREEMENT:
        raise Refusal("two_voices", f"sentence {n + 1} sounds like more than one voice", n)
    mean = partials.mean(axis=0)
    return np.asarray(mean / np.linalg.norm(mean), dtype=np.float32)


def check_agreement(embeddings: Sequence[np.ndarray]) -> None:
    """Every sentence is the voice of the others."""
    for i, e in enumerate(embeddings):
        rest = np.mean([x for j, x in enumerate(embeddings) if j != i], axis=0)
        if float(e @ rest) / float(np.linalg.norm(rest)) < MIN_SENTENCE_AGREEMENT:
            raise Refusal(
                "inconsistent", f"sentence {i + 1} does not sound like the other sentences", i
            )
