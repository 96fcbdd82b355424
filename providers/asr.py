"""Speech to text: faster-whisper ``base`` offline (default) and OpenAI-compatible
``/audio/transcriptions`` for production.

Both take one finished utterance (16-bit mono PCM) and return its text, already cleaned: whisper
writes traditional characters for Mandarin about half the time (converted with OpenCC ``t2s``) and,
on unclear audio, loops a syllable until its token budget runs out (the loop is cut). An
utterance that is noise, or that whisper itself calls non-speech, returns ``""``: no turn.
"""

from __future__ import annotations

import asyncio
import io
import re
import wave
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import openai
import structlog
from opencc import OpenCC

from config.settings import AsrSettings
from providers.errors import PermanentProviderError, TransientProviderError
from providers.model_files import install_whisper

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

log = structlog.get_logger(__name__)

ASR_SAMPLE_RATE = 16000
# A unit of 1-8 characters repeated 6+ times in a row: whisper's decoding loop, not speech.
_LOOP = re.compile(r"(.{1,8}?)\1{5,}")
_T2S = OpenCC("t2s")


class SpeechToText(Protocol):
    name: str

    async def transcribe(self, pcm: bytes, sample_rate: int) -> str: ...


def clean_transcript(text: str, *, simplified: bool) -> str:
    """One line of text a person would have said: loops cut to one repetition, traditional
    characters converted, whitespace collapsed."""
    text = _LOOP.sub(r"\1", text)
    if simplified:
        text = _T2S.convert(text)
    return " ".join(text.split())


def token_budget(seconds: float) -> int:
    """Generous for speech (Mandarin is ~4-6 characters a second, ~1.3 tokens each) yet small
    enough that a decoding loop ends in well under a second."""
    return int(16 + 12 * seconds)


class WhisperASR:
    """faster-whisper (CTranslate2, int8) on one dedicated thread: utterances queue in order and
    the event loop never waits on the model."""

    name = "whisper"

    def __init__(self, settings: AsrSettings, model_dir: Path) -> None:
        self._settings = settings
        self._model_dir = model_dir
        self._model: WhisperModel | None = None
        self._pool = ThreadPoolExecutor(1, "asr")

    def _load(self) -> WhisperModel:
        if self._model is None:
            from faster_whisper import WhisperModel  # heavy import, only when ASR is used

            install_whisper(self._model_dir)
            self._model = WhisperModel(
                str(self._model_dir),
                device="cpu",
                compute_type="int8",
                cpu_threads=self._settings.threads,
                local_files_only=True,
            )
        return self._model

    async def warm(self) -> None:
        """Load the model now (0.6 s) rather than on the first spoken turn."""
        await asyncio.get_running_loop().run_in_executor(self._pool, self._load)

    def transcribe_sync(self, pcm: bytes, sample_rate: int) -> str:
        if sample_rate != ASR_SAMPLE_RATE:
            raise PermanentProviderError(self.name, f"expected 16 kHz PCM, got {sample_rate} Hz")
        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        if audio.size < ASR_SAMPLE_RATE // 10:
            return ""
        try:
            segments, _info = self._load().transcribe(
                audio,
                language=self._settings.language,
                beam_size=self._settings.beam_size,
                temperature=0.0,  # no fallback re-decoding: bounded time, loops are cut instead
                condition_on_previous_text=False,
                without_timestamps=True,
                max_new_tokens=token_budget(audio.size / ASR_SAMPLE_RATE),
                vad_filter=False,  # our VAD already cut the utterance
                no_speech_threshold=self._settings.no_speech_threshold,
            )
            text = "".join(segment.text for segment in segments)
        except (RuntimeError, ValueError, OSError) as exc:
            raise PermanentProviderError(self.name, str(exc)) from exc
        return clean_transcript(text, simplified=self._settings.simplified)

    async def transcribe(self, pcm: bytes, sample_rate: int) -> str:
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._pool, self.transcribe_sync, pcm, sample_rate)
        try:
            async with asyncio.timeout(self._settings.timeout_s):
                return await work
        except TimeoutError as exc:
            raise TransientProviderError(self.name, "transcription timed out") from exc


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm)
    return out.getvalue()


class OpenAITranscriptionASR:
    """Any OpenAI-compatible ``/audio/transcriptions`` endpoint (whisper.cpp server, vLLM,
    FunASR/SenseVoice gateways, OpenAI itself); the utterance is uploaded as a WAV file."""

    name = "openai-asr"

    def __init__(self, settings: AsrSettings) -> None:
        if not settings.base_url:
            raise PermanentProviderError(self.name, "asr.base_url is required for provider openai")
        self._settings = settings
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() or "none",
            timeout=settings.timeout_s,
            max_retries=1,
        )

    async def warm(self) -> None:
        return None

    async def transcribe(self, pcm: bytes, sample_rate: int) -> str:
        if len(pcm) < sample_rate // 10 * 2:
            return ""
        try:
            text = await self._client.audio.transcriptions.create(
                model=self._settings.model,
                file=("utterance.wav", wav_bytes(pcm, sample_rate), "audio/wav"),
                language=self._settings.language,
                response_format="text",
            )
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientProviderError(self.name, str(exc)) from exc
        except openai.APIStatusError as exc:
            kind = TransientProviderError if exc.status_code >= 500 else PermanentProviderError
            raise kind(self.name, f"HTTP {exc.status_code}") from exc
        if not isinstance(text, str):  # a server that ignored response_format=text
            text = getattr(text, "text", "")
            if not isinstance(text, str):
                raise PermanentProviderError(self.name, "response carries no text")
        return clean_transcript(text, simplified=self._settings.simplified)


class WarmableASR(SpeechToText, Protocol):
    async def warm(self) -> None: ...


def build_asr(settings: AsrSettings, model_dir: Path) -> WarmableASR:
    if settings.provider == "openai":
        return OpenAITranscriptionASR(settings)
    return WhisperASR(settings, model_dir)
