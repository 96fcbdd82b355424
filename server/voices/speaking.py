"""Who is speaking on a device, per utterance: the household's enrolled voices against the
audio the VAD cut, run beside ASR.

A household with no enrolled voice costs one Redis read and nothing else (no model is loaded),
and its device behaves as it always did. The encoder is loaded on first need, once per process
(``embedder.shared_embedder``); missing weights switch identification off with one error in the
log rather than failing turns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError

from server.voices.embedder import VoiceEmbedder, shared_embedder
from server.voices.enrol import enrol_member
from server.voices.identify import Identification, identify
from server.voices.members import member_for
from server.voices.store import Voice, VoiceStore
from server.voices.weights import WeightsError

log = structlog.get_logger(__name__)
# a long utterance is identified on its first seconds: the cost stays that of a 3–4 s utterance
MAX_AUDIO_BYTES = 4 * 16000 * 2


class VoicesUnavailable(Exception):
    """Voices cannot be enrolled in this process (no encoder weights)."""


class SpeakerIdentifier:
    def __init__(self, redis: Redis, weights: Path, threshold: float) -> None:
        self.store = VoiceStore(redis)
        self.weights = weights
        self.threshold = threshold
        self._embedder: VoiceEmbedder | None = None
        self._broken = False

    async def identify(self, household: str, pcm: bytes) -> Identification | None:
        """The member speaking in ``pcm`` (16 kHz 16-bit mono) — ``member`` None when unsure —
        or None when the household has no enrolled voice or voices are unavailable."""
        try:
            voices = await self.store.voices(household)
        except (RedisError, OSError) as exc:
            log.error("voices.unavailable", household=household, error=str(exc))
            return None
        if not voices:
            return None
        embedder = await self._load()
        if embedder is None:
            return None
        embedding = await asyncio.to_thread(embedder.embed, pcm[:MAX_AUDIO_BYTES])
        found = identify(embedding, voices, self.threshold)
        log.info("voice.speaker", household=household, member=found.member,
                 score=round(found.score, 3), best=found.best)  # fmt: skip
        return found

    async def enrol(
        self, household: str, speaker: str, sentences: Sequence[bytes]
    ) -> tuple[Voice, bool]:
        """Enrol ``speaker`` in ``household`` by voice on a device, and whether they were
        enrolled before: a name already enrolled is re-enrolled only by its own voice
        (``Refusal`` ``name_taken``), a new name becomes a member of this household
        (``members.member_for``). Raises ``Refusal``, ``HouseholdFull``, ``VoicesUnavailable``
        and Redis's errors."""
        embedder = await self._load()
        if embedder is None:
            raise VoicesUnavailable("the voice encoder is not installed")
        enrolled = await self.store.voices(household)
        member = member_for(household, speaker, enrolled)
        voice = await enrol_member(self.store.redis, embedder, household, member, speaker,
                                   sentences, own_voice_only=True)  # fmt: skip
        return voice, any(v.member == member for v in enrolled)

    async def _load(self) -> VoiceEmbedder | None:
        if self._embedder is None and not self._broken:
            try:
                self._embedder = await asyncio.to_thread(shared_embedder, self.weights)
            except WeightsError as exc:
                self._broken = True
                log.error("voices.no_model", error=str(exc))
        return self._embedder
