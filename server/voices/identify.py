"""Who is speaking: the best-matching enrolled member above a threshold, else unknown.

Unknown is the safe answer: the utterance stays the device's default person's, as on a device
with no enrolled voice, so nothing is attributed to a member the model is not sure of. A
member's score is their best voiceprint (one per enrolment condition) against the utterance.
The default threshold is set for few false accepts: on real recordings of distinct speakers
(``hearth bench voices``) 0.80 accepts about 2 % of unknown voices as a member.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory.schema import PersonId
from server.voices.store import Voice

THRESHOLD = 0.80


@dataclass(frozen=True, slots=True)
class Identification:
    member: PersonId | None  # None: unknown (the device's default person)
    speaker: str | None
    score: float  # the best member's score, whether or not it passed
    best: PersonId | None  # the best-scoring member, even below the threshold


def scores(embedding: np.ndarray, voices: Sequence[Voice]) -> list[float]:
    return [float(np.max(v.prints @ embedding)) for v in voices]


def identify(
    embedding: np.ndarray, voices: Sequence[Voice], threshold: float = THRESHOLD
) -> Identification:
    if not voices:
        return Identification(None, None, 0.0, None)
    each = scores(embedding, voices)
    top = int(np.argmax(each))
    best = voices[top]
    if each[top] < threshold:
        return Identification(None, None, each[top], best.member)
    return Identification(best.member, best.speaker, each[top], best.member)
