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
from server.tools import Sharing
from server.voices.store import Voice

THRESHOLD = 0.80


@dataclass(frozen=True, slots=True)
class Identification:
    member: PersonId | None  # None: unknown (the device's default person)
    speaker: str | None
    score: float  # the best member's score, whether or not it passed
    best: PersonId | None  # the best-scoring member, even below the threshold
    # the household's other members whose constraints the identified member hears (not the
    # private ones): (member, speaker name)
    others: tuple[tuple[PersonId, str], ...] = ()

    def sharing(self, household: PersonId, owner: str) -> tuple[Sharing, ...]:
        """The stores the identified member's turn reads beside their own: the household's
        (the device's person, ``owner`` its 「我」), every group; each shared member's, their
        constraints. () when nobody was identified: the device's person reads its own store."""
        if self.member is None:
            return ()
        return (
            Sharing(household, owner, whole=True),
            *(Sharing(member, speaker) for member, speaker in self.others),
        )


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
    others = tuple((v.member, v.speaker) for v in voices if v is not best and not v.private)
    return Identification(best.member, best.speaker, each[top], best.member, others)
