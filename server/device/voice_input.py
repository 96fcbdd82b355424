"""One session's uplink: Opus packets → 16 kHz PCM → VAD score → ``Listener`` events.

Thin glue around the sans-I/O ``Listener``: the Opus decoder always decodes to 16 kHz whatever
rate the device encoded at (Opus decoders may), with room for frames up to 120 ms, so a device
that declares one frame size and sends another is still understood. The VAD instance is borrowed
from the shared pool on the first ``listen start`` and returned when the session ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog

from config.settings import VadSettings
from memory.schema import PersonId
from providers.asr import ASR_SAMPLE_RATE, SpeechToText
from providers.errors import ProviderError
from providers.opus import OpusDecoder
from providers.vad import StreamingVad, VadPool
from server import metrics
from server.device import hotwords
from server.device.listening import Listener, ListenerEvent
from server.memory.household import HouseholdNames
from server.protocol.messages import ListenMode
from server.understanding.lookup import VOCABULARY

log = structlog.get_logger(__name__)

MAX_FRAME_MS = 120  # the longest Opus frame; the decoder returns what the packet holds


@dataclass
class VoiceServices:
    asr: SpeechToText
    vad_pool: VadPool
    vad: VadSettings
    names: HouseholdNames | None = None  # the household's names as the recogniser's hint
    hotwords: bool = True  # the household's words put back where they were heard (hotwords)


class UndecodableAudio(Exception):
    pass


class VoiceInput:
    def __init__(self, services: VoiceServices) -> None:
        self.services = services
        self.listener = Listener(services.vad)
        self._decoder = OpusDecoder(ASR_SAMPLE_RATE, MAX_FRAME_MS)
        self._vad: StreamingVad | None = None

    @property
    def listening(self) -> bool:
        return self.listener.listening

    @property
    def mode(self) -> ListenMode | None:
        return self.listener.mode

    async def start(self, mode: ListenMode) -> None:
        if self._vad is None:
            # First use costs ~0.2 s (model load) when the pool is empty: keep it off the loop.
            self._vad = await asyncio.get_running_loop().run_in_executor(
                None, self.services.vad_pool.acquire
            )
        self.listener.start(mode)

    def audio(self, opus: bytes, now: float) -> list[ListenerEvent]:
        """Raises ``UndecodableAudio`` for a packet libopus rejects (the session goes on)."""
        if not opus:
            raise UndecodableAudio("empty packet")
        try:
            pcm = self._decoder.decode(opus)
        except ProviderError as exc:
            raise UndecodableAudio(exc.message) from exc
        if self._vad is None or not pcm:
            return []
        return self.listener.feed(pcm, self._vad.frame_probability(pcm), now)

    def close(self) -> None:
        if self._vad is not None:
            self.services.vad_pool.release(self._vad)
            self._vad = None

    def names(self, person: PersonId) -> tuple[str, ...]:
        """The names of the person's household known now (read in the background)."""
        household = self.services.names
        return household.known(person) if household is not None else ()

    def words(self, person: PersonId) -> tuple[str, ...]:
        """The words the person's memories use, for the hotwords (read with the names)."""
        household = self.services.names
        return household.words(person) if household is not None else ()

    def phrases(self, person: PersonId) -> tuple[tuple[str, str], ...]:
        """The words with their neighbours in the person's memories, for the hotwords."""
        household = self.services.names
        return household.phrases(person) if household is not None else ()

    def refresh_names(self, person: PersonId) -> None:
        """A session opens: read the household's names again (in the background)."""
        if self.services.names is not None:
            self.services.names.refresh(person)

    async def transcribe(
        self,
        pcm: bytes,
        names: tuple[str, ...] = (),
        words: tuple[str, ...] = (),
        phrases: tuple[tuple[str, str], ...] = (),
    ) -> str:
        """``names`` are whisper's hint and hotwords; ``words`` and ``phrases`` hotwords only."""
        heard = await self.services.asr.transcribe(pcm, ASR_SAMPLE_RATE, names)
        if not self.services.hotwords:
            return heard
        return with_hotwords(heard, (*names, *words), phrases)

    @staticmethod
    def count_dropped(reason: str) -> None:
        metrics.AUDIO_DROPPED.labels(reason=reason).inc()


def corrected(
    heard: str, names: tuple[str, ...], phrases: tuple[tuple[str, str], ...] = ()
) -> tuple[str, list[tuple[str, str]]]:
    """``heard`` with the household's names and words (``names``), the safety vocabulary and
    the household's phrases put back where their sounds were heard (``server.device.hotwords``),
    and what was replaced."""
    return hotwords.correct(heard, (*names, *VOCABULARY), phrases)


def with_hotwords(
    heard: str, names: tuple[str, ...], phrases: tuple[tuple[str, str], ...] = ()
) -> str:
    """``corrected``, logged when it changed: what a device turn does."""
    fixed, replaced = corrected(heard, names, phrases)
    if replaced:
        log.info("asr.hotwords", heard=heard, replaced=replaced)
    return fixed
